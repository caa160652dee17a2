//! The driver's options given to an action reach the write underneath
//! (`bypass_document_validation`), and its write concern the writes of documents, while the
//! counter update keeps `majority`.

use crate::common;

use mongodb::bson::doc;

use super::{order, Order};

/// The driver's options reach the write underneath: a document the collection's validator
/// refuses goes in with `bypass_document_validation`, and an impossible write concern is the
/// server's error, for each action.
#[tokio::test]
async fn options_reach_the_write_underneath() {
    use mongodb::options::{InsertManyOptions, InsertOneOptions};
    let db = common::database("action_options").await;
    db.create_collection("orders")
        .validator(doc! { "email": { "$regex": "@example\\.com$" } })
        .await
        .unwrap();
    let coll = db.collection::<Order>("orders");

    let mut refused = order("not-an-address");
    let e = refused.insert_with_id(&coll).await.unwrap_err();
    assert!(e.to_string().contains("failed validation"), "{e}");
    let bypass = InsertOneOptions::builder()
        .bypass_document_validation(true)
        .build();
    let mut admitted = order("not-an-address");
    admitted
        .insert_with_id(&coll)
        .with_options(bypass)
        .await
        .unwrap();
    let mut many = vec![order("x"), order("y")];
    Order::insert_many_with_ids(&mut many, &coll)
        .with_options(
            InsertManyOptions::builder()
                .bypass_document_validation(true)
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(common::all(&coll).await.len(), 3);
}

/// A write concern given to an action is the one its writes of documents carry; the counter
/// update keeps `majority`.
#[tokio::test]
async fn a_write_concern_reaches_the_documents_writes() {
    use mongodb::options::{Acknowledgment, WriteConcern};
    let name = sequence_testkit::unique_db_name("action_write_concern");
    let (client, commands) = common::monitored_client(&name).await;
    let db = client.database(&name);
    let coll = db.collection::<Order>("orders");
    let wc = || {
        WriteConcern::builder()
            .w(Acknowledgment::Nodes(1))
            .journal(true)
            .build()
    };
    let mut one = order("one@example.com");
    one.insert_with_id(&coll).write_concern(wc()).await.unwrap();
    let mut many = vec![order("two@example.com")];
    Order::insert_many_with_ids(&mut many, &coll)
        .write_concern(wc())
        .await
        .unwrap();
    let mut up = order("three@example.com");
    up.upsert_with_id(&coll, doc! { "email": "three@example.com" })
        .write_concern(wc())
        .await
        .unwrap();
    let ours = doc! { "w": 1, "j": true };
    let inserts = commands.sent("insert");
    assert_eq!(inserts.len(), 2, "{inserts:?}");
    for command in &inserts {
        assert_eq!(
            command.get_document("writeConcern").ok(),
            Some(&ours),
            "{command}"
        );
    }
    let updates = commands.sent("findAndModify");
    let (documents, counters): (Vec<_>, Vec<_>) = updates
        .iter()
        .partition(|c| c.get_str("findAndModify") == Ok("orders"));
    assert_eq!(
        documents.len(),
        2,
        "the update, then the upsert: {updates:?}"
    );
    for command in documents {
        assert_eq!(
            command.get_document("writeConcern").ok(),
            Some(&ours),
            "{command}"
        );
    }
    assert!(!counters.is_empty());
    for command in counters {
        assert_eq!(
            command
                .get_document("writeConcern")
                .and_then(|wc| wc.get_str("w")),
            Ok("majority"),
            "{command}"
        );
    }
}
