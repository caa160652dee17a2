//! The counters curve: `insert_with_id` at batch 1 (a counter round trip per document) and
//! batch 25 against plain inserts, with more and more other counters in the counters
//! collection, and that collection's size.

use std::time::Instant;

use mongodb::bson::{doc, Bson, Document};
use mongodb::{Client, Collection, Database};
use sequence_testkit::unique_db_name;

use crate::measure::{with_server_work, Result};
use crate::scenarios::models::{Sample, B1};
use crate::scenarios::{Model, COLL};

use super::{fresh_db, in_order, progress, Bench, RateRow, Samples};

/// The modes of the curve, plain (the baseline) first.
const MODES: &[Model] = &[Model::Plain, Model::B1, Model::B25];

/// The numbers of other counters in the collection; `--quick` stops at [`QUICK_MAX`].
const COUNTERS: &[u64] = &[1_000, 10_000, 100_000, 1_000_000];

/// The most counters of a `--quick` run.
const QUICK_MAX: u64 = 10_000;

/// The tasks of every run.
const TASKS: usize = 8;

/// Counter documents per `insert_many` of the filling.
const FILL_CHUNK: u64 = 10_000;

/// The counters collection's size at one point (`$collStats` storage statistics, after a
/// checkpoint).
pub struct CollectionSize {
    pub counters: u64,
    /// The documents' bytes, uncompressed (`size`).
    pub size: u64,
    /// The bytes on disk of the documents (`storageSize`).
    pub storage_size: u64,
    /// The bytes on disk of the indexes (`totalIndexSize`).
    pub total_index_size: u64,
}

/// For each number of counters, in each round: a fresh database whose counters collection is
/// filled with that many counter documents (not measured), then every mode once at 8 tasks,
/// each into a collection of its own (batch 1 and batch 25 have counters of their own, so they
/// do not meet in the database they share with plain).
pub async fn curve(bench: &Bench) -> Result<(Vec<RateRow>, Vec<CollectionSize>)> {
    let template = stored_counter(&bench.client).await?;
    eprintln!("scale: counters: a counter as stored: {template}");
    let calls_per_task = (bench.docs / TASKS as u64).max(1);
    let (mut rows, mut sizes) = (Vec::new(), Vec::new());
    for &counters in COUNTERS {
        if bench.quick && counters > QUICK_MAX {
            break;
        }
        let at = format!("counters {counters}");
        let modes = bench.modes_of(MODES);
        let mut samples = Samples::new(modes.clone());
        for round in 0..bench.rounds {
            let db = fresh_db(&bench.client, "counters").await?;
            let filling = Instant::now();
            fill(&db, &template, counters).await?;
            eprintln!(
                "scale: {at}, round {}/{}: filled in {:.2} s",
                round + 1,
                bench.rounds,
                filling.elapsed().as_secs_f64()
            );
            for model in in_order(&modes, round) {
                let coll = model.coll();
                db.create_collection(&coll).await?;
                let run = model.insert(&db, &coll, TASKS, calls_per_task, 0);
                let measured = with_server_work(&bench.client, run).await?;
                progress(&at, round, bench.rounds, model, &measured);
                samples.record(model, &measured);
            }
            if round == 0 {
                sizes.push(collection_size(&bench.client, &db, counters).await?);
            }
            db.drop().await?;
        }
        rows.extend(samples.rows(counters, TASKS));
    }
    Ok((rows, sizes))
}

/// A counter document as the runtime stores it: that of one `insert_with_id` at batch 1, in a
/// database of its own (dropped after).
async fn stored_counter(client: &Client) -> Result<Document> {
    let db = client.database(&unique_db_name("scale_template"));
    let coll = db.collection::<B1>(COLL);
    B1::sample(0).insert_with_id(&coll).await?;
    let found = db
        .collection::<Document>("counters")
        .find_one(doc! {})
        .await?
        .ok_or("no counter document after an insert_with_id")?;
    db.drop().await?;
    Ok(found)
}

/// Fills the counters collection of `db` with `count` counters shaped like `template`, each
/// with an `_id` of its own.
async fn fill(db: &Database, template: &Document, count: u64) -> Result<()> {
    let counters: Collection<Document> = db.collection("counters");
    let mut next = 0;
    while next < count {
        let chunk: Vec<Document> = (next..count.min(next + FILL_CHUNK))
            .map(|i| {
                let mut counter = template.clone();
                counter.insert("_id", format!("scale_filler_{i:07}"));
                counter
            })
            .collect();
        next += chunk.len() as u64;
        counters.insert_many(chunk).await?;
    }
    Ok(())
}

/// The size of the counters collection of `db`, after a checkpoint (`fsync`) so that the
/// bytes on disk are those of every document.
async fn collection_size(client: &Client, db: &Database, counters: u64) -> Result<CollectionSize> {
    client
        .database("admin")
        .run_command(doc! { "fsync": 1 })
        .await?;
    let mut cursor = db
        .collection::<Document>("counters")
        .aggregate([doc! { "$collStats": { "storageStats": {} } }])
        .await?;
    if !cursor.advance().await? {
        return Err("$collStats returned nothing".into());
    }
    let stats = cursor.deserialize_current()?;
    let storage = stats.get_document("storageStats")?;
    Ok(CollectionSize {
        counters,
        size: number(storage, "size")?,
        storage_size: number(storage, "storageSize")?,
        total_index_size: number(storage, "totalIndexSize")?,
    })
}

/// The number at `key` of `doc`, whichever numeric type the server chose.
fn number(doc: &Document, key: &str) -> Result<u64> {
    match doc.get(key) {
        Some(Bson::Int32(n)) => Ok(*n as u64),
        Some(Bson::Int64(n)) => Ok(*n as u64),
        Some(Bson::Double(n)) => Ok(*n as u64),
        other => Err(format!("unexpected {key} in $collStats: {other:?}").into()),
    }
}
