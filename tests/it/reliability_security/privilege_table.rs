//! The privileges table of the guarantees chapter, row by row: the record of a sequence's
//! settings, `ensure_indexes`, proxy inserts and the claims' `check` and `repair` name what
//! they miss; and a user with exactly the minimal role of each path (scoped, operator, proxy,
//! another library's layout, a filter, periods) numbers it.

use crate::common;

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Document};
use mongodb::Client;
use serde::{Deserialize, Serialize};

use super::{assert_refused, auth_server, stop, users_with_roles, PATHS};

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
