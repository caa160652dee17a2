//! Bad input against the real server: corrupt counter documents, overflow at `i64::MAX`, at
//! `max` and in narrow ID types, and invalid names. Each gives its typed error (or the correct
//! result) and writes nothing it should not: every collection of the test's database is
//! compared before and after.
//!
//! Scope values that look like query operators, and a clock that moves backwards across a
//! period boundary, are here too (`tests/it/scoped.rs` and `tests/it/periods.rs` cover them in
//! more detail).
//!
//! `tests/it/allocator.rs` already covers a string, negative, missing, fractional and
//! beyond-`max` counter with `batch = 1`, exhaustion at `max`, `start = i64::MAX - 1`, and
//! invalid counter and collection names; this file adds the rest, and every corrupt case through
//! the batch cache and through `insert_with_id`.

use crate::common;
use crate::common::counters;
use crate::common::models::Item;

use std::collections::BTreeMap;

use mongo_sequence::{options::Stores, Error, Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, Bson, Decimal128, Document};
use mongodb::Database;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "item25", batch = 25)]
struct CachedItem {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "capped", batch = 25, max = 1000)]
struct CappedItem {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "small", start = 2147483646)]
struct SmallItem {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "unsigned", start = 4294967294, batch = 10)]
struct UnsignedItem {
    #[serde(rename = "_id")]
    id: u32,
}

/// Every document of every collection of `db`, by collection, each in its debug form (which
/// names every value's BSON type, and in which `NaN` equals itself).
async fn snapshot(db: &Database) -> BTreeMap<String, Vec<String>> {
    let mut all = BTreeMap::new();
    for name in db.list_collection_names().await.unwrap() {
        let docs: Vec<Document> = common::all(&db.collection::<Document>(&name)).await;
        all.insert(name, docs.iter().map(|d| format!("{d:?}")).collect());
    }
    all
}

/// Corrupt counters the allocator tests do not cover, and all of them through the batch cache
/// and `insert_with_id`: a typed error, and nothing written anywhere.
#[tokio::test]
async fn corrupt_counters_write_nothing() {
    let db = common::database("bad_corrupt").await;
    let cases: Vec<(&str, Bson, &str)> = vec![
        ("missing", Bson::Null, "missing"),
        ("string", Bson::String("41".into()), "instead of an integer"),
        ("negative", Bson::Int64(-3), "negative"),
        ("null", Bson::Null, "instead of an integer"),
        ("bool", Bson::Boolean(true), "instead of an integer"),
        (
            "array",
            Bson::Array(vec![Bson::Int64(5)]),
            "instead of an integer",
        ),
        (
            "embedded",
            Bson::Document(doc! { "n": 5 }),
            "instead of an integer",
        ),
        (
            "decimal",
            Bson::Decimal128("5".parse::<Decimal128>().unwrap()),
            "instead of an integer",
        ),
        ("nan", Bson::Double(f64::NAN), "instead of an integer"),
        ("fraction", Bson::Double(2.5), "instead of an integer"),
        // Beyond 2^53 a double no longer holds every integer: adding to it would round.
        (
            "huge_double",
            Bson::Double(9_007_199_254_740_992.0),
            "instead of an integer",
        ),
        ("i64_min", Bson::Int64(i64::MIN), "negative"),
    ];
    let items = db.collection::<Item>("items");
    let cached = db.collection::<CachedItem>("cached_items");
    let mut checked = 0;
    for (case, value, reason) in cases {
        counters(&db).delete_many(doc! {}).await.unwrap();
        let mut corrupt = doc! { "_id": "item" };
        let mut cached_corrupt = doc! { "_id": "item25" };
        if case != "missing" {
            corrupt.insert("seq", value.clone());
            cached_corrupt.insert("seq", value.clone());
        }
        counters(&db)
            .insert_many([corrupt, cached_corrupt])
            .await
            .unwrap();
        let before = snapshot(&db).await;
        let results = [
            Item { id: 0 }.insert_with_id(&items).await,
            CachedItem { id: 0 }.insert_with_id(&cached).await,
            Item::next_id(&items).await,
            CachedItem::next_id(&cached).await,
            Item::sequence(&items).reserve(3).await.map(|r| r.first()),
        ];
        for (i, result) in results.into_iter().enumerate() {
            match result {
                Err(Error::CorruptCounter { reason: r, .. }) => {
                    assert!(r.contains(reason), "{case} #{i}: {r}");
                }
                other => panic!("{case} #{i}: expected CorruptCounter, got {other:?}"),
            }
            checked += 1;
        }
        assert_eq!(snapshot(&db).await, before, "{case}: something was written");
    }
    println!("reliability: bad-input corrupt cases={checked} duplicates=0 writes=0");
}

