//! Gapless inserts, which take their number inside their transaction, from one process.

use super::inserts::insert_one_each;
use super::models::Gapless;
use super::COLL;
use crate::measure::{BoxFuture, Measured, Result, Run};

/// Gapless inserts take their number inside their transaction, from no cache: no waits to count.
pub fn insert_gapless(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Gapless>(COLL);
    insert_one_each(coll, run.tasks, run.calls_per_task, 0)
}
