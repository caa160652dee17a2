//! A scoped model (`scope = "tenant"`) with its inserts spread uniformly over a number of
//! tenants: what the cost of a counter per tenant does as tenants multiply, and the memory the
//! process holds at the end.

use super::models::Scoped;
use super::COLL;
use crate::measure::{drive, rss_bytes, BoxFuture, Measured, Result, Run};

/// `insert_with_id` of the scoped model, over `TENANTS` tenants.
pub fn insert_scoped<const TENANTS: u64>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Scoped>(COLL);
    Box::pin(async move {
        // The unique index `{ tenant: 1, number: 1 }` its configuration needs.
        Scoped::ensure_indexes(&coll).await?;
        let inserts = coll.clone();
        let mut measured = drive(run.tasks, run.calls_per_task, move |n| {
            let coll = inserts.clone();
            async move {
                let mut doc = Scoped::sample(n, TENANTS);
                doc.insert_with_id(&coll).await?;
                Ok(1)
            }
        })
        .await?;
        measured.waits = Some(Scoped::sequence(&coll).stats().waits);
        measured.rss_bytes = rss_bytes();
        Ok(measured)
    })
}
