//! Access control: a server started with `--auth`, users with the least privileges the README
//! documents, and users without write access to the counters, which get a clear error.

use crate::common;
use crate::common::models::Item;
use crate::common::opts;

use std::fmt::Debug;

use mongo_sequence::{options::Layout, Error, Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::{Client, Database};
use sequence_testkit::{ServerOptions, TestServer};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order25", batch = 25)]
struct CachedOrder {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", gapless)]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

/// The database of the least-privileged users.
const DB: &str = "shop";
/// The database of the `readWrite` user. (A cache of reserved IDs is shared per database name
/// within a process, so the two must not share one for the test to reach the server.)
const RW_DB: &str = "open";

/// Inserts one document of each model into `db` as `client`; returns the IDs.
async fn insert_all(client: &Client, db: &str) -> Result<Vec<i64>, Error> {
    let db = client.database(db);
    let mut ids = Vec::new();
    ids.push(
        Order { id: 0 }
            .insert_with_id(&db.collection("orders"))
            .await?,
    );
    ids.push(
        CachedOrder { id: 0 }
            .insert_with_id(&db.collection("cached_orders"))
            .await?,
    );
    ids.push(
        Invoice { id: 0 }
            .insert_with_id(&db.collection("invoices"))
            .await?,
    );
    let mut many = vec![Order { id: 0 }, Order { id: 0 }];
    ids.extend(Order::insert_many_with_ids(&mut many, &db.collection("orders")).await?);
    Ok(ids)
}

/// A server started with `--auth`, and a client of its `root` user.
async fn auth_server() -> (TestServer, Client) {
    let server =
        tokio::task::spawn_blocking(|| TestServer::start(ServerOptions::default().arg("--auth")))
            .await
            .unwrap()
            .expect("a mongod with --auth starts");
    let root = server.create_root_user("root", "root-pw").await;
    (server, root)
}

/// Creates in `db`, as `root`, a role of each name with its privileges, and a user of the same
/// name holding it (password `<name>-pw`).
async fn users_with_roles<'a>(
    root: &Client,
    db: &str,
    roles: impl IntoIterator<Item = (&'a str, Vec<Document>)>,
) {
    let admin = root.database("admin");
    for (name, privileges) in roles {
        root.database(db)
            .run_command(doc! { "createRole": name, "privileges": privileges, "roles": [] })
            .await
            .unwrap();
        admin
            .run_command(doc! {
                "createUser": name,
                "pwd": format!("{name}-pw"),
                "roles": [{ "role": name, "db": db }],
            })
            .await
            .unwrap();
    }
}

/// Stops `server` (off the async runtime, since stopping waits for the process).
async fn stop(server: TestServer) {
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}

/// The collection, the needed privileges and the server's code of an `Error::Unauthorized`.
fn refused(e: &Error) -> (String, &'static str, i32) {
    match e {
        Error::Unauthorized {
            namespace,
            needs,
            source,
        } => match &*source.kind {
            mongodb::error::ErrorKind::Command(c) => (namespace.clone(), *needs, c.code),
            other => panic!("expected a server error as source, got {other:?}"),
        },
        other => panic!("expected Error::Unauthorized, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn least_privilege_works_and_missing_privileges_are_named() {
    let (server, root) = auth_server().await;
    let shop = root.database(DB);
    // The documented minimum: find, update and insert on the counters, insert on the target
    // collections.
    shop.run_command(doc! {
        "createRole": "sequenceWriter",
        "privileges": [
            { "resource": { "db": DB, "collection": "counters" }, "actions": ["find", "update", "insert"] },
            { "resource": { "db": DB, "collection": "orders" }, "actions": ["insert"] },
            { "resource": { "db": DB, "collection": "cached_orders" }, "actions": ["insert"] },
            { "resource": { "db": DB, "collection": "invoices" }, "actions": ["insert"] },
        ],
        "roles": [],
    })
    .await
    .unwrap();
    // Writes to the target collections only.
    shop.run_command(doc! {
        "createRole": "ordersOnly",
        "privileges": [
            { "resource": { "db": DB, "collection": "orders" }, "actions": ["find", "insert"] },
        ],
        "roles": [],
    })
    .await
    .unwrap();
    // The counters, but not the target collection.
    shop.run_command(doc! {
        "createRole": "countersOnly",
        "privileges": [
            { "resource": { "db": DB, "collection": "counters" }, "actions": ["find", "update", "insert"] },
        ],
        "roles": [],
    })
    .await
    .unwrap();
    let admin = root.database("admin");
    for (user, role, db) in [
        ("rw", "readWrite", RW_DB),
        ("minimal", "sequenceWriter", DB),
        ("reader", "read", DB),
        ("orders_only", "ordersOnly", DB),
        ("counters_only", "countersOnly", DB),
    ] {
        admin
            .run_command(doc! {
                "createUser": user,
                "pwd": format!("{user}-pw"),
                "roles": [{ "role": role, "db": db }],
            })
            .await
            .unwrap();
    }
    let login = |user: &str| {
        let uri = server.uri_with_credentials(user, &format!("{user}-pw"));
        async move { Client::with_uri_str(uri).await.unwrap() }
    };

    // `readWrite` on the database is enough, from the first upsert of each counter on.
    let ids = insert_all(&login("rw").await, RW_DB).await.unwrap();
    assert_eq!(ids, vec![1, 1, 1, 2, 3]);
    // So is the minimal role, for plain, cached, gapless and bulk inserts.
    let ids = insert_all(&login("minimal").await, DB).await.unwrap();
    assert_eq!(ids, vec![1, 1, 1, 2, 3]);

    let mut messages = Vec::new();
    // Without write access to the counters: `Error::Unauthorized` naming the counters
    // collection and the actions a reservation needs, with the server's error 13 as source;
    // nothing is inserted.
    for user in ["reader", "orders_only"] {
        let client = login(user).await;
        let orders = client.database(DB).collection::<Order>("orders");
        let err = Order { id: 0 }.insert_with_id(&orders).await.unwrap_err();
        let (namespace, needs, code) = refused(&err);
        assert_eq!(
            (namespace.as_str(), code),
            ("shop.counters", 13),
            "{user}: {err}"
        );
        assert!(
            needs.contains("`find`, `update` and `insert`"),
            "{user}: {needs}"
        );
        let text = err.to_string();
        assert!(text.len() < 200, "{user}: a short message: {text}");
        println!("security: {user}: {text}");
        messages.push(format!("{user}: unauthorized on {namespace}"));
    }
    // Without insert on the target collection: the same for the target collection; the
    // number taken for the document is skipped.
    let client = login("counters_only").await;
    let orders = client.database(DB).collection::<Order>("orders");
    let err = Order { id: 0 }.insert_with_id(&orders).await.unwrap_err();
    let (namespace, needs, code) = refused(&err);
    assert_eq!((namespace.as_str(), code), ("shop.orders", 13), "{err}");
    assert!(needs.contains("`insert` action"), "{needs}");
    println!("security: counters_only: {err}");
    messages.push(format!("counters_only: unauthorized on {namespace}"));
    // A gapless insert refused the same way consumes no number: the transaction aborts.
    let invoices = client.database(DB).collection::<Invoice>("invoices");
    let err = Invoice { id: 0 }
        .insert_with_id(&invoices)
        .await
        .unwrap_err();
    let (namespace, _, code) = refused(&err);
    assert_eq!((namespace.as_str(), code), ("shop.invoices", 13), "{err}");
    let invoice_counter = shop
        .collection::<Document>("counters")
        .find_one(doc! { "_id": "invoice" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        invoice_counter.get_i64("seq"),
        Ok(1),
        "no gapless number consumed"
    );
    messages.push(format!(
        "counters_only gapless: unauthorized on {namespace}"
    ));

    let stored = shop
        .collection::<Document>("orders")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(stored, 3, "only the authorized inserts are stored");
    println!(
        "reliability: security users=5 authorized_inserts=10 refused=4 ({})",
        messages.join(", ")
    );
    drop((root, shop, admin));
    stop(server).await;
}

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

/// The database of the paths test.
const PATHS: &str = "paths";

/// Asserts that `result` is `Error::Unauthorized` on `paths.<collection>` for an operation
/// whose needs mention `needs`, with the server's error 13 as source.
fn assert_refused<T: Debug>(path: &str, result: Result<T, Error>, collection: &str, needs: &str) {
    match result {
        Err(e @ Error::Unauthorized { .. }) => {
            let (namespace, what, code) = refused(&e);
            assert_eq!(
                (namespace.as_str(), code),
                (format!("{PATHS}.{collection}").as_str(), 13),
                "{path}: {e}"
            );
            assert!(what.contains(needs), "{path}: {what}");
        }
        other => panic!("{path}: expected Error::Unauthorized, got {other:?}"),
    }
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

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "scoped_order", scope = "tenant")]
struct ScopedOrder {
    #[seq(id)]
    number: i64,
    tenant: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "recorded_order", scope = "tenant")]
struct RecordedOrder {
    #[seq(id)]
    number: i64,
    tenant: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "bill", scope = "tenant", unique = "proxy")]
struct Bill {
    #[seq(id)]
    number: i64,
    tenant: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "claimed", unique = "proxy")]
struct Claimed {
    #[serde(rename = "_id")]
    id: i64,
}

/// The rows of the privileges table beyond reserving and inserting: the record of a sequence's
/// settings (optional: numbering goes on without it), `ensure_indexes` (`listIndexes`,
/// `createIndex`), the check of the first insert (skipped without `listIndexes`), proxy inserts
/// (`insert` on the proxy collection), and `check`/`repair` of the claims; each missing
/// privilege named with its purpose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_indexes_proxies_and_claims_need_what_the_table_says() {
    let (server, root) = auth_server().await;
    let db = root.database(PATHS);
    let on = |collection: &str, actions: &[&str]| {
        doc! { "resource": { "db": PATHS, "collection": collection }, "actions": actions }
    };
    let writer = ["find", "update", "insert"];
    let roles = [
        (
            "plain",
            vec![on("counters", &writer), on("scoped_orders", &["insert"])],
        ),
        (
            "recorder",
            vec![
                on("counters", &writer),
                on("counters.sequences", &["update", "insert"]),
                on("scoped_orders", &["insert"]),
            ],
        ),
        (
            "lister",
            vec![
                on("counters", &writer),
                on("scoped_orders", &["listIndexes"]),
            ],
        ),
        (
            "indexer",
            vec![
                on("counters", &writer),
                on("scoped_orders", &["listIndexes", "createIndex"]),
            ],
        ),
        (
            "claimer",
            vec![on("counters", &writer), on("claimed", &["insert"])],
        ),
        (
            "claims_reader",
            vec![
                on("claimed", &["find"]),
                on("claimed.claims._id", &["find"]),
            ],
        ),
        ("target_reader", vec![on("claimed", &["find"])]),
        (
            "scoped_claimer",
            vec![
                on("counters", &writer),
                on("bills", &["insert"]),
                on("bills.claims.number", &["find", "insert"]),
            ],
        ),
    ];
    users_with_roles(&root, PATHS, roles).await;
    let login = |user: &str| {
        let uri = server.uri_with_credentials(user, &format!("{user}-pw"));
        async move { Client::with_uri_str(uri).await.unwrap().database(PATHS) }
    };
    let order = |tenant: &str| ScopedOrder {
        number: 0,
        tenant: tenant.into(),
    };
    let record = || async {
        mongo_sequence::store::SequenceRecord::read(&db, "counters", "scoped_order")
            .await
            .unwrap()
    };

    // Without privileges on `counters.sequences` numbering goes on, and nothing is recorded;
    // without `listIndexes` the first insert's check of the indexes is skipped.
    let plain = login("plain").await;
    let orders = plain.collection::<ScopedOrder>("scoped_orders");
    assert_eq!(order("acme").insert_with_id(&orders).await.unwrap(), 1);
    assert_eq!(record().await, None, "no privilege, no record");

    // `ensure_indexes`: `listIndexes`, then `createIndex`, each named when missing.
    let refused_list = ScopedOrder::ensure_indexes(&orders).await;
    assert_refused(
        "ensure_indexes without listIndexes",
        refused_list,
        "scoped_orders",
        "`listIndexes` action on it to find the indexes a model needs",
    );
    let lister = login("lister").await;
    let refused_create = ScopedOrder::ensure_indexes(&lister.collection("scoped_orders")).await;
    assert_refused(
        "ensure_indexes without createIndex",
        refused_create,
        "scoped_orders",
        "`createIndex` action on it for the unique index of the ID field",
    );
    let indexer = login("indexer").await;
    let report = ScopedOrder::ensure_indexes(&indexer.collection("scoped_orders"))
        .await
        .unwrap();
    assert_eq!(report.created().count(), 1, "{report:?}");

    // With `update` and `insert` on `counters.sequences`, recorded. (A process records a
    // sequence once, whether it could or not: another sequence shows it.)
    let recorder = login("recorder").await;
    let recorded = recorder.collection::<RecordedOrder>("scoped_orders");
    let mut first = RecordedOrder {
        number: 0,
        tenant: "globex".into(),
    };
    assert_eq!(first.insert_with_id(&recorded).await.unwrap(), 1);
    let record = mongo_sequence::store::SequenceRecord::read(&db, "counters", "recorded_order")
        .await
        .unwrap()
        .expect("recorded with the privileges");
    assert_eq!(record.scope, ["tenant"]);

    // Proxy inserts write the claim: without `insert` on the proxy collection, refused,
    // naming it; nothing is stored.
    let claimer = login("claimer").await;
    let claimed = claimer.collection::<Claimed>("claimed");
    let refused_claim = Claimed { id: 0 }.insert_with_id(&claimed).await;
    assert_refused(
        "proxy insert",
        refused_claim,
        "claimed.claims._id",
        "`insert` action on it to insert documents",
    );
    assert_eq!(
        db.collection::<Document>("claimed")
            .count_documents(doc! {})
            .await
            .unwrap(),
        0
    );

    // A scoped proxy's first insert makes sure its claims are indexed: without `createIndex`
    // on the proxy collection, refused, naming that index.
    let scoped_claimer = login("scoped_claimer").await;
    let mut bill = Bill {
        number: 0,
        tenant: "acme".into(),
    };
    let refused_index = bill
        .insert_with_id(&scoped_claimer.collection("bills"))
        .await;
    assert_refused(
        "scoped proxy index",
        refused_index,
        "bills.claims.number",
        "`createIndex` action on it for the index of the claims of a scoped",
    );

    // `check` reads the target and the proxy collection; `repair` writes the claims.
    let target_reader = login("target_reader").await;
    let claims = mongo_sequence::claims::Claims::with_default_proxy(
        &target_reader.collection::<Document>("claimed"),
        "_id",
    );
    assert_refused(
        "check without find on the proxy",
        claims.check().await,
        "claimed.claims._id",
        "`find` action on it to check the claims of IDs",
    );
    let claims_reader = login("claims_reader").await;
    db.collection::<Document>("claimed")
        .insert_one(doc! { "_id": 7_i64 })
        .await
        .unwrap();
    let claims = mongo_sequence::claims::Claims::with_default_proxy(
        &claims_reader.collection::<Document>("claimed"),
        "_id",
    );
    let report = claims.check().await.unwrap();
    assert!(!report.is_clean(), "the unclaimed document is found");
    assert_refused(
        "repair without insert on the proxy",
        claims.repair().await,
        "claimed.claims._id",
        "`insert`, `update` and `remove` actions on it to repair the claims",
    );
    println!("reliability: security rows=7 unauthorized=6");
    drop((root, db));
    stop(server).await;
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "tenant_ticket", scope = "tenant", batch = 25)]
struct TenantTicket {
    #[seq(id)]
    number: Option<i64>,
    tenant: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "slip", unique = "proxy")]
