//! `upsert_with_id`: an existing document keeps its ID and takes no number; a new one takes a
//! number once; concurrent upserts of one key agree on one document and one ID.

use crate::common;

use std::collections::BTreeSet;

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Document};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "customer")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    email: String,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "member", gapless)]
struct Member {
    #[serde(rename = "_id")]
    id: i64,
    email: String,
    visits: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid_v7")]
struct Device {
    #[serde(rename = "_id")]
    id: mongodb::bson::Uuid,
    serial: String,
}

fn customer(email: &str, name: &str) -> Customer {
    Customer {
        id: 0,
        email: email.into(),
        name: name.into(),
    }
}

#[tokio::test]
async fn an_existing_document_keeps_its_id_and_takes_no_number() {
    let db = common::database("upsert_basic").await;
    let coll = db.collection::<Customer>("customers");
    common::unique_index(&coll, "email").await;
    let mut ada = customer("ada@example.com", "Ada");
    assert_eq!(
        ada.upsert_with_id(&coll, doc! { "email": "ada@example.com" })
            .await
            .unwrap(),
        1
    );
    let mut bob = customer("bob@example.com", "Bob");
    assert_eq!(
        bob.upsert_with_id(&coll, doc! { "email": "bob@example.com" })
            .await
            .unwrap(),
        2
    );
    // Ada again, renamed: the stored document is updated, its ID kept, no number taken.
    let mut again = customer("ada@example.com", "Ada Lovelace");
    let id = again
        .upsert_with_id(&coll, doc! { "email": "ada@example.com" })
        .await
        .unwrap();
    assert_eq!((id, again.id), (1, 1), "the stored ID, in the ID field too");
    let stored = db
        .collection::<Document>("customers")
        .find_one(doc! { "_id": 1_i64 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_str("name"), Ok("Ada Lovelace"));
    assert_eq!(Customer::sequence(&coll).current().await.unwrap(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_upserts_of_one_key_agree_on_one_document() {
    let db = common::database("upsert_race").await;
    let coll = db.collection::<Customer>("customers");
    common::unique_index(&coll, "email").await;
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut c = customer("same@example.com", &format!("task {i}"));
                let filter = doc! { "email": "same@example.com" };
                let id = c.upsert_with_id(&coll, filter).await.unwrap();
                assert_eq!(c.id, id);
                id
            })
        })
        .collect();
    let mut ids = BTreeSet::new();
    for t in tasks {
        ids.insert(t.await.unwrap());
    }
    assert_eq!(
        ids.len(),
        1,
        "every upsert returned the one stored ID: {ids:?}"
    );
    let stored = db
        .collection::<Document>("customers")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(stored, 1);
    // Numbers were taken only by upserts that found nothing to update; all but the winner's
    // were wasted.
    let stats = Customer::sequence(&coll).stats();
    let taken = Customer::sequence(&coll).current().await.unwrap().unwrap() as u64;
    assert_eq!(stats.wasted, taken - 1, "{stats:?}");
    println!(
        "upsert: race tasks=16 numbers_taken={taken} wasted={}",
        stats.wasted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_upserts_take_a_number_only_for_an_insert() {
    let db = common::database("upsert_gapless").await;
    let coll = db.collection::<Member>("members");
    common::unique_index(&coll, "email").await;
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let coll = coll.clone();
            tokio::spawn(async move {
                // Eight distinct members, each upserted twice at the same time.
                let email = format!("m{}@example.com", i % 8);
                let mut m = Member {
                    id: 0,
                    email: email.clone(),
                    visits: i,
                };
                m.upsert_with_id(&coll, doc! { "email": email })
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut ids = BTreeSet::new();
    for t in tasks {
        ids.insert(t.await.unwrap());
    }
    assert_eq!(ids, (1..=8).collect(), "dense numbers, one per member");
    assert_eq!(Member::sequence(&coll).current().await.unwrap(), Some(8));
}

#[tokio::test]
async fn upserts_of_generated_ids_and_over_imported_documents() {
    let db = common::database("upsert_other").await;
    let devices = db.collection::<Device>("devices");
    let mut d = Device {
        id: mongodb::bson::Uuid::new(),
        serial: "A1".into(),
    };
    let first = d
        .upsert_with_id(&devices, doc! { "serial": "A1" })
        .await
        .unwrap();
    let mut again = Device {
        id: mongodb::bson::Uuid::new(),
        serial: "A1".into(),
    };
    assert_eq!(
        again
            .upsert_with_id(&devices, doc! { "serial": "A1" })
            .await
            .unwrap(),
        first
    );

    let raw = db.collection::<Document>("customers");
    raw.insert_many((1..=10_i64).map(|i| doc! { "_id": i, "email": format!("old{i}") }))
        .await
        .unwrap();
    let coll = db.collection::<Customer>("customers");
    let mut new = customer("new@example.com", "New");
    let id = new
        .upsert_with_id(&coll, doc! { "email": "new@example.com" })
        .await
        .unwrap();
    assert_eq!(id, 11, "skips ahead of the imported IDs");
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "tag", batch = 10)]
struct Tag {
    #[serde(rename = "_id")]
    id: i64,
    label: String,
}

/// An upsert whose write concern is never confirmed is sent again with the same number: the
/// document is stored once, with the first number, and no second number is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upsert_of_unknown_outcome_is_sent_again_with_the_same_number() {
    let name = sequence_testkit::unique_db_name("upsert_unknown");
    let app = format!("upsert-{name}");
    let uri = sequence_testkit::TestServer::shared_or_panic().uri();
    let client = common::client_with_app(uri, &app, |_| {}).await;
    let db = client.database(&name);
    let tags = db.collection::<Tag>("tags");
    let tag = |label: &str| Tag {
        id: 0,
        label: label.into(),
    };
    // The first upsert fills this process's cache of the counter (batch 10).
    let first = tag("a")
        .upsert_with_id(&tags, doc! { "label": "a" })
        .await
        .unwrap();
    assert_eq!(first, 1);
    // Then every upsert of this client is applied but its write concern is not confirmed: the
    // update of the first step goes through (`skip: 1`), the upsert never looks done.
    let admin = common::client().await.database("admin");
    let fault = common::fail_point(
        &admin,
        doc! { "skip": 1 },
        doc! {
            "failCommands": ["findAndModify"],
            "appName": &app,
            "writeConcernError": { "code": 64, "errmsg": "waiting for replication timed out" },
        },
    )
    .await;
    let unknown = tag("b").upsert_with_id(&tags, doc! { "label": "b" }).await;
    fault.fired().await;
    // The upsert's own error: the unconfirmed write concern of its last attempt.
    let error = unknown.expect_err("the outcome stayed unknown");
    assert_eq!(
        crate::reliability_support::kind(&error),
        "mongo:write-concern:64",
        "{error:?}"
    );
    let stored: Vec<Document> = common::all(&db.collection::<Document>("tags")).await;
    let labels: Vec<(i64, &str)> = stored
        .iter()
        .map(|d| (d.get_i64("_id").unwrap(), d.get_str("label").unwrap()))
        .collect();
    assert_eq!(
        labels,
        [(1, "a"), (2, "b")],
        "stored once, with the first number"
    );
    // Sent again later, the upsert finds it: no number is taken.
    assert_eq!(
        tag("b")
            .upsert_with_id(&tags, doc! { "label": "b" })
            .await
            .unwrap(),
        2
    );
    let stats = Tag::sequence(&tags).stats();
    assert_eq!(stats.issued, 2, "one number per stored document: {stats:?}");
}

/// The options given to an upsert reach both of its writes, but for what the upsert decides
/// itself: a caller's `upsert(false)` does not stop the insert of a new document.
#[tokio::test]
async fn the_options_of_an_upsert_reach_its_writes() {
    use mongodb::options::FindOneAndUpdateOptions;
    let name = sequence_testkit::unique_db_name("upsert_options");
    let (client, commands) = common::monitored_client(&name).await;
    let coll = client.database(&name).collection::<Customer>("customers");
    let options = || {
        FindOneAndUpdateOptions::builder()
            .comment(mongodb::bson::Bson::String("from the caller".into()))
            .upsert(false)
            .build()
    };
    let mut ada = customer("ada@example.com", "Ada");
    let id = ada
        .upsert_with_id(&coll, doc! { "email": "ada@example.com" })
        .with_options(options())
        .await
        .unwrap();
    let mut again = customer("ada@example.com", "Ada L.");
    let same = again
        .upsert_with_id(&coll, doc! { "email": "ada@example.com" })
        .with_options(options())
        .await
        .unwrap();
    assert_eq!(same, id, "the stored document keeps its ID");
    let stored = common::all(&coll).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].name, "Ada L.");
    let writes: Vec<Document> = commands.sent_on("findAndModify", "customers");
    assert_eq!(
        writes.len(),
        3,
        "an update, an upsert, an update: {writes:?}"
    );
    for write in &writes {
        assert_eq!(write.get_str("comment"), Ok("from the caller"), "{write:?}");
    }
}
