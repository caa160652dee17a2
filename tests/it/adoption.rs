//! Adopting existing data: inserts over documents imported with their IDs (and no counter) skip
//! ahead of the stored IDs, for every counter strategy, period prefix, scope and insert path,
//! at a cost of a few round trips per conflict, not one per imported document.

use crate::common;

use std::sync::Arc;

use mongo_sequence::{clock::ManualClock, Error, SequentialId};
use mongodb::bson::{doc, oid::ObjectId, Bson, Document};
use mongodb::options::IndexOptions;
use mongodb::{Collection, IndexModel};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "legacy")]
struct Legacy {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "legacy25", batch = 25)]
struct Legacy25 {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
}

/// Stored as `{ _id, orderNumber, customerId, code }`: the ID is not `_id`, and serde renames
/// the ID and scope fields.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[serde(rename_all = "camelCase")]
#[seq(name = "order", scope = "customer_id")]
struct Order {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    order_number: i64,
    customer_id: String,
    code: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", prefix = "INV-YYMMDD-", width = 4)]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "daily", prefix = "YYMMDD")]
struct Daily {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "label")]
struct Label {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "receipt", gapless)]
struct Receipt {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "account", strategy = "ranges", shards = 4, max = 4000)]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "small", max = 100)]
struct Small {
    #[serde(rename = "_id")]
    id: i64,
}

/// Imports `docs` as they are, with their IDs, as a restore or a migration would.
async fn import(coll: &Collection<Document>, docs: impl IntoIterator<Item = Document>) {
    coll.insert_many(docs.into_iter().collect::<Vec<_>>())
        .await
        .unwrap();
}

/// The IDs stored in `coll`, sorted.
async fn stored_ids(coll: &Collection<Document>, field: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = common::all(coll)
        .await
        .iter()
        .map(|d: &Document| d.get_i64(field).unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

const TASKS: u32 = 8;

/// The commands the inserts of a test sent.
struct Sent {
    finds: u64,
    inserts: u64,
    round_trips: u64,
}

impl Sent {
    /// The commands sent so far.
    fn until_now(commands: &common::Commands) -> Self {
        Sent {
            finds: commands.count("find"),
            inserts: commands.count("insert"),
            round_trips: commands.round_trips(),
        }
    }
}

/// 8 tasks insert over documents 1..=500 imported without a counter; returns the statistics
/// and the commands the inserts sent.
async fn over_imported<T>(
    name: &str,
    make: fn(u32) -> T,
) -> (mongo_sequence::observability::Stats, Sent)
where
    T: SequentialId<Id = i64> + Clone,
{
    let db_name = sequence_testkit::unique_db_name(name);
    let (client, commands) = common::monitored_client(&db_name).await;
    let db = client.database(&db_name);
    let raw = db.collection::<Document>("docs");
    import(&raw, (1..=500_i64).map(|i| doc! { "_id": i, "task": 99 })).await;
    let before = Sent::until_now(&commands);
    let coll = db.collection::<T>("docs");
    let per_task = common::pick(10, 200);
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..per_task {
                    ids.push(make(task).insert_with_id(&coll).await.unwrap());
                }
                ids
            })
        })
        .collect();
    let mut ids = Vec::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    let now = Sent::until_now(&commands);
    let sent = Sent {
        finds: now.finds - before.finds,
        inserts: now.inserts - before.inserts,
        round_trips: now.round_trips - before.round_trips,
    };
    let inserted = (TASKS * per_task) as usize;
    let stored = stored_ids(&raw, "_id").await;
    assert_eq!(stored.len(), 500 + inserted, "every insert stored once");
    assert!(ids.iter().all(|&id| id > 500), "no imported ID was reused");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), inserted, "no ID twice");
    let stats = T::sequence(&coll).stats();
    println!("adoption: {name} inserted={inserted} over=500 {stats:?}");
    (stats, sent)
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

/// The counters of a report: key, old, new, stored, ids.
fn rows(report: &mongo_sequence::sync::SyncReport) -> Vec<(String, Option<i64>, i64, i64, u64)> {
    report
        .counters
        .iter()
        .map(|c| (c.key.to_string(), c.old, c.new, c.stored, c.ids))
        .collect()
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

/// A voucher numbered by a plain counter, for the forms of a model's `sync_counters`.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "voucher")]
struct Voucher {
    #[serde(rename = "_id")]
    id: i64,
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
