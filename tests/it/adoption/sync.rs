//! `sync_counters` moves each counter up to the highest ID stored (never down): of every period
//! of a prefix, every scope under its stored name, every shard, in another library's layout; a
//! dry run moves nothing, the caller's session holds the move, and a stored value beyond `max`
//! or a collection without the ID field writes nothing.

use crate::common;

use mongo_sequence::{Error, SequentialId};
use mongodb::bson::{doc, Document};
use serde::{Deserialize, Serialize};

use super::{import, rows, Account, Daily, Invoice, Label, Legacy, Order, Small};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "shared",
    layout = "mongoose_sequence",
    counters = "identitycounters"
)]
struct Shared {
    #[serde(rename = "_id")]
    id: i64,
}

/// A voucher numbered by a plain counter, for the forms of a model's `sync_counters`.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "voucher")]
struct Voucher {
    #[serde(rename = "_id")]
    id: i64,
}

#[tokio::test]
async fn sync_moves_a_counter_to_the_stored_maximum_and_never_down() {
    let db = common::database("sync_plain").await;
    let raw = db.collection::<Document>("docs");
    import(&raw, (1..=500_i64).map(|i| doc! { "_id": i, "task": 99 })).await;
    import(&raw, [doc! { "_id": "x", "task": 99 }]).await;
    let coll = db.collection::<Legacy>("docs");
    let report = Legacy::sync_counters(&coll).await.unwrap();
    assert_eq!(rows(&report), [("legacy".into(), None, 500, 500, 500)]);
    assert_eq!(
        report.skipped, 1,
        "the text ID is not a number of this model"
    );
    assert_eq!(
        Legacy { id: 0, task: 1 }
            .insert_with_id(&coll)
            .await
            .unwrap(),
        501
    );
    assert_eq!(
        Legacy::sequence(&coll).stats().skipped_ahead,
        0,
        "no collision left"
    );
    // Again: the counter, now ahead of the stored maximum, stays where it is.
    Legacy::sequence(&coll).set_next(1000).await.unwrap();
    let report = Legacy::sync_counters(&coll).await.unwrap();
    assert_eq!(rows(&report), [("legacy".into(), Some(999), 999, 501, 501)]);
    assert!(!report.counters[0].moved());
}

#[tokio::test]
async fn sync_finds_every_period_of_a_prefix() {
    let db = common::database("sync_periods").await;
    let raw = db.collection::<Document>("invoices");
    let days = [("251120", 7), ("251121", 12), ("251122", 3)];
    for (day, last) in days {
        import(
            &raw,
            (1..=last).map(|n| doc! { "_id": format!("INV-{day}-{n:04}") }),
        )
        .await;
    }
    import(
        &raw,
        [
            doc! { "_id": "INV-2511x2-0001" },
            doc! { "_id": "INV-251122-001" },
            doc! { "_id": 5_i64 },
        ],
    )
    .await;
    let invoices = db.collection::<Invoice>("invoices");
    let report = Invoice::sync_counters(&invoices).await.unwrap();
    assert_eq!(
        rows(&report),
        [
            (
                r#"{ "seq": "invoice", "period": "20251120" }"#.into(),
                None,
                7,
                7,
                7
            ),
            (
                r#"{ "seq": "invoice", "period": "20251121" }"#.into(),
                None,
                12,
                12,
                12
            ),
            (
                r#"{ "seq": "invoice", "period": "20251122" }"#.into(),
                None,
                3,
                3,
                3
            ),
        ]
    );
    assert_eq!(report.skipped, 3);

    let raw = db.collection::<Document>("daily");
    import(
        &raw,
        (1..=10).map(|n| doc! { "_id": 251_122_000_000_i64 + n }),
    )
    .await;
    import(&raw, [doc! { "_id": 251_121_000_005_i64 }]).await;
    let daily = db.collection::<Daily>("daily");
    let report = Daily::sync_counters(&daily).await.unwrap();
    let news: Vec<i64> = report.counters.iter().map(|c| c.new).collect();
    assert_eq!(news, [5, 10]);
}

#[tokio::test]
async fn sync_finds_every_scope_under_its_stored_name() {
    let db = common::database("sync_scopes").await;
    let raw = db.collection::<Document>("orders");
    let imported = |customer: &str, n: i64| {
        doc! { "orderNumber": n, "customerId": customer, "code": format!("{customer}-{n}") }
    };
    import(&raw, (1..=50).map(|n| imported("acme", n))).await;
    import(&raw, (1..=5).map(|n| imported("globex", n))).await;
    let orders = db.collection::<Order>("orders");
    let report = Order::sync_counters(&orders).await.unwrap();
    assert_eq!(
        rows(&report),
        [
            (
                r#"{ "seq": "order", "scope": { "customer_id": "acme" } }"#.into(),
                None,
                50,
                50,
                50
            ),
            (
                r#"{ "seq": "order", "scope": { "customer_id": "globex" } }"#.into(),
                None,
                5,
                5,
                5
            ),
        ]
    );
    let order = Order {
        oid: None,
        order_number: 0,
        customer_id: "globex".into(),
        code: "g".into(),
    };
    assert_eq!(order.clone().insert_with_id(&orders).await.unwrap(), 6);
}

