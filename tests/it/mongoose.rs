//! mongoose-sequence interop: counters in its layout (`{ id, reference_value, seq }` in
//! `counters`, `seq` = last issued, unique index on `{ id, reference_value }`), shared with a
//! Node service. The Node side is simulated with the exact operations mongoose-sequence 6 sends
//! for a save: an upsert that only sets `seq: start_seq` on insert, then (when the counter
//! already existed) `$inc: { seq: 1 }`.

use crate::common;
use crate::common::counters;

use std::collections::HashSet;

use futures_util::TryStreamExt;
use mongo_sequence::{options::Layout, Scope, Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{IndexOptions, ReturnDocument};
use mongodb::{Database, IndexModel};
use serde::{Deserialize, Serialize};

/// What mongoose's `autoIndex` creates for the counter model.
async fn mongoose_index(db: &Database) {
    counters(db)
        .create_index(
            IndexModel::builder()
                .keys(doc! { "id": 1, "reference_value": 1 })
                .options(IndexOptions::builder().unique(true).build())
                .build(),
        )
        .await
        .unwrap();
}

/// The value mongoose-sequence gives the next saved document (`start_seq` 1).
async fn mongoose_next(db: &Database, id: &str, reference: Bson) -> i64 {
    let filter = doc! { "id": id, "reference_value": reference };
    // `_createCounter`: `findOneAndUpdate(filter, {}, { upsert, setDefaultsOnInsert })`.
    let created = counters(db)
        .find_one_and_update(filter.clone(), doc! { "$setOnInsert": { "seq": 1_i32 } })
        .upsert(true)
        .return_document(ReturnDocument::Before)
        .await;
    match created {
        Ok(None) => return 1, // inserted: the document gets `start_seq`
        Ok(Some(_)) => {}
        Err(e) if mongo_sequence::Error::from(e.clone()).is_duplicate_key() => {}
        Err(e) => panic!("{e}"),
    }
    // `_setNextCounter`: `findOneAndUpdate(filter, { $inc: { seq: 1 } }, { new: true })`.
    let counter = counters(db)
        .find_one_and_update(filter, doc! { "$inc": { "seq": 1_i32 } })
        .return_document(ReturnDocument::After)
        .await
        .unwrap()
        .expect("the counter exists");
    match counter.get("seq") {
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(Bson::Int64(v)) => *v,
        other => panic!("unexpected seq {other:?}"),
    }
}

async fn counter_docs(db: &Database, id: &str) -> Vec<Document> {
    counters(db)
        .find(doc! { "id": id })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "user_id", layout = "mongoose_sequence")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "cached", layout = "mongoose_sequence", batch = 5)]
struct Cached {
    #[serde(rename = "_id")]
    id: i64,
}

