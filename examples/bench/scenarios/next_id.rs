//! IDs allocated without an insert: `next_id`, from the sequence's cache.

use mongo_sequence::SequentialId;

use super::models::Sample;
use super::COLL;
use crate::measure::{drive, with_waits, BoxFuture, Measured, Result, Run};

pub fn next_id<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<M>(COLL);
    let ids = coll.clone();
    let measured = drive(run.tasks, run.calls_per_task, move |_| {
        let coll = ids.clone();
        async move {
            <M as SequentialId>::next_id(&coll).await?;
            Ok(1)
        }
    });
    with_waits(coll, measured)
}
