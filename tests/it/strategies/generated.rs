//! The strategies whose values are made without a counter: `uuid` and `uuid_v7` (BSON's UUID
//! type, or the `uuid` crate's through `uuid_as_binary`) and `object_id`, stored as their BSON
//! types with no counter written; and why a `uuid::Uuid` ID field needs `uuid_as_binary`.

use crate::common;

use std::collections::HashSet;

use mongo_sequence::{Error, SequentialId};
use mongodb::bson::oid::ObjectId;
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{doc, Bson, Document};
use serde::{Deserialize, Serialize};

use super::{raw_id, uuid_of};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid")]
struct Login {
    #[serde(rename = "_id")]
    id: mongodb::bson::Uuid,
    user: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid_v7")]
struct Event {
    #[serde(rename = "_id", with = "mongo_sequence::uuid_as_binary")]
    id: uuid::Uuid,
    kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid")]
struct Upload {
    #[serde(
        rename = "_id",
        with = "mongo_sequence::uuid_as_binary",
        skip_serializing_if = "Option::is_none",
        default
    )]
    id: Option<uuid::Uuid>,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "object_id")]
struct Line {
    #[serde(rename = "_id")]
    id: ObjectId,
    text: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uuids_and_object_ids_are_stored_as_their_bson_types_without_counters() {
    let db = common::database("generated_ids").await;

    let logins = db.collection::<Login>("logins");
    let mut s = Login {
        id: mongodb::bson::Uuid::from_bytes([0; 16]),
        user: "sarah".into(),
    };
    let id = s.insert_with_id(&logins).await.unwrap();
    assert_eq!(s.id, id);
    let stored = uuid_of(&raw_id(&db, "logins", Bson::from(id)).await);
    assert_eq!(stored.as_bytes(), &id.bytes());
    assert_eq!(stored.get_version_num(), 4);
    let back = logins.find_one(doc! {}).await.unwrap().unwrap();
    assert_eq!(back.id, id);

    let events = db.collection::<Event>("events");
    let mut ids = Vec::new();
    for kind in ["a", "b", "c"] {
        let mut e = Event {
            id: uuid::Uuid::nil(),
            kind: kind.into(),
        };
        let id = e.insert_with_id(&events).await.unwrap();
        assert_eq!(e.id, id);
        let stored = uuid_of(
            &raw_id(
                &db,
                "events",
                Bson::from(mongodb::bson::Uuid::from_bytes(id.into_bytes())),
            )
            .await,
        );
        assert_eq!(stored, id);
        assert_eq!(stored.get_version_num(), 7);
        ids.push(id);
    }
    let stored: Vec<Event> = common::all(&events).await;
    assert_eq!(
        stored.iter().map(|e| e.id).collect::<HashSet<_>>(),
        ids.iter().copied().collect()
    );
    let mut bulk = vec![
        Event {
            id: uuid::Uuid::nil(),
            kind: "d".into(),
        },
        Event {
            id: uuid::Uuid::nil(),
            kind: "e".into(),
        },
    ];
    let bulk_ids = Event::insert_many_with_ids(&mut bulk, &events)
        .await
        .unwrap();
    assert_ne!(bulk_ids[0], bulk_ids[1]);
    assert_eq!(events.count_documents(doc! {}).await.unwrap(), 5);

    let uploads = db.collection::<Upload>("uploads");
    let mut u = Upload { id: None };
    let id = u.insert_with_id(&uploads).await.unwrap();
    assert_eq!(u.id, Some(id));
    let stored = uuid_of(
        &raw_id(
            &db,
            "uploads",
            Bson::from(mongodb::bson::Uuid::from_bytes(id.into_bytes())),
        )
        .await,
    );
    assert_eq!(stored.get_version_num(), 4);
    assert_eq!(
        uploads.find_one(doc! {}).await.unwrap().unwrap().id,
        Some(id)
    );

    let lines = db.collection::<Line>("lines");
    let mut l = Line {
        id: ObjectId::from_bytes([0; 12]),
        text: "hello".into(),
    };
    let id = l.insert_with_id(&lines).await.unwrap();
    assert_eq!(l.id, id);
    assert_eq!(
        raw_id(&db, "lines", Bson::ObjectId(id)).await,
        Bson::ObjectId(id)
    );
    let next = Line::next_id(&lines).await.unwrap();
    assert_ne!(next, id);
    let mut more = vec![l.clone(), l.clone()];
    let more_ids = Line::insert_many_with_ids(&mut more, &lines).await.unwrap();
    assert_eq!(more_ids.len(), 2);
    assert!(more_ids.iter().all(|i| *i != id));

    let seq = Line::sequence(&lines);
    assert!(matches!(
        seq.next().await,
        Err(Error::Unsupported {
            strategy: "object_id",
            ..
        })
    ));
    let collections = db.list_collection_names().await.unwrap();
    assert!(
        !collections.contains(&"counters".to_owned()),
        "no counter was written: {collections:?}"
    );
}

/// Why a `uuid::Uuid` ID field needs `uuid_as_binary` (the derive refuses it without): plain
/// serde stores it as generic binary, subtype 0.
#[tokio::test]
async fn plain_serde_stores_uuid_crate_values_as_generic_binary() {
    #[derive(Serialize)]
    struct Plain {
        #[serde(rename = "_id")]
        id: uuid::Uuid,
    }
    let db = common::database("plain_uuid").await;
    let id = uuid::Uuid::new_v4();
    db.collection::<Plain>("plain")
        .insert_one(Plain { id })
        .await
        .unwrap();
    let doc = db
        .collection::<Document>("plain")
        .find_one(doc! {})
        .await
        .unwrap()
        .unwrap();
    match doc.get("_id") {
        Some(Bson::Binary(b)) => {
            assert_eq!(b.subtype, BinarySubtype::Generic);
            assert_eq!(b.bytes, id.as_bytes());
        }
        other => panic!("unexpected {other:?}"),
    }
}
