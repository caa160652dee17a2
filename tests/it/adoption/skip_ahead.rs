//! Inserts over documents imported with their IDs skip ahead of them: with batch 1 and 25 (a
//! few round trips per conflict), in bulk, per scope in another field, within a period, by the
//! number of a text ID, gapless without a hole, within a shard; in the caller's session they
//! say to sync instead, and a stored ID beyond `max` is a typed error.

use crate::common;

use std::sync::Arc;

use mongo_sequence::{clock::ManualClock, Error, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::options::IndexOptions;
use mongodb::IndexModel;
use serde::{Deserialize, Serialize};

use super::{
    import, over_imported, stored_ids, Account, Daily, Invoice, Label, Legacy, Order, Small, TASKS,
};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "legacy25", batch = 25)]
struct Legacy25 {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "receipt", gapless)]
struct Receipt {
    #[serde(rename = "_id")]
    id: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_1_skips_ahead_of_imported_documents() {
    let (stats, sent) = over_imported("adopt_batch_1", |task| Legacy { id: 0, task }).await;
    // Each task meets the imported IDs at most twice (an ID it took before another task moved
    // the counter up), whatever the number of imported documents.
    assert!(
        (1..=2 * u64::from(TASKS)).contains(&stats.skipped_ahead),
        "{stats:?}"
    );
    // Per conflict: one search for the highest stored ID, one reservation above it, one insert.
    // (A first upsert that lost the race to create the counter reads it once too.)
    assert_eq!(sent.finds, stats.skipped_ahead + stats.retries);
    let inserts = u64::from(TASKS) * common::pick(10, 200);
    assert_eq!(sent.inserts, inserts + stats.skipped_ahead);
    assert_eq!(
        sent.round_trips,
        stats.reservations + stats.retries,
        "one findAndModify per reservation, the skips included"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_25_skips_ahead_of_imported_documents() {
    let (stats, sent) = over_imported("adopt_batch_25", |task| Legacy25 { id: 0, task }).await;
    assert!(
        (1..=2 * u64::from(TASKS)).contains(&stats.skipped_ahead),
        "{stats:?}"
    );
    assert_eq!(sent.finds, stats.skipped_ahead + stats.retries);
    assert_eq!(
        sent.inserts,
        u64::from(TASKS) * common::pick(10, 200) + stats.skipped_ahead
    );
    // The cached values below the stored IDs are dropped, not handed out one by one.
    assert!(stats.wasted >= 20, "{stats:?}");
}

#[tokio::test]
async fn bulk_inserts_continue_above_imported_documents() {
    let db = common::database("adopt_bulk").await;
    let raw = db.collection::<Document>("docs");
    import(&raw, (1..=100_i64).map(|i| doc! { "_id": i, "task": 99 })).await;
    let coll = db.collection::<Legacy>("docs");
    let mut docs: Vec<Legacy> = (0..150).map(|task| Legacy { id: 0, task }).collect();
    let ids = Legacy::insert_many_with_ids(&mut docs, &coll)
        .await
        .unwrap();
    assert_eq!(ids.len(), 150);
    assert!(ids.iter().all(|&id| id > 100), "{ids:?}");
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "one contiguous range"
    );
    let fields: Vec<i64> = docs.iter().map(|d| d.id).collect();
    assert_eq!(fields, ids, "the documents hold their stored IDs");
    assert_eq!(stored_ids(&raw, "_id").await.len(), 250);
    assert_eq!(Legacy::sequence(&coll).stats().skipped_ahead, 1);
}

#[tokio::test]
async fn scoped_ids_in_another_field_skip_ahead_per_scope() {
    let db = common::database("adopt_scoped").await;
    let raw = db.collection::<Document>("orders");
    // The unique index that lets the server report a duplicate ID, per customer.
    for keys in [
        doc! { "customerId": 1, "orderNumber": 1 },
        doc! { "code": 1 },
    ] {
        let unique = IndexOptions::builder().unique(true).build();
        let index = IndexModel::builder().keys(keys).options(unique).build();
        raw.create_index(index).await.unwrap();
    }
    let imported = |customer: &str, n: i64| {
        doc! { "orderNumber": n, "customerId": customer, "code": format!("{customer}-{n}") }
    };
    import(&raw, (1..=50).map(|n| imported("acme", n))).await;
    import(&raw, (1..=5).map(|n| imported("globex", n))).await;
    let orders = db.collection::<Order>("orders");
    let order = |customer: &str, code: &str| Order {
        oid: None,
        order_number: 0,
        customer_id: customer.into(),
        code: code.into(),
    };
    assert_eq!(
        order("acme", "a1").insert_with_id(&orders).await.unwrap(),
        51
    );
    assert_eq!(
        order("globex", "g1").insert_with_id(&orders).await.unwrap(),
        6
    );
    assert_eq!(
        order("acme", "a2").insert_with_id(&orders).await.unwrap(),
        52
    );
    assert_eq!(
        order("initech", "i1")
            .insert_with_id(&orders)
            .await
            .unwrap(),
        1
    );
    let skipped = Order::sequence(&orders).stats().skipped_ahead;
    assert_eq!(skipped, 2, "one skip per scope that has imported orders");
    // A duplicate on another unique index is the caller's: no skip, no retry.
    match order("acme", "a1").insert_with_id(&orders).await {
        Err(Error::DuplicateKey { message, .. }) => assert!(message.contains("code"), "{message}"),
        other => panic!("expected the duplicate code, got {other:?}"),
    }
    assert_eq!(Order::sequence(&orders).stats().skipped_ahead, skipped);
}

#[tokio::test]
async fn period_prefixes_skip_ahead_within_their_period() {
    let db = common::database("adopt_periods").await;
    let clock = Arc::new(ManualClock::new("2025-11-22T10:00:00Z".parse().unwrap()));

    let raw = db.collection::<Document>("invoices");
    import(
        &raw,
        (1..=42).map(|n| doc! { "_id": format!("INV-251122-{n:04}") }),
    )
    .await;
    import(
        &raw,
        [
            doc! { "_id": "INV-251121-0100" },
            doc! { "_id": "INV-251122-12x4" },
            doc! { "_id": 7_i64 },
        ],
    )
    .await;
    let invoices = db.collection::<Invoice>("invoices");
    Invoice::sequence(&invoices).set_clock(clock.clone());
    let mut invoice = Invoice { id: String::new() };
    let id = invoice.insert_with_id(&invoices).await.unwrap();
    assert_eq!(
        id, "INV-251122-0043",
        "after the highest of the day, whatever else is stored"
    );
    assert_eq!(invoice.id, id);

    let raw = db.collection::<Document>("daily");
    import(
        &raw,
        (1..=10).map(|n| doc! { "_id": 251_122_000_000_i64 + n }),
    )
    .await;
    let daily = db.collection::<Daily>("daily");
    Daily::sequence(&daily).set_clock(clock.clone());
    assert_eq!(
        Daily { id: 0 }.insert_with_id(&daily).await.unwrap(),
        251_122_000_011
    );
}

#[tokio::test]
async fn unpadded_text_ids_skip_ahead_by_their_number() {
    let db = common::database("adopt_text").await;
    let raw = db.collection::<Document>("labels");
    // As text, "9" sorts after "30": the highest is found by number.
    import(&raw, (1..=30).map(|n| doc! { "_id": n.to_string() })).await;
    let labels = db.collection::<Label>("labels");
    let id = Label { id: String::new() }
        .insert_with_id(&labels)
        .await
        .unwrap();
    assert_eq!(id, "31");
}

#[tokio::test]
async fn gapless_numbers_continue_after_imported_documents_without_a_hole() {
    let db = common::database("adopt_gapless").await;
    let raw = db.collection::<Document>("receipts");
    import(&raw, (1..=20_i64).map(|i| doc! { "_id": i })).await;
    let receipts = db.collection::<Receipt>("receipts");
    for want in 21..=23 {
        assert_eq!(
            Receipt { id: 0 }.insert_with_id(&receipts).await.unwrap(),
            want
        );
    }
    let mut more = vec![Receipt { id: 0 }, Receipt { id: 0 }];
    assert_eq!(
        Receipt::insert_many_with_ids(&mut more, &receipts)
            .await
            .unwrap(),
        [24, 25]
    );
    assert_eq!(stored_ids(&raw, "_id").await, (1..=25).collect::<Vec<_>>());
    assert_eq!(
        Receipt::sequence(&receipts).current().await.unwrap(),
        Some(25)
    );
}

#[tokio::test]
async fn inserts_in_the_callers_session_say_to_sync() {
    let db = common::database("adopt_session").await;
    let raw = db.collection::<Document>("docs");
    import(&raw, [doc! { "_id": 1_i64, "task": 99 }]).await;
    let coll = db.collection::<Legacy>("docs");
    let mut session = db.client().start_session().await.unwrap();
    let err = Legacy { id: 0, task: 1 }
        .insert_with_id(&coll)
        .session(&mut session)
        .await
        .unwrap_err();
    match &err {
        Error::IdTaken { id, counter, .. } => {
            assert_eq!((id.as_str(), counter.as_str()), ("1", "legacy"));
            let text = err.to_string();
            assert!(text.contains("sync_counters"), "{text}");
        }
        other => panic!("expected IdTaken, got {other:?}"),
    }
    assert_eq!(stored_ids(&raw, "_id").await, [1]);
}

#[tokio::test]
async fn sharded_sequences_skip_ahead_within_a_shard() {
    let db = common::database("adopt_sharded").await;
    let raw = db.collection::<Document>("accounts");
    // Shards of 1..=4000 hold 1000 values each; the first two are partly imported.
    import(&raw, (1..=300_i64).map(|i| doc! { "_id": i })).await;
    import(&raw, (1001..=1200_i64).map(|i| doc! { "_id": i })).await;
    let accounts = db.collection::<Account>("accounts");
    let mut ids = Vec::new();
    for _ in 0..40 {
        ids.push(Account { id: 0 }.insert_with_id(&accounts).await.unwrap());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 40);
    assert!(ids
        .iter()
        .all(|&id| !(1..=300).contains(&id) && !(1001..=1200).contains(&id)));
    let skipped = Account::sequence(&accounts).stats().skipped_ahead;
    assert!(
        skipped <= 2,
        "at most one skip per imported shard: {skipped}"
    );
}

#[tokio::test]
async fn a_stored_id_beyond_max_is_a_typed_error() {
    let db = common::database("adopt_beyond").await;
    let raw = db.collection::<Document>("smalls");
    import(&raw, [doc! { "_id": 1_i64 }, doc! { "_id": 500_i64 }]).await;
    let smalls = db.collection::<Small>("smalls");
    match (Small { id: 0 }).insert_with_id(&smalls).await {
        Err(
            e @ Error::StoredBeyondMax {
                stored: 500,
                max: 100,
                ..
            },
        ) => {
            assert!(e.to_string().contains("raise `max`"), "{e}");
        }
        other => panic!("expected StoredBeyondMax, got {other:?}"),
    }
    assert_eq!(stored_ids(&raw, "_id").await, [1, 500], "nothing inserted");
    let counter = Small::sequence(&smalls).current().await.unwrap();
    assert_eq!(
        counter,
        Some(1),
        "the counter did not move to a wrong value"
    );
}
