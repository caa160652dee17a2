//! `insert_many` calls of [`MANY`] documents: plain (ObjectIds), and `insert_many_with_ids`.

use mongo_sequence::SequentialId;

use super::models::{Plain, Sample};
use super::COLL;
use crate::measure::{drive, BoxFuture, Measured, Result, Run, MANY};

pub fn plain_insert_many(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Plain>(COLL);
    drive(run.tasks, run.calls_per_task, move |n| {
        let coll = coll.clone();
        async move {
            let docs: Vec<Plain> = (0..MANY).map(|k| Plain::sample(n * MANY + k)).collect();
            coll.insert_many(docs).await?;
            Ok(MANY)
        }
    })
}

pub fn insert_many_with_ids<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<M>(COLL);
    drive(run.tasks, run.calls_per_task, move |n| {
        let coll = coll.clone();
        async move {
            let mut docs: Vec<M> = (0..MANY).map(|k| M::sample(n * MANY + k)).collect();
            <M as SequentialId>::insert_many_with_ids(&mut docs, &coll).await?;
            Ok(MANY)
        }
    })
}
