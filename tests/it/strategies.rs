//! The strategies other than the single counter, against a real server: range counters with
//! preassigned slices, random IDs retried on a duplicate `_id`, UUIDs and ObjectIds.

use crate::common;

use std::collections::{BTreeMap, HashSet};

use futures_util::TryStreamExt;
use mongo_sequence::{Error, Sequence, SequenceOptions, SequentialId, Strategy};
use mongodb::bson::oid::ObjectId;
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Database;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Sharded counters
// ---------------------------------------------------------------------------------------------

/// A bank account with a 12-digit number, from 16 counter documents.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "account", strategy = "ranges", shards = 16, digits = 12)]
struct Account {
    #[serde(rename = "_id")]
    number: i64,
    owner: String,
}

/// The same with batches of 10 from 4 counter documents.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "card",
    strategy = "ranges",
    shards = 4,
    digits = 12,
    batch = 10
)]
struct Card {
    #[serde(rename = "_id")]
    number: i64,
}

/// A tiny space: 9 one-digit IDs over 3 shards.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "desk", strategy = "ranges", shards = 3, digits = 1)]
struct Desk {
    #[serde(rename = "_id")]
    number: i32,
}

/// The counter documents of the ranges sequence `name`: shard → (lo, hi, seq).
async fn shard_docs(db: &Database, name: &str) -> BTreeMap<i32, (i64, i64, i64)> {
    let docs: Vec<Document> = db
        .collection::<Document>("counters")
        .find(doc! { "_id.seq": name })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.iter()
        .map(|d| {
            let id = d.get_document("_id").unwrap();
            assert_eq!(id.keys().collect::<Vec<_>>(), ["seq", "shard"], "{d}");
            (
                id.get_i32("shard").unwrap(),
                (
                    d.get_i64("lo").unwrap(),
                    d.get_i64("hi").unwrap(),
                    d.get_i64("seq").unwrap(),
                ),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_ids_are_distinct_and_inside_their_shards_slice() {
    let db = common::database("sharded_slices").await;
    let accounts = db.collection::<Account>("accounts");

    let tasks: Vec<_> = (0..32)
        .map(|t| {
            let accounts = accounts.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..10 {
                    let mut a = Account {
                        number: 0,
                        owner: format!("owner {t}/{i}"),
                    };
                    ids.push(a.insert_with_id(&accounts).await.unwrap());
                }
                ids
            })
        })
        .collect();
    let ids = common::distinct_ids(tasks).await;
    assert_eq!(ids.len(), 320);

    // Seed 003's layout with 12 digits: 16 slices of 900,000,000,000 / 16 values.
    let width = 900_000_000_000_i64 / 16;
    let slice = |i: i64| {
        (
            100_000_000_000 + i * width,
            100_000_000_000 + (i + 1) * width - 1,
        )
    };
    let shards = shard_docs(&db, "account").await;
    assert!(
        shards.len() > 1,
        "320 reservations all went to one of 16 shards"
    );
    for (&shard, &(lo, hi, seq)) in &shards {
        assert!((0..16).contains(&shard));
        assert_eq!((lo, hi), slice(i64::from(shard)), "bounds of shard {shard}");
        assert!(
            lo <= seq && seq <= hi,
            "shard {shard} counter {seq} outside its slice"
        );
    }
    let mut per_shard = BTreeMap::<i32, u64>::new();
    for &id in &ids {
        assert_eq!(id.to_string().len(), 12, "{id} has 12 digits");
        let shard = ((id - 100_000_000_000) / width) as i32;
        let (lo, hi, seq) = shards[&shard];
        assert!(
            lo <= id && id <= seq && seq <= hi,
            "{id} is not an issued value of shard {shard}"
        );
        *per_shard.entry(shard).or_default() += 1;
    }
    // With batch 1 every value up to each counter was issued exactly once.
    for (shard, (lo, _, seq)) in shards {
        assert_eq!(
            per_shard.get(&shard).copied().unwrap_or(0),
            (seq - lo + 1) as u64
        );
    }

    let stored: Vec<Account> = common::all(&accounts).await;
    assert_eq!(stored.iter().map(|a| a.number).collect::<HashSet<_>>(), ids);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_batches_come_from_the_cache() {
    let db = common::database("sharded_batches").await;
    let cards = db.collection::<Card>("cards");
    let mut ids = HashSet::new();
    for _ in 0..50 {
        let mut c = Card { number: 0 };
        assert!(ids.insert(c.insert_with_id(&cards).await.unwrap()));
    }
    let stats = Card::sequence(&cards).stats();
    assert_eq!(stats.issued, 50);
    assert!(
        stats.reservations <= 6,
        "50 IDs in batches of 10: {stats:?}"
    );
    assert_eq!(stats.reserved % 10, 0);

    let shards = shard_docs(&db, "card").await;
    for id in &ids {
        assert!(
            shards
                .values()
                .any(|&(lo, hi, seq)| lo <= *id && *id <= seq && seq <= hi),
            "{id} is outside every reserved part of a slice"
        );
    }

    // A bulk insert is one contiguous range from one shard.
    let mut docs: Vec<Card> = (0..7).map(|_| Card { number: 0 }).collect();
    let bulk = Card::insert_many_with_ids(&mut docs, &cards).await.unwrap();
    assert!(bulk.windows(2).all(|w| w[1] == w[0] + 1), "{bulk:?}");
    let shards = shard_docs(&db, "card").await;
    assert!(shards
        .values()
        .any(|&(lo, hi, _)| lo <= bulk[0] && bulk[6] <= hi));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_shards_are_skipped_then_the_sequence_is_exhausted() {
    let db = common::database("sharded_exhaustion").await;
    let desks = db.collection::<Desk>("desks");
    let mut ids = Vec::new();
    loop {
        let mut d = Desk { number: 0 };
        match d.insert_with_id(&desks).await {
            Ok(id) => ids.push(id),
            Err(Error::Exhausted {
                counter,
                requested,
                last,
                max,
                limit,
            }) => {
                assert_eq!(
                    (counter.as_str(), requested, last, max, limit),
                    ("desk", 1, 9, 9, "max")
                );
                break;
            }
            Err(e) => panic!("{e}"),
        }
        assert!(ids.len() <= 9, "more IDs than the space holds: {ids:?}");
    }
    ids.sort();
    assert_eq!(ids, (1..=9).collect::<Vec<_>>());
    for _ in 0..3 {
        let mut d = Desk { number: 0 };
        assert!(matches!(
            d.insert_with_id(&desks).await,
            Err(Error::Exhausted { .. })
        ));
    }
    let shards = shard_docs(&db, "desk").await;
    assert_eq!(
        shards,
        BTreeMap::from([(0, (1, 3, 3)), (1, (4, 6, 6)), (2, (7, 9, 9))]),
        "every shard is full and none passed its slice"
    );

    // A fresh handle (another process, in effect) finds them full too, and writes nothing.
    let opts = SequenceOptions::builder("desk").ranges(3).digits(1).build();
    let other = Sequence::new(&db, opts).unwrap();
    assert!(matches!(other.next().await, Err(Error::Exhausted { .. })));
    assert_eq!(shard_docs(&db, "desk").await, shards);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_batches_take_the_tails_of_their_shards() {
    let db = common::database("sharded_tails").await;
    // 4 slices of 3 values, batches of 2: the last value of each slice is a batch of 1.
    let opts = SequenceOptions::builder("tiny")
        .ranges(4)
        .start(1)
        .max(12)
        .batch(2)
        .build();
    let seq = Sequence::new(&db, opts).unwrap();
    let mut got = Vec::new();
    loop {
        match seq.next().await {
            Ok(id) => got.push(id),
            Err(Error::Exhausted { .. }) => break,
            Err(e) => panic!("{e}"),
        }
        assert!(got.len() <= 12, "{got:?}");
    }
    got.sort();
    assert_eq!(got, (1..=12).collect::<Vec<_>>());

    // Bulk reservations never straddle two shards, and a request no shard can satisfy fails.
    let opts = SequenceOptions::builder("bulk")
        .ranges(4)
        .start(1)
        .max(12)
        .build();
    let seq = Sequence::new(&db, opts).unwrap();
    for _ in 0..4 {
        let r = seq.reserve(3).await.unwrap();
        assert_eq!((r.first() - 1) % 3, 0, "{r} is one whole slice");
        assert_eq!(r.len(), 3);
    }
    match seq.reserve(1).await {
        Err(Error::Exhausted { last, max, .. }) => assert_eq!((last, max), (12, 12)),
        other => panic!("expected Exhausted, got {other:?}"),
    }
    let opts = SequenceOptions::builder("big")
        .ranges(4)
        .start(1)
        .max(12)
        .build();
    let seq = Sequence::new(&db, opts).unwrap();
    match seq.reserve(4).await {
        Err(Error::Exhausted {
            requested,
            last,
            max,
            ..
        }) => assert_eq!(
            (requested, max - last),
            (4, 3),
            "3 values is the most one shard has"
        ),
        other => panic!("expected Exhausted, got {other:?}"),
    }
    assert_eq!(seq.reserve(3).await.unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_shard_layout_for_the_same_name_is_refused() {
    let db = common::database("sharded_mismatch").await;
    let four = SequenceOptions::builder("inv").ranges(4).digits(6).build();
    let seq = Sequence::new(&db, four).unwrap();
    seq.reset().await.unwrap(); // creates all four counter documents
    assert_eq!(shard_docs(&db, "inv").await.len(), 4);
    let before = shard_docs(&db, "inv").await;

    let two = SequenceOptions::builder("inv").ranges(2).digits(6).build();
    let other = Sequence::new(&db, two).unwrap();
    match other.next().await {
        Err(e @ Error::CounterMismatch { .. }) => {
            let text = e.to_string();
            assert!(text.contains("\"hi\""), "{text}");
            assert!(text.contains("another `name`"), "{text}");
        }
        other => panic!("expected CounterMismatch, got {other:?}"),
    }
    assert!(matches!(
        other.reserve(10).await,
        Err(Error::CounterMismatch { .. })
    ));
    assert_eq!(shard_docs(&db, "inv").await, before, "nothing was written");

    // The original configuration goes on; `delete` removes every shard.
    assert!(seq.next().await.unwrap() >= 100_000);
    assert!(seq.delete().await.unwrap());
    assert!(shard_docs(&db, "inv").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_release_gives_values_back_to_their_shard() {
    let db = common::database("sharded_release").await;
    let opts = SequenceOptions::builder("rel")
        .ranges(2)
        .start(1)
        .max(1000)
        .batch(10)
        .prefetch_at(1.0)
        .build();
    let seq = Sequence::new(&db, opts).unwrap();
    let first = seq.next().await.unwrap();
    seq.next().await.unwrap();
    seq.next().await.unwrap();
    assert_eq!(seq.release().await.unwrap(), 7);
    let shards = shard_docs(&db, "rel").await;
    assert_eq!(shards.len(), 1);
    let (lo, _, last) = shards.values().next().copied().unwrap();
    assert_eq!(first, lo);
    assert_eq!(last, lo + 2);
    for op in [seq.current().await.map(|_| ()), seq.set_next(5).await] {
        assert!(matches!(
            op,
            Err(Error::Unsupported {
                strategy: "ranges",
                ..
            })
        ));
    }
}

#[tokio::test]
async fn sharded_in_memory() {
    let opts = SequenceOptions::builder("m")
        .ranges(3)
        .start(1)
        .max(6)
        .build();
    let seq = Sequence::in_memory(opts).unwrap();
    let mut got: Vec<i64> = Vec::new();
    for _ in 0..6 {
        got.push(seq.next().await.unwrap());
    }
    got.sort();
    assert_eq!(got, (1..=6).collect::<Vec<_>>());
    assert!(matches!(seq.next().await, Err(Error::Exhausted { .. })));
}

// ---------------------------------------------------------------------------------------------
// Random IDs
// ---------------------------------------------------------------------------------------------

/// Two-digit random IDs: 90 values, drawn until free.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "locker", strategy = "random", digits = 2, retries = 10000)]
struct Locker {
    #[serde(rename = "_id")]
    number: i64,
}

/// The same space, giving up sooner.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "locker_impatient",
    strategy = "random",
    digits = 2,
    retries = 5
)]
struct ImpatientLocker {
    #[serde(rename = "_id")]
    number: i64,
}

/// A random 12-digit code as a string, with another unique field.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 12)]
struct Voucher {
    #[serde(rename = "_id")]
    code: String,
    email: String,
}

async fn stored_ids(db: &Database, coll: &str) -> Vec<Bson> {
    common::all(&db.collection::<Document>(coll))
        .await
        .into_iter()
        .map(|d| d.get("_id").unwrap().clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_ids_fill_a_small_space_then_fail_with_a_typed_error() {
    let db = common::database("random_fill").await;
    let lockers = db.collection::<Locker>("lockers");
    let mut ids = HashSet::new();
    for _ in 0..90 {
        let mut l = Locker { number: 0 };
        let id = l.insert_with_id(&lockers).await.unwrap();
        assert!((10..=99).contains(&id), "{id}");
        assert_eq!(l.number, id);
        assert!(ids.insert(id), "{id} returned twice");
    }
    let stats = Locker::sequence(&lockers).stats();
    assert!(
        stats.collisions > 0,
        "filling all 90 values needs redraws: {stats:?}"
    );
    assert_eq!(stats.issued, 90 + stats.collisions);

    let impatient = db.collection::<ImpatientLocker>("lockers");
    for _ in 0..2 {
        let mut l = ImpatientLocker { number: 0 };
        match l.insert_with_id(&impatient).await {
            Err(e @ Error::RandomIdsExhausted { .. }) => {
                let Error::RandomIdsExhausted {
                    attempts,
                    start,
                    max,
                    ..
                } = &e
                else {
                    unreachable!()
                };
                assert_eq!((*attempts, *start, *max), (6, 10, 99));
                let text = e.to_string();
                assert!(text.contains("raise `retries`"), "{text}");
                assert!(text.contains("widen it"), "{text}");
            }
            other => panic!("expected RandomIdsExhausted, got {other:?}"),
        }
    }
    assert_eq!(ImpatientLocker::sequence(&impatient).stats().collisions, 12);

    let stored = stored_ids(&db, "lockers").await;
    assert_eq!(stored.len(), 90);
    let stored: HashSet<i64> = stored.iter().map(|b| b.as_i64().unwrap()).collect();
    assert_eq!(stored, (10..=99).collect());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bulk_inserts_redraw_only_the_collisions() {
    let db = common::database("random_bulk").await;
    let lockers = db.collection::<Locker>("lockers");
    let mut first: Vec<Locker> = (0..50).map(|_| Locker { number: 0 }).collect();
    let ids = Locker::insert_many_with_ids(&mut first, &lockers)
        .await
        .unwrap();
    assert_eq!(ids.len(), 50);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 50);
    assert!(first.iter().zip(&ids).all(|(l, id)| l.number == *id));

    let collisions_before = Locker::sequence(&lockers).stats().collisions;
    let mut rest: Vec<Locker> = (0..40).map(|_| Locker { number: 0 }).collect();
    let more = Locker::insert_many_with_ids(&mut rest, &lockers)
        .await
        .unwrap();
    assert!(
        Locker::sequence(&lockers).stats().collisions > collisions_before,
        "40 draws into a space 5/9 full collide"
    );
    let all: HashSet<i64> = ids.iter().chain(&more).copied().collect();
    assert_eq!(all, (10..=99).collect());
    assert_eq!(stored_ids(&db, "lockers").await.len(), 90);

    let mut one_more = vec![ImpatientLocker { number: 0 }];
    assert!(matches!(
        ImpatientLocker::insert_many_with_ids(&mut one_more, &db.collection("lockers")).await,
        Err(Error::RandomIdsExhausted { attempts: 6, .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_on_another_unique_index_is_returned_not_retried() {
    let db = common::database("random_other_index").await;
    let vouchers = db.collection::<Voucher>("vouchers");
    common::unique_index(&vouchers, "email").await;
    let mut a = Voucher {
        code: String::new(),
        email: "a@example.com".into(),
    };
    let code = a.insert_with_id(&vouchers).await.unwrap();
    assert_eq!(code.len(), 12);
    assert!(code.bytes().all(|b| b.is_ascii_digit()) && !code.starts_with('0'));

    let mut b = Voucher {
        code: String::new(),
        email: "a@example.com".into(),
    };
    match b.insert_with_id(&vouchers).await {
        Err(Error::DuplicateKey { message, .. }) => {
            assert!(message.contains("email"), "{message}")
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    let stats = Voucher::sequence(&vouchers).stats();
    assert_eq!((stats.issued, stats.collisions), (2, 0), "no redraw");
    assert_eq!(stored_ids(&db, "vouchers").await.len(), 1);

    let mut docs = vec![Voucher {
        code: String::new(),
        email: "a@example.com".into(),
    }];
    assert!(matches!(
        Voucher::insert_many_with_ids(&mut docs, &vouchers).await,
        Err(Error::DuplicateKey { .. })
    ));

    // Through `insert_with_id` in a session, the same rules.
    let mut session = db.client().start_session().await.unwrap();
    let mut c = Voucher {
        code: String::new(),
        email: "c@example.com".into(),
    };
    let code = c
        .insert_with_id(&vouchers)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(c.code, code);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_next_id_is_a_draw_and_counter_operations_are_unsupported() {
    let db = common::database("random_next").await;
    let lockers = db.collection::<Locker>("lockers");
    for _ in 0..20 {
        assert!((10..=99).contains(&Locker::next_id(&lockers).await.unwrap()));
    }
    let seq = Locker::sequence(&lockers);
    assert_eq!(seq.options().strategy, Strategy::Random);
    assert!(matches!(
        seq.reserve(3).await,
        Err(Error::Unsupported {
            operation: "reserve",
            strategy: "random",
            ..
        })
    ));
    assert!(matches!(
        seq.current().await,
        Err(Error::Unsupported { .. })
    ));
    assert!(!db
        .list_collection_names()
        .await
        .unwrap()
        .contains(&"counters".to_owned()));
}

// ---------------------------------------------------------------------------------------------
// UUIDs and ObjectIds
// ---------------------------------------------------------------------------------------------

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

/// The `_id` of the only document of `coll`.
async fn raw_id(db: &Database, coll: &str, id: Bson) -> Bson {
    db.collection::<Document>(coll)
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .expect("the document is stored under its ID")
        .get("_id")
        .unwrap()
        .clone()
}

fn uuid_of(value: &Bson) -> uuid::Uuid {
    match value {
        Bson::Binary(b) => {
            assert_eq!(b.subtype, BinarySubtype::Uuid, "stored as binary subtype 4");
            uuid::Uuid::from_slice(&b.bytes).unwrap()
        }
        other => panic!("expected a BSON UUID, found {other:?}"),
    }
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

/// One-digit random IDs: 9 values.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 1)]
struct Seat {
    #[serde(rename = "_id")]
    number: i64,
}

/// In a transaction, the server aborts the transaction on the duplicate key, so the redraw
/// fails with its transient error: a transaction retry loop then starts over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collision_inside_a_transaction_returns_the_transient_error() {
    let db = common::database("random_transaction").await;
    let seats = db.collection::<Seat>("seats");
    seats
        .insert_many((1..=9).map(|number| Seat { number }))
        .await
        .unwrap();
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let mut s = Seat { number: 0 };
    match s.insert_with_id(&seats).session(&mut session).await {
        Err(Error::Mongo(e)) => assert!(
            e.contains_label(mongodb::error::TRANSIENT_TRANSACTION_ERROR),
            "{e}"
        ),
        other => panic!("expected the transaction's transient error, got {other:?}"),
    }
    assert_eq!(Seat::sequence(&seats).stats().collisions, 1);
}

/// An order number of its own type: a newtype over `i64` with `#[derive(IdValue)]`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, mongo_sequence::IdValue,
)]
#[serde(transparent)]
struct OrderNo(i64);

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "orders", batch = 25)]
struct TypedOrder {
    #[serde(rename = "_id")]
    id: OrderNo,
    total: i64,
}

/// A text ID of its own type, with a prefix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, mongo_sequence::IdValue)]
#[serde(transparent)]
struct TicketNo(String);

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "tickets", prefix = "T-", width = 4)]
struct TypedTicket {
    #[seq(id)]
    number: Option<TicketNo>,
}

/// Newtype IDs work end to end: the inserts return them, the documents store the inner
/// values, skip-ahead reads stored IDs back as the newtype's kind, and bulk inserts number them.
#[tokio::test]
async fn newtype_ids_are_issued_stored_and_read_back() {
    let db = common::database("newtype_ids").await;
    let orders = db.collection::<TypedOrder>("orders");
    let mut first = TypedOrder {
        id: OrderNo(0),
        total: 10,
    };
    let id: OrderNo = first.insert_with_id(&orders).await.unwrap();
    assert_eq!((id, first.id), (OrderNo(1), OrderNo(1)));
    // A document stored by someone else with the next number: the insert skips ahead of it.
    db.collection::<Document>("orders")
        .insert_one(doc! { "_id": 2_i64, "total": 0_i64 })
        .await
        .unwrap();
    TypedOrder::sequence(&orders).release().await.unwrap();
    let mut batch = vec![
        TypedOrder {
            id: OrderNo(0),
            total: 20,
        },
        TypedOrder {
            id: OrderNo(0),
            total: 30,
        },
    ];
    let ids = TypedOrder::insert_many_with_ids(&mut batch, &orders)
        .await
        .unwrap();
    // The range [2, 3] met the stored 2; the documents from it on were numbered again above
    // the counter, which had moved past 3 already.
    assert_eq!(ids, [OrderNo(4), OrderNo(5)]);
    let stored = db
        .collection::<Document>("orders")
        .find_one(doc! { "total": 30_i64 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get("_id"),
        Some(&Bson::Int64(5)),
        "stored as the inner number"
    );

    let tickets = db.collection::<TypedTicket>("tickets");
    let mut ticket = TypedTicket { number: None };
    let number = ticket.insert_with_id(&tickets).await.unwrap();
    assert_eq!(number, TicketNo("T-0001".into()));
    assert_eq!(ticket.number, Some(number));
    let stored = db
        .collection::<Document>("tickets")
        .find_one(doc! {})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_str("number"), Ok("T-0001"));
}