struct Slip {
    #[seq(id)]
    number: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "shop_bill", scope = "shop", unique = "proxy")]
struct ShopBill {
    #[seq(id)]
    number: Option<i64>,
    shop: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "m_ticket",
    scope = "tenant",
    layout = "mongoose_sequence",
    counters = "mcounters"
)]
struct MongooseTicket {
    #[seq(id)]
    number: Option<i64>,
    tenant: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "f_ticket",
    scope = "shop",
    counters = "idcounters",
    field = "c",
    filter(m = name, shop = scope(shop))
)]
struct FilterTicket {
    #[seq(id)]
    number: Option<i64>,
    shop: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "daily", prefix = "YYMMDD", batch = 10)]
struct DailyNote {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

/// The paths beside plain, cached, gapless and bulk inserts — scoped, proxy (scoped or not),
/// another library's layout, a filter, periods, and the operator's calls — each run by a user
/// with exactly the privileges the guarantees chapter lists for it, and numbering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_minimal_roles_of_the_table_number_every_path() {
    const DB: &str = "least";
    let (server, root) = auth_server().await;
    let db = root.database(DB);
    let on = |collection: &str, actions: &[&str]| {
        doc! { "resource": { "db": DB, "collection": collection }, "actions": actions }
    };
    let reserve = ["find", "update", "insert"];
    let roles = [
        (
            "scoped",
            vec![on("counters", &reserve), on("tenant_tickets", &["insert"])],
        ),
        (
            "operator",
            vec![on("counters", &["find", "update", "insert", "remove"])],
        ),
        (
            "proxied",
            vec![
                on("counters", &reserve),
                on("slips", &["insert"]),
                on("slips.claims.number", &["insert", "find"]),
            ],
        ),
        (
            "scoped_proxied",
            vec![
                on("counters", &reserve),
                on("shop_bills", &["insert"]),
                on(
                    "shop_bills.claims.number",
                    &["insert", "find", "createIndex"],
                ),
            ],
        ),
        (
            "mongoose",
            vec![
                on("mcounters", &["find", "update", "insert", "createIndex"]),
                on("m_tickets", &["insert"]),
            ],
        ),
        (
            "filtered",
            vec![
                on("idcounters", &["find", "update", "insert", "createIndex"]),
                on("f_tickets", &["insert"]),
            ],
        ),
        (
            "periodic",
            vec![
                on("counters", &["find", "update", "insert", "remove"]),
                on("notes", &["insert"]),
            ],
        ),
    ];
    users_with_roles(&root, DB, roles).await;
    let login = |user: &str| {
        let uri = server.uri_with_credentials(user, &format!("{user}-pw"));
        async move { Client::with_uri_str(uri).await.unwrap().database(DB) }
    };

