//! Adopting existing data: inserts over documents imported with their IDs (and no counter) skip
//! ahead of the stored IDs, for every counter strategy, period prefix, scope and insert path,
//! at a cost of a few round trips per conflict, not one per imported document:
//!
//! - `skip_ahead.rs`: inserts over imported documents skip ahead of them;
//! - `sync.rs`: `sync_counters` moves the counters up to the stored IDs;
//! - `existing_counters.rs`: counter documents written by other code, used as they are.
//!
//! Here: the models more than one file inserts, and the helpers of the tests.

mod existing_counters;
mod skip_ahead;
mod sync;

use crate::common;

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, oid::ObjectId, Document};
use mongodb::Collection;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "legacy")]
struct Legacy {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
}

/// Stored as `{ _id, orderNumber, customerId, code }`: the ID is not `_id`, and serde renames
/// the ID and scope fields.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[serde(rename_all = "camelCase")]
#[seq(name = "order", scope = "customer_id")]
struct Order {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    order_number: i64,
    customer_id: String,
    code: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", prefix = "INV-YYMMDD-", width = 4)]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "daily", prefix = "YYMMDD")]
struct Daily {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "label")]
struct Label {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "account", strategy = "ranges", shards = 4, max = 4000)]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "small", max = 100)]
struct Small {
    #[serde(rename = "_id")]
    id: i64,
}

/// Imports `docs` as they are, with their IDs, as a restore or a migration would.
async fn import(coll: &Collection<Document>, docs: impl IntoIterator<Item = Document>) {
    coll.insert_many(docs.into_iter().collect::<Vec<_>>())
        .await
        .unwrap();
}

/// The IDs stored in `coll`, sorted.
async fn stored_ids(coll: &Collection<Document>, field: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = common::all(coll)
        .await
        .iter()
        .map(|d: &Document| d.get_i64(field).unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

const TASKS: u32 = 8;

/// The commands the inserts of a test sent.
struct Sent {
    finds: u64,
    inserts: u64,
    round_trips: u64,
}

impl Sent {
    /// The commands sent so far.
    fn until_now(commands: &common::Commands) -> Self {
        Sent {
            finds: commands.count("find"),
            inserts: commands.count("insert"),
            round_trips: commands.round_trips(),
        }
    }
}

/// 8 tasks insert over documents 1..=500 imported without a counter; returns the statistics
/// and the commands the inserts sent.
async fn over_imported<T>(
    name: &str,
    make: fn(u32) -> T,
) -> (mongo_sequence::observability::Stats, Sent)
where
    T: SequentialId<Id = i64> + Clone,
{
    let db_name = sequence_testkit::unique_db_name(name);
    let (client, commands) = common::monitored_client(&db_name).await;
    let db = client.database(&db_name);
    let raw = db.collection::<Document>("docs");
    import(&raw, (1..=500_i64).map(|i| doc! { "_id": i, "task": 99 })).await;
    let before = Sent::until_now(&commands);
    let coll = db.collection::<T>("docs");
    let per_task = common::pick(10, 200);
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..per_task {
                    ids.push(make(task).insert_with_id(&coll).await.unwrap());
                }
                ids
            })
        })
        .collect();
    let mut ids = Vec::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    let now = Sent::until_now(&commands);
    let sent = Sent {
        finds: now.finds - before.finds,
        inserts: now.inserts - before.inserts,
        round_trips: now.round_trips - before.round_trips,
    };
    let inserted = (TASKS * per_task) as usize;
    let stored = stored_ids(&raw, "_id").await;
    assert_eq!(stored.len(), 500 + inserted, "every insert stored once");
    assert!(ids.iter().all(|&id| id > 500), "no imported ID was reused");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), inserted, "no ID twice");
    let stats = T::sequence(&coll).stats();
    println!("adoption: {name} inserted={inserted} over=500 {stats:?}");
    (stats, sent)
}

/// The counters of a report: key, old, new, stored, ids.
fn rows(report: &mongo_sequence::sync::SyncReport) -> Vec<(String, Option<i64>, i64, i64, u64)> {
    report
        .counters
        .iter()
        .map(|c| (c.key.to_string(), c.old, c.new, c.stored, c.ids))
        .collect()
}
