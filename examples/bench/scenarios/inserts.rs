//! Single-document inserts: plain (an ObjectId), with the naive counter of the MongoDB
//! documentation, with a counter acknowledged by the primary alone, and `insert_with_id` (every
//! cached sequence: batches, the proxy, adaptive, ranges).

use mongo_sequence::{Sequence, SequenceOptions, SequentialId};
use mongodb::bson::doc;
use mongodb::options::{Acknowledgment, ReturnDocument, WriteConcern};
use mongodb::Collection;

use super::models::{Naive, Plain, Sample};
use super::COLL;
use crate::measure::{drive, with_waits, BoxFuture, Measured, Result, Run};

pub fn plain_insert_one(run: Run) -> BoxFuture<Result<Measured>> {
    plain_one_each(run.db.collection(COLL), run.tasks, run.calls_per_task, 0)
}

/// `calls_per_task` calls of the driver's `insert_one` in each of `tasks` tasks, a plain
/// document each: the `n`-th call of the run inserts the sample `first + n`.
pub fn plain_one_each(
    coll: Collection<Plain>,
    tasks: usize,
    calls_per_task: u64,
    first: u64,
) -> BoxFuture<Result<Measured>> {
    one_each(coll, tasks, calls_per_task, first, |coll, doc| async move {
        coll.insert_one(doc).await?;
        Ok(())
    })
}

/// `calls_per_task` calls of `insert` in each of `tasks` tasks, a sample of `M` each: the
/// `n`-th call of the run inserts the sample `first + n`.
fn one_each<M, F, Fut>(
    coll: Collection<M>,
    tasks: usize,
    calls_per_task: u64,
    first: u64,
    insert: F,
) -> BoxFuture<Result<Measured>>
where
    M: Sample + Send + Sync + 'static,
    F: Fn(Collection<M>, M) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<()>> + Send + 'static,
{
    drive(tasks, calls_per_task, move |n| {
        let fut = insert(coll.clone(), M::sample(first + n));
        async move { fut.await.map(|()| 1) }
    })
}

/// The recipe of the MongoDB documentation: `$inc` the counter by one, then insert.
pub fn naive_counter_insert(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Naive>(COLL);
    let counters = run.db.collection::<mongodb::bson::Document>("counters");
    drive(run.tasks, run.calls_per_task, move |n| {
        let (coll, counters) = (coll.clone(), counters.clone());
        async move {
            let counter = counters
                .find_one_and_update(doc! { "_id": "bench_naive" }, doc! { "$inc": { "seq": 1 } })
                .upsert(true)
                .return_document(ReturnDocument::After)
                .await?
                .ok_or("the counter upsert returned no document")?;
            let mut doc = Naive::sample(n);
            doc.id = Some(
                counter
                    .get_i64("seq")
                    .or_else(|_| counter.get_i32("seq").map(i64::from))?,
            );
            coll.insert_one(doc).await?;
            Ok(1)
        }
    })
}

/// Batch 1 as `insert_with_id` does it, except that the counter updates are acknowledged by the
/// primary alone (`w: 1`) instead of a majority: not a setting to use (a failover can roll such
/// an update back, and its values be handed out again), but what it gains is what waiting for
/// a durable counter update costs batch 1.
pub fn counter_w1_insert(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Naive>(COLL);
    let options = SequenceOptions::builder("bench_w1")
        .write_concern(Some(
            WriteConcern::builder().w(Acknowledgment::Nodes(1)).build(),
        ))
        .build();
    let seq = match Sequence::new(&run.db, options) {
        Ok(seq) => seq,
        Err(e) => return Box::pin(async move { Err(e.into()) }),
    };
    drive(run.tasks, run.calls_per_task, move |n| {
        let (coll, seq) = (coll.clone(), seq.clone());
        async move {
            let mut doc = Naive::sample(n);
            doc.id = Some(seq.next().await?);
            coll.insert_one(doc).await?;
            Ok(1)
        }
    })
}

pub fn insert_with_id<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<M>(COLL);
    let measured = insert_one_each(coll.clone(), run.tasks, run.calls_per_task, 0);
    with_waits(coll, measured)
}

/// `calls_per_task` calls of `insert_with_id` in each of `tasks` tasks, a document each: the
/// `n`-th call of the run inserts the sample `first + n`.
pub fn insert_one_each<M: SequentialId + Sample>(
    coll: Collection<M>,
    tasks: usize,
    calls_per_task: u64,
    first: u64,
) -> BoxFuture<Result<Measured>> {
    one_each(
        coll,
        tasks,
        calls_per_task,
        first,
        |coll, mut doc| async move {
            <M as SequentialId>::insert_with_id(&mut doc, &coll).await?;
            Ok(())
        },
    )
}
