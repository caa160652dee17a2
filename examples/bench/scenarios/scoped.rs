//! A scoped model (`scope = "tenant"`) with its inserts spread uniformly over a number of
//! tenants: what the cost of a counter per tenant does as tenants multiply, and the memory the
//! process holds at the end.

use mongo_sequence::SequentialId;
use serde::Serialize;

use super::models::TenantSample;
use super::COLL;
use crate::measure::{drive, rss_bytes, BoxFuture, Measured, Result, Run};

/// `insert_with_id` of the scoped model `M`, over `TENANTS` tenants.
pub fn insert_scoped<M, const TENANTS: u64>(run: Run) -> BoxFuture<Result<Measured>>
where
    M: SequentialId + TenantSample + Serialize + Send + Sync + 'static,
{
    let coll = run.db.collection::<M>(COLL);
    Box::pin(async move {
        // The unique index `{ tenant: 1, number: 1 }` its configuration needs.
        M::ensure_indexes(&coll).await?;
        let inserts = coll.clone();
        let mut measured = drive(run.tasks, run.calls_per_task, move |n| {
            let coll = inserts.clone();
            async move {
                let mut doc = M::sample(n, TENANTS);
                doc.insert_with_id(&coll).await?;
                Ok(1)
            }
        })
        .await?;
        measured.waits = Some(M::sequence(&coll).stats().waits);
        measured.rss_bytes = rss_bytes();
        Ok(measured)
    })
}
