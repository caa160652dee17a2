//! This crate's side of each row: the derived models that share the foreign library's counter
//! (at `batch = 25` and at `batch = 1`), the model a team moves to when it leaves the foreign
//! convention (a counter of this crate's own, set by `sync_counters`), and what a writer and
//! the migration do with them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mongo_sequence::observability::Stats;
use mongo_sequence::SequentialId;
use mongodb::{Collection, Database};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::row::Row;

/// A model of the suite: a document of an ID and the writer's tag.
pub trait Model: SequentialId + DeserializeOwned + Clone {
    /// A document to insert, its ID not yet set.
    fn new(by: &str) -> Self;
}

macro_rules! models {
    ($(
        $row:ident => $collection:literal, $id:ty, $blank:expr,
        shared($($shared:tt)*), moved($($moved:tt)*),
        $batch25:ident, $batch1:ident, $moved_ty:ident;
    )*) => {
        $(
            models!(@model $batch25, $id, $blank, seq($($shared)*, batch = 25));
            models!(@model $batch1, $id, $blank, seq($($shared)*, batch = 1));
            models!(@model $moved_ty, $id, $blank, seq($($moved)*));
        )*

        /// The collection the row's documents are in (the foreign library's name for it).
        pub fn collection(row: Row) -> &'static str {
            match row {
                $(Row::$row => $collection,)*
            }
        }

        /// Inserts `count` documents tagged `by` into `db` from `tasks` concurrent tasks, with
        /// the row's shared model at `batch`; the sequence's statistics after.
        pub async fn write(
            row: Row,
            batch: u32,
            db: &Database,
            count: usize,
            tasks: usize,
            by: &str,
        ) -> Result<Stats, mongo_sequence::Error> {
            match (row, batch) {
                $(
                    (Row::$row, 25) => write_with::<$batch25>(db, $collection, count, tasks, by).await,
                    (Row::$row, 1) => write_with::<$batch1>(db, $collection, count, tasks, by).await,
                )*
                (_, other) => panic!("the suite has no model at batch {other}"),
            }
        }

        /// The migration's steps on this crate's side (see [`migrate_with`]).
        pub async fn migrate(row: Row, db: &Database, count: usize, tasks: usize) -> Migration {
            match row {
                $(Row::$row => migrate_with::<$batch25, $moved_ty>(db, $collection, count, tasks).await,)*
            }
        }
    };
    (@model $name:ident, $id:ty, $blank:expr, seq($($seq:tt)*)) => {
        #[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
        #[seq($($seq)*)]
        struct $name {
            #[serde(rename = "_id")]
            id: $id,
            by: String,
        }

        impl Model for $name {
            fn new(by: &str) -> Self {
                Self { id: $blank, by: by.to_owned() }
            }
        }
    };
}

models! {
    Typegoose => "tickets", i64, -1,
        shared(name = "Ticket", layout = "typegoose", start = 0),
        moved(name = "ticket"),
        TypegooseBatch25, TypegooseBatch1, TypegooseMoved;
    AutoIncrement => "tickets", i64, -1,
        shared(name = "Ticket", layout = "mongoose_auto_increment", start = 0),
        moved(name = "ticket"),
        AutoIncrementBatch25, AutoIncrementBatch1, AutoIncrementMoved;
    Seed001 => "receipts", String, String::new(),
        shared(counters = "ids", field = "count", prefix = "YYMMDD", filter(prefix = period as number)),
        moved(name = "receipt", prefix = "YYMMDD"),
        Seed001Batch25, Seed001Batch1, Seed001Moved;
    MongoEngine => "ticket", i64, -1,
        shared(name = "ticket.id", counters = "mongoengine.counters", field = "next"),
        moved(name = "ticket"),
        MongoEngineBatch25, MongoEngineBatch1, MongoEngineMoved;
}

/// Inserts `count` documents of `M` from `tasks` concurrent tasks; the sequence's statistics
/// after. The first error ends the run.
async fn write_with<M: Model>(
    db: &Database,
    collection: &str,
    count: usize,
    tasks: usize,
    by: &str,
) -> Result<Stats, mongo_sequence::Error> {
    let coll: Collection<M> = db.collection(collection);
    let left = Arc::new(AtomicUsize::new(count));
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let (coll, left, by) = (coll.clone(), left.clone(), by.to_owned());
            tokio::spawn(async move {
                while left
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok()
                {
                    M::new(&by).insert_with_id(&coll).await?;
                }
                Ok::<_, mongo_sequence::Error>(())
            })
        })
        .collect();
    for handle in handles {
        handle.await.expect("a writer task panicked")?;
    }
    Ok(M::sequence(&coll).stats())
}

/// What the migration's steps on this crate's side found.
#[derive(Debug)]
pub struct Migration {
    /// Whether `sync_counters` would have moved the shared counter (it must not: the foreign
    /// library kept it at its highest ID).
    pub shared_sync_moved: bool,
    /// Stored IDs the shared model's `sync_counters` could not read as its own.
    pub shared_sync_skipped: u64,
    /// The shared model's statistics after its inserts.
    pub shared_stats: Stats,
}

/// After the foreign library wrote alone: `S` (the shared model at batch 25) checks the
/// counter with `sync_counters` (dry run) and inserts `count` documents tagged `rust`; then
/// the team moves off the foreign convention: `M`, on a counter of this crate's own, runs
/// `sync_counters` and inserts 10 documents tagged `moved`.
async fn migrate_with<S: Model, M: Model>(
    db: &Database,
    collection: &str,
    count: usize,
    tasks: usize,
) -> Migration {
    let shared: Collection<S> = db.collection(collection);
    let report = S::sync_counters(&shared)
        .dry_run(true)
        .await
        .expect("sync_counters of the shared counter");
    let shared_stats = write_with::<S>(db, collection, count, tasks, "rust")
        .await
        .expect("this crate's inserts after the foreign library's");
    let moved: Collection<M> = db.collection(collection);
    M::sync_counters(&moved)
        .await
        .expect("sync_counters of the new counter");
    write_with::<M>(db, collection, 10, 1, "moved")
        .await
        .expect("an insert after the move");
    Migration {
        shared_sync_moved: report.counters.iter().any(|c| c.moved()),
        shared_sync_skipped: report.skipped,
        shared_stats,
    }
}
