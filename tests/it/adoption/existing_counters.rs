//! Counter documents written by other code (another field, the next free value instead of the
//! last issued) are used as they are, from `#[seq(...)]` alone.

use crate::common;

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Bson, Document};
use serde::{Deserialize, Serialize};

/// Seed 000's counters: `{ _id: "personIdCounter", sequence: N }`, the last value issued.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "personIdCounter", field = "sequence")]
struct Person {
    #[serde(rename = "_id")]
    id: Option<i64>,
    name: String,
}

/// Counters that hold the next free value: `{ _id: "invoice", COUNT: N }`.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", field = "COUNT", stores = "next_free")]
struct Bill {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

/// Counter documents written by other code are used as they are, from `#[seq(...)]` alone:
/// the next ID follows what they say, and they keep their field and its meaning.
#[tokio::test]
async fn counter_documents_of_other_code_are_used_as_they_are() {
    let db = common::database("other_layouts").await;
    let counters = db.collection::<Document>("counters");
    counters
        .insert_one(doc! { "_id": "personIdCounter", "sequence": 41 })
        .await
        .unwrap();
    counters
        .insert_one(doc! { "_id": "invoice", "COUNT": 1042_i64 })
        .await
        .unwrap();
    let people = db.collection::<Person>("people");
    let mut ada = Person {
        id: None,
        name: "ada".into(),
    };
    assert_eq!(ada.insert_with_id(&people).await.unwrap(), 42);
    let bills = db.collection::<Bill>("bills");
    let mut bill = Bill { id: None };
    assert_eq!(bill.insert_with_id(&bills).await.unwrap(), 1042);
    let mut more = vec![Bill { id: None }, Bill { id: None }];
    let ids = Bill::insert_many_with_ids(&mut more, &bills).await.unwrap();
    assert_eq!(ids, [1043, 1044]);

    let person = counters
        .find_one(doc! { "_id": "personIdCounter" })
        .await
        .unwrap()
        .unwrap();
    let sequence = match person.get("sequence") {
        Some(Bson::Int32(n)) => Some(i64::from(*n)),
        Some(Bson::Int64(n)) => Some(*n),
        _ => None,
    };
    assert_eq!(sequence, Some(42), "{person}");
    assert!(person.get("seq").is_none(), "no field of its own: {person}");
    let invoice = counters
        .find_one(doc! { "_id": "invoice" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(invoice.get_i64("COUNT"), Ok(1045), "the next free value");
}