#[tokio::test]
async fn an_unscoped_counter_is_shared_with_node() {
    let db = common::database("mongoose_unscoped").await;
    mongoose_index(&db).await;
    let users = db.collection::<User>("users");
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(mongoose_next(&db, "user_id", Bson::Null).await);
    }
    ids.push(User { id: 0 }.insert_with_id(&users).await.unwrap());
    ids.push(mongoose_next(&db, "user_id", Bson::Null).await);
    let mut many: Vec<User> = (0..3).map(|_| User { id: 0 }).collect();
    ids.extend(User::insert_many_with_ids(&mut many, &users).await.unwrap());
    ids.push(mongoose_next(&db, "user_id", Bson::Null).await);
    assert_eq!(ids, (1..=9).collect::<Vec<_>>());

    let docs = counter_docs(&db, "user_id").await;
    assert_eq!(docs.len(), 1, "{docs:?}");
    assert_eq!(docs[0].get("reference_value"), Some(&Bson::Null));
    assert_eq!(docs[0].get_i64("seq").unwrap(), 9);

    // With a cache on the Rust side, the pooled-lo ranges leave Node's values alone.
    let cached = db.collection::<Cached>("cached");
    let mut seen = HashSet::new();
    for round in 0..20 {
        let id = if round % 3 == 0 {
            mongoose_next(&db, "cached", Bson::Null).await
        } else {
            Cached { id: 0 }.insert_with_id(&cached).await.unwrap()
        };
        assert!(seen.insert(id), "{id} issued twice");
    }
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", scope = "tenant", layout = "mongoose_sequence")]
struct Ticket {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn ticket(tenant: &str) -> Ticket {
    Ticket {
        number: 0,
        tenant: tenant.to_owned(),
    }
}

/// `reference_fields: ["year", "hall"]`: mongoose sorts them, and Node stores small numbers
/// as 32-bit integers while this model has an `i64`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "seat", scope = ["year", "hall"], layout = "mongoose_sequence")]
struct Seat {
    #[seq(id)]
    seat: i64,
    year: i64,
    hall: String,
}

#[tokio::test]
async fn a_scoped_counter_is_shared_with_node() {
    let db = common::database("mongoose_scoped").await;
    mongoose_index(&db).await;
    let tickets = db.collection::<Ticket>("tickets");
    let acme = || Bson::Document(doc! { "tenant": "acme" });
    let globex = || Bson::Document(doc! { "tenant": "globex" });

    assert_eq!(mongoose_next(&db, "ticket", acme()).await, 1);
    assert_eq!(mongoose_next(&db, "ticket", acme()).await, 2);
    assert_eq!(ticket("acme").insert_with_id(&tickets).await.unwrap(), 3);
    // A counter Rust creates is one mongoose finds.
    assert_eq!(ticket("globex").insert_with_id(&tickets).await.unwrap(), 1);
    let created = counters(&db)
        .find_one(doc! { "id": "ticket", "reference_value": { "tenant": "globex" } })
        .await
        .unwrap()
        .unwrap();
    let fields: Vec<&str> = created.keys().map(String::as_str).collect();
    assert_eq!(fields, ["_id", "id", "reference_value", "seq"]);
    assert_eq!(created.get_i64("seq").unwrap(), 1);
    assert_eq!(mongoose_next(&db, "ticket", globex()).await, 2);
    assert_eq!(mongoose_next(&db, "ticket", acme()).await, 4);
    assert_eq!(ticket("globex").insert_with_id(&tickets).await.unwrap(), 3);
    assert_eq!(counter_docs(&db, "ticket").await.len(), 2);

    // `Model.counterReset('ticket', { tenant: 'acme' })` and `reset` agree: `seq: start_seq - 1`.
    let seq = Ticket::sequence(&tickets)
        .in_scope(Scope::new().with("tenant", "acme"))
        .unwrap();
    seq.reset().await.unwrap();
    assert_eq!(mongoose_next(&db, "ticket", acme()).await, 1);
    assert_eq!(ticket("acme").insert_with_id(&tickets).await.unwrap(), 2);

    // Several reference fields, sorted by name; numbers matched by value.
    let seats = db.collection::<Seat>("seats");
    let node_ref = || Bson::Document(doc! { "hall": "A", "year": 2025_i32 });
    assert_eq!(mongoose_next(&db, "seat", node_ref()).await, 1);
    let mut s = Seat {
        seat: 0,
        year: 2025,
        hall: "A".into(),
    };
    assert_eq!(s.insert_with_id(&seats).await.unwrap(), 2);
    assert_eq!(mongoose_next(&db, "seat", node_ref()).await, 3);
    let docs = counter_docs(&db, "seat").await;
    assert_eq!(docs.len(), 1, "{docs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_use_creates_one_counter() {
    let db = common::database("mongoose_first_use").await;
    // No index yet: the first reservation creates the one mongoose declares.
    let seq = Sequence::new(
        &db,
        SequenceOptions::builder("job")
            .layout(Layout::MongooseSequence)
            .scope(["queue"])
            .build(),
    )
    .unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let seq = seq.in_scope(Scope::new().with("queue", "mail")).unwrap();
            tokio::spawn(async move { [seq.next().await.unwrap()] })
        })
        .collect();
    let ids = common::distinct_ids(tasks).await;
    assert_eq!(ids, (1..=16).collect::<HashSet<i64>>());
    assert_eq!(counter_docs(&db, "job").await.len(), 1);

    let unique = common::unique_indexes(&counters(&db)).await;
    assert!(
        unique
            .iter()
            .any(|(_, keys)| *keys == doc! { "id": 1, "reference_value": 1 }),
        "{unique:?}"
    );
    // Node shares it from here on.
    assert_eq!(
        mongoose_next(&db, "job", Bson::Document(doc! { "queue": "mail" })).await,
        17
    );
}

#[tokio::test]
async fn a_collection_of_default_layout_counters_is_refused() {
    let db = common::database("mongoose_mixed").await;
    counters(&db)
        .insert_many([doc! { "_id": "a", "seq": 1 }, doc! { "_id": "b", "seq": 2 }])
        .await
        .unwrap();
    let seq = Sequence::new(
        &db,
        SequenceOptions::builder("job")
            .layout(Layout::MongooseSequence)
            .build(),
    )
    .unwrap();
    match seq.next().await {
        Err(mongo_sequence::Error::IndexConflict { reason, .. }) => {
            assert!(reason.contains("separate collections"), "{reason}");
        }
        other => panic!("expected IndexConflict, got {other:?}"),
    }
    assert_eq!(
        counter_docs(&db, "job").await.len(),
        0,
        "nothing was written"
    );
    // In a collection of its own, it works.
    let seq = Sequence::new(
        &db,
        SequenceOptions::builder("job")
            .layout(Layout::MongooseSequence)
            .counters("mongoose_counters")
            .build(),
    )
    .unwrap();
    assert_eq!(seq.next().await.unwrap(), 1);
}