    // Scoped, with a batch: a first value, then the tenant's cache; and an operator-shaped
    // tenant, numbered on a counter of its own.
    let scoped = login("scoped").await;
    let tickets = scoped.collection::<TenantTicket>("tenant_tickets");
    let ticket = |tenant: &str| TenantTicket {
        number: None,
        tenant: tenant.into(),
    };
    for expected in [1, 2, 3] {
        assert_eq!(
            ticket("acme").insert_with_id(&tickets).await.unwrap(),
            expected
        );
    }
    assert_eq!(
        ticket("{\"$ne\":null}")
            .insert_with_id(&tickets)
            .await
            .unwrap(),
        1
    );
    let mut many = [ticket("globex"), ticket("globex")];
    let ids = TenantTicket::insert_many_with_ids(&mut many, &tickets)
        .await
        .unwrap();
    assert_eq!(ids, vec![1, 2]);
    let acme = mongo_sequence::Scope::new().with("tenant", "acme");
    TenantTicket::sequence(&tickets).release().await.unwrap();

    // The operator's calls on a scoped counter: `set_next`, `reset`, `release`, `delete`.
    let operator = login("operator").await;
    let seq = TenantTicket::sequence(&operator.collection("tenant_tickets"));
    let scoped_seq = seq.in_scope(acme).unwrap();
    scoped_seq.set_next(100).await.unwrap();
    assert_eq!(scoped_seq.current().await.unwrap(), Some(99));
    assert_eq!(scoped_seq.next().await.unwrap(), 100);
    seq.release().await.unwrap();
    scoped_seq.reset().await.unwrap();
    assert!(scoped_seq.delete().await.unwrap());

