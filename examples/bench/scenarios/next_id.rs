//! IDs allocated without an insert: `next_id`, from the sequence's cache, and the floor it is
//! measured against, `atomic_next`.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use mongo_sequence::SequentialId;

use super::models::Sample;
use super::COLL;
use crate::measure::{drive_holding, with_waits, BoxFuture, Measured, Result, Run};

/// `M::next_id(&coll).await`, each task with its collection handle.
pub fn next_id<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<M>(COLL);
    let handle = coll.clone();
    let measured = drive_holding(
        run.tasks,
        run.calls_per_task,
        move || handle.clone(),
        |coll, _| async move {
            <M as SequentialId>::next_id(&coll).await?;
            Ok((coll, 1))
        },
    );
    with_waits(coll, measured)
}

/// An ID from an `AtomicI64::fetch_add` shared by every task, called in the shape of `next_id`
/// (each task with its handle of the shared counter, an awaited call that returns a `Result`):
/// what handing out a value of a range held in memory costs at the least, the hardware's limit
/// in this harness.
pub fn atomic_next(run: Run) -> BoxFuture<Result<Measured>> {
    let counter = Arc::new(AtomicI64::new(1));
    drive_holding(
        run.tasks,
        run.calls_per_task,
        move || counter.clone(),
        |counter, _| async move {
            std::hint::black_box(fetch_next(&counter).await?);
            Ok((counter, 1))
        },
    )
}

async fn fetch_next(counter: &AtomicI64) -> Result<i64> {
    Ok(counter.fetch_add(1, Ordering::Relaxed))
}