/// At `i64::MAX` a batch hands out what is left and then reports exhaustion; it never wraps,
/// in either layout and from a 32-bit stored value.
#[tokio::test]
async fn overflow_at_i64_max() {
    let db = common::database("bad_overflow").await;
    let cached = db.collection::<CachedItem>("cached_items");
    counters(&db)
        .insert_one(doc! { "_id": "item25", "seq": i64::MAX - 1 })
        .await
        .unwrap();
    assert_eq!(
        CachedItem { id: 0 }.insert_with_id(&cached).await.unwrap(),
        i64::MAX
    );
    let before = snapshot(&db).await;
    for _ in 0..3 {
        match (CachedItem { id: 0 }).insert_with_id(&cached).await {
            Err(Error::Exhausted { last, max, .. }) => {
                assert_eq!((last, max), (i64::MAX, i64::MAX));
            }
            other => panic!("expected Exhausted, got {other:?}"),
        }
    }
    assert_eq!(
        snapshot(&db).await,
        before,
        "nothing written after exhaustion"
    );
    assert_eq!(cached.count_documents(doc! {}).await.unwrap(), 1);

    // The next-free layout stores one more than the last issued value: it stops one earlier.
    counters(&db)
        .insert_one(doc! { "_id": "acct", "COUNT": i64::MAX })
        .await
        .unwrap();
    let acct = Sequence::new(
        &db,
        SequenceOptions::builder("acct")
            .field("COUNT")
            .stores(Stores::NextFree)
            .batch(25)
            .build(),
    )
    .unwrap();
    let before = snapshot(&db).await;
    assert!(matches!(acct.next().await, Err(Error::Exhausted { .. })));
    assert!(matches!(
        acct.reserve(2).await,
        Err(Error::Exhausted { .. })
    ));
    assert_eq!(snapshot(&db).await, before);

    // A counter stored as a 32-bit integer at its maximum continues as a 64-bit one.
    counters(&db)
        .insert_one(doc! { "_id": "int32", "seq": i32::MAX })
        .await
        .unwrap();
    let int32 = Sequence::new(&db, SequenceOptions::builder("int32").build()).unwrap();
    assert_eq!(int32.next().await.unwrap(), i64::from(i32::MAX) + 1);
    let stored = counters(&db)
        .find_one(doc! { "_id": "int32" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get("seq"),
        Some(&Bson::Int64(i64::from(i32::MAX) + 1))
    );
    // A counter stored as a double counts exactly up to 2^53 - 1, then is refused without
    // being rounded.
    let top = (1_i64 << 53) - 1;
    counters(&db)
        .insert_one(doc! { "_id": "double", "seq": (top - 1) as f64 })
        .await
        .unwrap();
    let double = Sequence::new(&db, SequenceOptions::builder("double").build()).unwrap();
    assert_eq!(double.next().await.unwrap(), top);
    let before = snapshot(&db).await;
    match double.next().await {
        Err(Error::CorruptCounter { reason, .. }) => {
            assert!(reason.contains("as a double"), "{reason}");
            assert!(reason.contains("64-bit integer"), "{reason}");
        }
        other => panic!("expected CorruptCounter, got {other:?}"),
    }
    assert!(matches!(
        double.reserve(5).await,
        Err(Error::CorruptCounter { .. })
    ));
    assert_eq!(snapshot(&db).await, before);
    println!(
        "reliability: bad-input overflow i64_max=exhausted wrapped=0 writes_after_exhaustion=0"
    );
}

/// With `max = 1000` and batch 25 from a counter at 990: 991..=1000, then exhaustion, and
/// nothing written by the calls that fail.
#[tokio::test]
async fn overflow_at_max() {
    let db = common::database("bad_max").await;
    let capped = db.collection::<CappedItem>("capped_items");
    counters(&db)
        .insert_one(doc! { "_id": "capped", "seq": 990_i64 })
        .await
        .unwrap();
    let mut ids = Vec::new();
    let before_exhaustion = loop {
        let before = snapshot(&db).await;
        match (CappedItem { id: 0 }).insert_with_id(&capped).await {
            Ok(id) => ids.push(id),
            Err(Error::Exhausted {
                last: 1000,
                max: 1000,
                ..
            }) => break before,
            Err(e) => panic!("{e}"),
        }
        assert!(ids.len() <= 10);
    };
    assert_eq!(ids, (991..=1000).collect::<Vec<_>>());
    assert_eq!(snapshot(&db).await, before_exhaustion);
    let mut docs = vec![CappedItem { id: 0 }, CappedItem { id: 0 }];
    assert!(matches!(
        CappedItem::insert_many_with_ids(&mut docs, &capped).await,
        Err(Error::Exhausted { .. })
    ));
    assert_eq!(snapshot(&db).await, before_exhaustion);
    println!("reliability: bad-input max ids=10 beyond_max=0 writes_after_exhaustion=0");
}

/// IDs beyond the ID field's type fail with `IdOutOfRange` and insert nothing. The value is
/// taken from the counter (it is issued, and unusable), so the counter moves on by one per
/// failed call; the target collection is left alone.
#[tokio::test]
async fn narrow_id_types_overflow_with_a_typed_error() {
    let db = common::database("bad_narrow").await;
    let small = db.collection::<SmallItem>("small_items");
    assert_eq!(
        SmallItem { id: 0 }.insert_with_id(&small).await.unwrap(),
        i32::MAX - 1
    );
    assert_eq!(
        SmallItem { id: 0 }.insert_with_id(&small).await.unwrap(),
        i32::MAX
    );
    let unsigned = db.collection::<UnsignedItem>("unsigned_items");
    assert_eq!(
        UnsignedItem { id: 0 }
            .insert_with_id(&unsigned)
            .await
            .unwrap(),
        u32::MAX - 1
    );
    assert_eq!(
        UnsignedItem { id: 0 }
            .insert_with_id(&unsigned)
            .await
            .unwrap(),
        u32::MAX
    );
    let items_before = (
        snapshot(&db).await.remove("small_items"),
        snapshot(&db).await.remove("unsigned_items"),
    );
    for _ in 0..3 {
        let mut s = SmallItem { id: 0 };
        match s.insert_with_id(&small).await {
            Err(Error::IdOutOfRange { value, target }) => {
                assert!(value > i64::from(i32::MAX));
                assert_eq!(target, "i32");
                assert_eq!(s.id, 0, "the ID field is left alone");
            }
            other => panic!("expected IdOutOfRange, got {other:?}"),
        }
        match (UnsignedItem { id: 0 }).insert_with_id(&unsigned).await {
            Err(Error::IdOutOfRange { value, target }) => {
                assert!(value > i64::from(u32::MAX));
                assert_eq!(target, "u32");
            }
            other => panic!("expected IdOutOfRange, got {other:?}"),
        }
    }
    let mut many = vec![SmallItem { id: 0 }, SmallItem { id: 0 }];
    assert!(matches!(
        SmallItem::insert_many_with_ids(&mut many, &small).await,
        Err(Error::IdOutOfRange { .. })
    ));
    let after = snapshot(&db).await;
    assert_eq!(
        (
            after.get("small_items").cloned(),
            after.get("unsigned_items").cloned()
        ),
        items_before,
        "nothing inserted"
    );
    let small_counter = counters(&db)
        .find_one(doc! { "_id": "small" })
        .await
        .unwrap()
        .unwrap()
        .get_i64("seq")
        .unwrap();
    println!(
        "reliability: bad-input narrow-ids i32_failures=4 u32_failures=3 inserted=0 small_counter={small_counter}"
    );
}

/// Invalid field names and counters collections are refused before anything is sent; names
/// that only look odd work and write exactly their own counter.
#[tokio::test]
async fn names_are_checked_before_any_write() {
    let db = common::database("bad_names").await;
    for field in ["", "a.b", "$seq", "nul\0"] {
        assert!(
            matches!(
                Sequence::new(&db, SequenceOptions::builder("c").field(field).build()),
                Err(Error::InvalidName {
                    what: "field name",
                    ..
                })
            ),
            "{field:?}"
        );
    }
    for coll in ["system.counters", "a$b", ""] {
        assert!(
            matches!(
                Sequence::new(&db, SequenceOptions::builder("c").counters(coll).build()),
                Err(Error::InvalidName {
                    what: "collection name",
                    ..
                })
            ),
            "{coll:?}"
        );
    }
    // Counter names with `$` anywhere, which an aggregation would read as a field path wherever
    // a name is a value in it, are refused like the derive refuses them.
    for name in ["$a", "x$inc", "{ $gt: 1 }"] {
        assert!(
            matches!(
                Sequence::new(&db, SequenceOptions::builder(name).build()),
                Err(Error::InvalidName {
                    what: "counter name",
                    ..
                })
            ),
            "{name:?}"
        );
    }
    assert!(db.list_collection_names().await.unwrap().is_empty());
    // Spaces, braces, dashes, dots (MongoEngine's `"ticket.id"`) and non-ASCII are plain `_id`
    // values.
    for name in ["with space", "{ gt: 1 }", "a-b_c", "ticket.id", "zähler"] {
        let seq = Sequence::new(&db, SequenceOptions::builder(name).build()).unwrap();
        assert_eq!(seq.next().await.unwrap(), 1, "{name}");
        assert_eq!(seq.next().await.unwrap(), 2, "{name}");
    }
    let stored: Vec<Document> = common::all(&counters(&db)).await;
    assert_eq!(stored.len(), 5);
    assert!(stored.iter().all(|d| d.get_i64("seq") == Ok(2)));
    println!("reliability: bad-input names rejected=10 odd_names_ok=5 stray_writes=0");
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", scope = "tenant")]
struct Ticket {
    #[seq(id)]
    number: Option<i64>,
    tenant: Bson,
}

/// Scope values that look like operators are data: each gets a counter of its own, matched by
/// equality, and no other counter or document is touched.
#[tokio::test]
async fn operator_looking_scope_values_stay_literal() {
    let db = common::database("bad_input_scope_operators").await;
    let coll = db.collection::<Ticket>("tickets");
    let tenants = [
        Bson::String("$gt".into()),
        Bson::Document(doc! { "$ne": null }),
        Bson::Document(doc! { "$gt": "" }),
        Bson::String("acme".into()),
        Bson::Null,
    ];
    for round in 1..=3_i64 {
        for tenant in &tenants {
            let mut t = Ticket {
                number: None,
                tenant: tenant.clone(),
            };
            assert_eq!(t.insert_with_id(&coll).await.unwrap(), round, "{tenant}");
        }
    }
    let counters: Vec<Document> = common::all(&db.collection::<Document>("counters")).await;
    assert_eq!(
        counters.len(),
        tenants.len(),
        "one counter per literal value"
    );
    assert!(
        counters.iter().all(|c| c.get_i64("seq") == Ok(3)),
        "{counters:?}"
    );
    let stored = coll.count_documents(doc! {}).await.unwrap();
    assert_eq!(stored, 3 * tenants.len() as u64);
    println!(
        "reliability: bad-input scope-operators values={} counters={} duplicates=0",
        tenants.len(),
        counters.len()
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "daily", prefix = "YYMMDD", batch = 10)]
struct Daily {
    #[serde(rename = "_id")]
    id: i64,
}

/// A clock that moves back into an earlier period continues that period's counter: no ID is
/// issued twice.
#[tokio::test]
async fn a_clock_moving_backwards_never_reissues() {
    use mongo_sequence::clock::ManualClock;
    use std::sync::Arc;
    let db = common::database("bad_input_clock_back").await;
    let coll = db.collection::<Daily>("daily");
    let clock = Arc::new(ManualClock::new("2025-11-22T23:59:00Z".parse().unwrap()));
    Daily::sequence(&coll).set_clock(clock.clone());
    let mut seen = std::collections::BTreeSet::new();
    let mut insert = |ids: &mut Vec<i64>, id: i64| {
        assert!(seen.insert(id), "ID {id} issued twice");
        ids.push(id);
    };
    let mut ids = Vec::new();
    for (moment, n) in [
        ("2025-11-22T23:59:00Z", 3),
        ("2025-11-23T00:00:01Z", 3),
        ("2025-11-22T23:59:30Z", 3), // back across midnight
        ("2025-11-23T00:01:00Z", 2),
    ] {
        clock.set(moment.parse().unwrap());
        for _ in 0..n {
            let id = Daily { id: 0 }.insert_with_id(&coll).await.unwrap();
            insert(&mut ids, id);
        }
    }
    Daily::sequence(&coll).use_system_clock();
    assert_eq!(
        &ids[..6],
        &[
            251122000001,
            251122000002,
            251122000003,
            251123000001,
            251123000002,
            251123000003
        ]
    );
    // Back in the old day, its counter continues past every value reserved for it before
    // (the cached batch and any prefetched one were dropped at midnight): per day, the IDs
    // only ever grow.
    for day in [251122_i64, 251123] {
        let of_day: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| id / 1_000_000 == day)
            .collect();
        assert!(of_day.windows(2).all(|w| w[0] < w[1]), "{of_day:?}");
    }
    assert_eq!(
        coll.count_documents(doc! {}).await.unwrap(),
        ids.len() as u64
    );
    println!(
        "reliability: bad-input clock-backwards ids={} duplicates=0 periods=2",
        ids.len()
    );
}