#[tokio::test]
async fn sync_finds_every_shard() {
    let db = common::database("sync_shards").await;
    let raw = db.collection::<Document>("accounts");
    import(&raw, (1..=300_i64).map(|i| doc! { "_id": i })).await;
    import(&raw, (1001..=1200_i64).map(|i| doc! { "_id": i })).await;
    import(&raw, [doc! { "_id": 3500_i64 }]).await;
    let accounts = db.collection::<Account>("accounts");
    let report = Account::sync_counters(&accounts).await.unwrap();
    let moved: Vec<(i64, u64)> = report.counters.iter().map(|c| (c.new, c.ids)).collect();
    assert_eq!(moved, [(300, 300), (1200, 200), (3500, 1)]);
    for _ in 0..40 {
        Account { id: 0 }.insert_with_id(&accounts).await.unwrap();
    }
    assert_eq!(Account::sequence(&accounts).stats().skipped_ahead, 0);
}

#[tokio::test]
async fn sync_writes_mongoose_counters() {
    let db = common::database("sync_mongoose").await;
    let raw = db.collection::<Document>("shared");
    import(&raw, (1..=20_i64).map(|i| doc! { "_id": i })).await;
    let shared = db.collection::<Shared>("shared");
    let report = Shared::sync_counters(&shared).await.unwrap();
    assert_eq!(report.counters.len(), 1);
    let counter = db
        .collection::<Document>("identitycounters")
        .find_one(doc! { "id": "shared" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        counter.get("reference_value"),
        Some(&mongodb::bson::Bson::Null)
    );
    assert_eq!(counter.get_i64("seq"), Ok(20));
    assert_eq!(Shared { id: 0 }.insert_with_id(&shared).await.unwrap(), 21);
}

#[tokio::test]
async fn a_dry_run_moves_nothing_and_text_ids_count_by_number() {
    let db = common::database("sync_dry_run").await;
    let raw = db.collection::<Document>("labels");
    import(&raw, (1..=30).map(|n| doc! { "_id": n.to_string() })).await;
    import(&raw, [doc! { "_id": "abc" }, doc! { "_id": "0042x" }]).await;
    let seq = Label::sequence(&db.collection::<Label>("labels"));
    let report = seq
        .sync_counters(&raw, "_id")
        .text(true)
        .dry_run(true)
        .await
        .unwrap();
    assert!(report.dry_run);
    assert_eq!(rows(&report), [("label".into(), None, 30, 30, 30)]);
    assert_eq!(report.skipped, 2);
    assert_eq!(seq.current().await.unwrap(), None, "nothing was written");
}

#[tokio::test]
async fn sync_refuses_a_stored_value_beyond_max_and_writes_nothing() {
    let db = common::database("sync_beyond").await;
    let raw = db.collection::<Document>("smalls");
    import(&raw, [doc! { "_id": 7_i64 }, doc! { "_id": 500_i64 }]).await;
    let smalls = db.collection::<Small>("smalls");
    match Small::sync_counters(&smalls).await {
        Err(Error::StoredBeyondMax { stored: 500, .. }) => {}
        other => panic!("expected StoredBeyondMax, got {other:?}"),
    }
    assert_eq!(Small::sequence(&smalls).current().await.unwrap(), None);
}

/// A model's `sync_counters` is an action: a dry run says where the counter would move and
/// moves nothing, and in the caller's transaction the counter moves only if it commits.
#[tokio::test]
async fn a_models_sync_takes_a_dry_run_and_the_callers_session() {
    let db = common::database("sync_action").await;
    let raw = db.collection::<Document>("vouchers");
    import(&raw, (1..=40_i64).map(|n| doc! { "_id": n })).await;
    let vouchers = db.collection::<Voucher>("vouchers");
    let seq = Voucher::sequence(&vouchers);

    let dry = Voucher::sync_counters(&vouchers)
        .dry_run(true)
        .await
        .unwrap();
    assert!(dry.dry_run, "{dry:?}");
    assert_eq!(
        (dry.counters.len(), dry.counters[0].new),
        (1, 40),
        "{dry:?}"
    );
    assert_eq!(
        seq.current().await.unwrap(),
        None,
        "a dry run moves nothing"
    );

    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let report = Voucher::sync_counters(&vouchers)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(report.counters[0].new, 40, "{report:?}");
    session.abort_transaction().await.unwrap();
    assert_eq!(
        seq.current().await.unwrap(),
        None,
        "undone with the transaction"
    );

    session.start_transaction().await.unwrap();
    Voucher::sync_counters(&vouchers)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    assert_eq!(seq.current().await.unwrap(), Some(40));
    let mut next = Voucher { id: 0 };
    assert_eq!(next.insert_with_id(&vouchers).await.unwrap(), 41);
}

#[tokio::test]
async fn sync_of_a_collection_without_the_id_field_changes_nothing() {
    let db = common::database("sync_no_field").await;
    let raw = db.collection::<Document>("orders");
    import(
        &raw,
        (1..=5).map(|n| doc! { "customerId": "acme", "code": n }),
    )
    .await;
    let orders = db.collection::<Order>("orders");
    let report = Order::sync_counters(&orders).await.unwrap();
    assert!(
        report.counters.is_empty() && report.skipped == 0,
        "{report:?}"
    );
    let counters = db
        .collection::<Document>("counters")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(counters, 0, "no counter written");
}
