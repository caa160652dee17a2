//! Each strategy of `#[seq(strategy = ...)]` against a real server, one file per strategy:
//!
//! - `counter.rs`: `counter` with ID types of one's own (newtypes over a number or a text);
//! - `ranges.rs`: `ranges`, counter documents each owning a preassigned slice of the values;
//! - `random.rs`: `random`, IDs drawn again on a duplicate `_id`;
//! - `generated.rs`: `uuid`, `uuid_v7` and `object_id`, values made without a counter.
//!
//! The rest of the `counter` strategy (batches, periods, scopes, formats) is what the other
//! modules of this binary test. Here: the readers of what the strategies stored.

mod counter;
mod generated;
mod random;
mod ranges;

use crate::common;

use std::collections::BTreeMap;

use futures_util::TryStreamExt;
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Database;

/// The counter documents of the ranges sequence `name`: shard → (lo, hi, seq).
async fn shard_docs(db: &Database, name: &str) -> BTreeMap<i32, (i64, i64, i64)> {
    let docs: Vec<Document> = db
        .collection::<Document>("counters")
        .find(doc! { "_id.seq": name })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.iter()
        .map(|d| {
            let id = d.get_document("_id").unwrap();
            assert_eq!(id.keys().collect::<Vec<_>>(), ["seq", "shard"], "{d}");
            (
                id.get_i32("shard").unwrap(),
                (
                    d.get_i64("lo").unwrap(),
                    d.get_i64("hi").unwrap(),
                    d.get_i64("seq").unwrap(),
                ),
            )
        })
        .collect()
}

/// The `_id` of every document of the collection `coll`.
async fn stored_ids(db: &Database, coll: &str) -> Vec<Bson> {
    common::all(&db.collection::<Document>(coll))
        .await
        .into_iter()
        .map(|d| d.get("_id").unwrap().clone())
        .collect()
}

/// The `_id` of the only document of `coll`.
async fn raw_id(db: &Database, coll: &str, id: Bson) -> Bson {
    db.collection::<Document>(coll)
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .expect("the document is stored under its ID")
        .get("_id")
        .unwrap()
        .clone()
}

/// The UUID `value` holds, asserting that it is stored as BSON's UUID (binary subtype 4).
fn uuid_of(value: &Bson) -> uuid::Uuid {
    match value {
        Bson::Binary(b) => {
            assert_eq!(b.subtype, BinarySubtype::Uuid, "stored as binary subtype 4");
            uuid::Uuid::from_slice(&b.bytes).unwrap()
        }
        other => panic!("expected a BSON UUID, found {other:?}"),
    }
}