    // Proxy inserts, unscoped and scoped (the first of a process creates the claims' index).
    let proxied = login("proxied").await;
    let slips = proxied.collection::<Slip>("slips");
    for expected in [1, 2] {
        let id = Slip { number: None }.insert_with_id(&slips).await.unwrap();
        assert_eq!(id, expected);
    }
    let scoped_proxied = login("scoped_proxied").await;
    let bills = scoped_proxied.collection::<ShopBill>("shop_bills");
    for (shop, expected) in [("a", 1), ("a", 2), ("b", 1)] {
        let mut bill = ShopBill {
            number: None,
            shop: shop.into(),
        };
        assert_eq!(bill.insert_with_id(&bills).await.unwrap(), expected);
    }

    // Another library's layout and a filter, in counters collections of their own: the first
    // reservation ensures their index.
    let mongoose = login("mongoose").await;
    let m_tickets = mongoose.collection::<MongooseTicket>("m_tickets");
    for expected in [1, 2] {
        let mut t = MongooseTicket {
            number: None,
            tenant: "acme".into(),
        };
        assert_eq!(t.insert_with_id(&m_tickets).await.unwrap(), expected);
    }
    let filtered = login("filtered").await;
    let f_tickets = filtered.collection::<FilterTicket>("f_tickets");
    for expected in [1, 2] {
        let mut t = FilterTicket {
            number: None,
            shop: "acme".into(),
        };
        assert_eq!(t.insert_with_id(&f_tickets).await.unwrap(), expected);
    }

