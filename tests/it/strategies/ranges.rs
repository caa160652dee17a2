//! The `ranges` strategy: counter documents each owning a preassigned slice of the ID space.
//! IDs stay inside their shard's slice, batches come from its cache, full shards are skipped
//! until the sequence is exhausted, another layout of shards under the same name is refused,
//! values given back go to their shard; and the same in memory.

use crate::common;

use std::collections::{BTreeMap, HashSet};

use mongo_sequence::{Error, Sequence, SequenceOptions, SequentialId};
use serde::{Deserialize, Serialize};

use super::shard_docs;

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
