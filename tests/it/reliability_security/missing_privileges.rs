//! Every path that talks to the server (the counters read, written or indexed, values given
//! back, the target collections inserted into or read) turns a missing privilege into
//! `Error::Unauthorized`, naming the collection and the privilege.

use crate::common;
use crate::common::models::Item;
use crate::common::opts;

use mongo_sequence::{options::Layout, Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::{Client, Database};
use serde::{Deserialize, Serialize};

use super::{assert_refused, auth_server, stop, PATHS};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 9)]
struct Lot {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid_v7")]
struct Event {
    #[serde(rename = "_id")]
    id: mongodb::bson::Uuid,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "note")]
struct Note {
    #[serde(rename = "_id")]
    id: i64,
    text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "imported")]
struct Imported {
    #[serde(rename = "_id")]
    id: i64,
}

/// Every path that talks to the server turns a missing privilege into the same error:
/// `Error::Unauthorized`, naming the collection and what the operation needed, with the
/// server's error as source. One refused call per path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_names_the_missing_privilege() {
    let (server, root) = auth_server().await;
    let db = root.database(PATHS);
    let role = |name: &str, privileges: Vec<Document>| {
        let db = db.clone();
        let command = doc! { "createRole": name, "privileges": privileges, "roles": [] };
        async move { db.run_command(command).await.unwrap() }
    };
    let on = |collection: &str, actions: &[&str]| {
        doc! { "resource": { "db": PATHS, "collection": collection }, "actions": actions }
    };
    let writer = ["find", "update", "insert"];
    role("countersOnly", vec![on("counters", &writer)]).await;
    role("itemsOnly", vec![on("items", &["insert"])]).await;
    role("noIndex", vec![on("identitycounters", &writer)]).await;
    role(
        "noFind",
        vec![
            on("counters", &writer),
            on("notes", &["insert"]),
            on("imported", &["insert"]),
        ],
    )
    .await;
    let admin = root.database("admin");
    for (user, role) in [
        ("reader", "read"),
        ("counters_only", "countersOnly"),
        ("items_only", "itemsOnly"),
        ("no_index", "noIndex"),
        ("no_find", "noFind"),
        ("releaser", "countersOnly"),
    ] {
        admin
            .run_command(doc! {
                "createUser": user,
                "pwd": format!("{user}-pw"),
                "roles": [{ "role": role, "db": PATHS }],
            })
            .await
            .unwrap();
    }
    let uri = |user: &str| server.uri_with_credentials(user, &format!("{user}-pw"));
    let login = |user: &str| {
        let uri = uri(user);
        async move { Client::with_uri_str(uri).await.unwrap().database(PATHS) }
    };
    // Handles with caches of their own, so that no value cached by another test's handle
    // of the same name answers in place of the server.
    let handle = |db: &Database, options: SequenceOptions| {
        let store = mongo_sequence::store::MongoStore::new(db, &options).unwrap();
        Sequence::with_store(std::sync::Arc::new(store), options).unwrap()
    };

    // The counters: read but not written.
    let reader = login("reader").await;
    let reserve = "`find`, `update` and `insert` actions on it to reserve IDs";
    let set = "`update` and `insert` actions on it to set a counter";
    let delete = "`remove` action on it to delete counters";
    let plain = handle(&reader, opts("plain").build());
    assert_refused("next", plain.next().await, "counters", reserve);
    let cached = handle(&reader, opts("cached").batch(25).build());
    assert_refused("cached next", cached.next().await, "counters", reserve);
    assert_refused("reserve", plain.reserve(5).await, "counters", reserve);
    let sharded = handle(&reader, opts("ranges").ranges(4).build());
    assert_refused("sharded next", sharded.next().await, "counters", reserve);
    assert_refused("set_next", plain.set_next(10).await, "counters", set);
    assert_refused("reset", plain.reset().await, "counters", set);
    assert_refused("delete", plain.delete().await, "counters", delete);
    let daily = handle(&reader, opts("daily").prefix("YYMMDD").build());
    let purge = daily.purge_periods_before(mongo_sequence::jiff::civil::date(2025, 1, 1));
    assert_refused("purge_periods_before", purge.await, "counters", delete);
    assert_eq!(
        plain.current().await.unwrap(),
        None,
        "`find` is enough to read"
    );
    let mut session = reader.client().start_session().await.unwrap();
    let in_session = plain.reserve(1).session(&mut session).await;
    assert_refused("reserve in a session", in_session, "counters", reserve);

    // The counters: not even read.
    let items_only = login("items_only").await;
    let current = handle(&items_only, opts("plain").build()).current().await;
    assert_refused(
        "current",
        current,
        "counters",
        "`find` action on it to read a counter",
    );

    // The counters of the mongoose layout, without `createIndex`.
    let no_index = login("no_index").await;
    let mongoose = opts("m")
        .counters("identitycounters")
        .layout(Layout::MongooseSequence)
        .build();
    let first = handle(&no_index, mongoose).next().await;
    assert_refused(
        "mongoose index",
        first,
        "identitycounters",
        "`createIndex` action",
    );

    // Values given back after the privilege to update the counters was taken away.
    let releaser = login("releaser").await;
    let held = handle(&releaser, opts("held").batch(10).build());
    assert_eq!(held.next().await.unwrap(), 1);
    admin
        .run_command(doc! {
            "grantRolesToUser": "releaser",
            "roles": [{ "role": "read", "db": PATHS }],
        })
        .await
        .unwrap();
    admin
        .run_command(doc! {
            "revokeRolesFromUser": "releaser",
            "roles": [{ "role": "countersOnly", "db": PATHS }],
        })
        .await
        .unwrap();
    let release = held.release().await;
    assert_refused(
        "release",
        release,
        "counters",
        "`update` action on it to give values back",
    );

    // The target collections: counters written, documents not inserted.
    let counters_only = login("counters_only").await;
    let insert = "`insert` action on it to insert documents";
    let items = counters_only.collection::<Item>("items");
    let mut many = vec![Item { id: 0 }, Item { id: 0 }];
    let bulk = Item::insert_many_with_ids(&mut many, &items).await;
    assert_refused("insert_many_with_ids", bulk, "items", insert);
    let mut session = counters_only.client().start_session().await.unwrap();
    let one = Item { id: 0 }
        .insert_with_id(&items)
        .session(&mut session)
        .await;
    assert_refused("insert_with_id in a session", one, "items", insert);
    let lots = counters_only.collection::<Lot>("lots");
    let random = Lot { id: 0 }.insert_with_id(&lots).await;
    assert_refused("random insert_with_id", random, "lots", insert);
    let mut many = vec![Lot { id: 0 }, Lot { id: 0 }];
    let random = Lot::insert_many_with_ids(&mut many, &lots).await;
    assert_refused("random insert_many_with_ids", random, "lots", insert);
    let events = counters_only.collection::<Event>("events");
    let mut many = vec![Event {
        id: mongodb::bson::Uuid::new(),
    }];
    let generated = Event::insert_many_with_ids(&mut many, &events).await;
    assert_refused("uuid insert_many_with_ids", generated, "events", insert);

    // Confirming an insert whose outcome was unknown needs `find` on the target collection:
    // the first attempt is stored but its write concern is not confirmed, so the second one
    // meets the document and must read it.
    let app = "confirm-path";
    let fail = common::fail_point(
        &admin,
        doc! { "times": 1 },
        doc! {
            "failCommands": ["insert"],
            "appName": app,
            "writeConcernError": { "code": 64, "errmsg": "waiting for replication timed out" },
        },
    )
    .await;
    let no_find = common::client_with_app(&uri("no_find"), app, |_| {}).await;
    let notes = no_find.database(PATHS).collection::<Note>("notes");
    let note = Note {
        id: 0,
        text: "kept".into(),
    }
    .insert_with_id(&notes)
    .await;
    assert_eq!(fail.off().await, 1, "the fail point fired once");
    assert_refused(
        "confirm",
        note,
        "notes",
        "`find` action on it to confirm an insert",
    );

    // Skipping ahead of stored IDs, and syncing counters with them, read the target
    // collection: without `find` on it, the same error, naming it.
    db.collection::<Document>("imported")
        .insert_many((1..=3_i64).map(|i| doc! { "_id": i }))
        .await
        .unwrap();
    let no_find = login("no_find").await;
    let imported = no_find.collection::<Imported>("imported");
    let stored = "`find` action on it to find the IDs already stored";
    let skip = Imported { id: 0 }.insert_with_id(&imported).await;
    assert_refused("skip ahead", skip, "imported", stored);
    let sync = Imported::sync_counters(&imported).await;
    assert_refused("sync_counters", sync, "imported", stored);

    let stored = db
        .collection::<Document>("items")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(stored, 0, "no refused insert stored a document");
    println!("reliability: security paths=20 unauthorized=20");
    drop((root, db, admin));
    stop(server).await;
}