    // Periods: daily IDs on a clock of the test's, then the purge of the days before today.
    let periodic = login("periodic").await;
    let notes = periodic.collection::<DailyNote>("notes");
    let clock = std::sync::Arc::new(mongo_sequence::clock::ManualClock::new(
        "2025-11-20T12:00:00Z".parse().unwrap(),
    ));
    let seq = DailyNote::sequence(&notes);
    seq.set_clock(clock.clone());
    let id = DailyNote { id: None }.insert_with_id(&notes).await.unwrap();
    assert_eq!(id, 251_120_000_001);
    seq.release().await.unwrap();
    clock.advance(mongo_sequence::jiff::SignedDuration::from_hours(48));
    let today = mongo_sequence::jiff::civil::date(2025, 11, 22);
    assert_eq!(seq.purge_periods_before(today).await.unwrap(), 1);

    let counters: Vec<Document> = common::all(&db.collection::<Document>("counters")).await;
    let idcounters: Vec<Document> = common::all(&db.collection::<Document>("idcounters")).await;
    println!(
        "reliability: least-privilege roles=7 paths=scoped,operator,proxy,scoped_proxy,mongoose,filter,periodic counters={} idcounters={}",
        counters.len(),
        idcounters.len()
    );
    drop((root, db));
    stop(server).await;
}
