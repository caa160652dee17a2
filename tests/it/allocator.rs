//! The allocator's behaviour, run against a real server and, with identical expectations,
//! against the in-memory store.

use crate::common;
use crate::common::counters;
use crate::common::opts;

use std::sync::Arc;
use std::time::Duration;

use crate::backend::Backend;
use crate::both;
use mongo_sequence::{
    id::Bounds, id::CounterKey, options::AdaptiveBatch, store::BoxFuture, store::CounterStore,
    store::MemoryStore, store::Reservation, Batch, Error, Sequence, SequenceOptions,
};
use mongodb::bson::{doc, Document};

both!(
    single_ids_and_bulk_ranges,
    start_is_the_first_value,
    exhaustion_at_max_writes_nothing,
    batches_hand_out_the_rest_before_exhaustion,
    set_next_refuses_to_go_backwards,
    reset_and_delete_start_over,
    release_gives_the_unused_tail_back,
    release_after_another_writer_counts_as_wasted,
    batches_are_contiguous_and_shared_by_clones,
    adaptive_batches_grow_when_used_fast,
    independent_allocators_never_overlap,
);

async fn single_ids_and_bulk_ranges(b: Backend) {
    let seq = b.sequence(opts("c").build());
    assert_eq!(seq.current().await.unwrap(), None);
    assert_eq!(seq.next().await.unwrap(), 1);
    assert_eq!(seq.next().await.unwrap(), 2);
    let range = seq.reserve(10).await.unwrap();
    assert_eq!((range.first(), range.last()), (3, 12));
    assert_eq!(seq.next().await.unwrap(), 13);
    assert_eq!(seq.current().await.unwrap(), Some(13));
    assert!(matches!(
        seq.reserve(0).await,
        Err(Error::InvalidArgument { argument: "n", .. })
    ));
    let stats = seq.stats();
    assert_eq!(
        (stats.issued, stats.reserved, stats.reservations),
        (13, 13, 4)
    );
    assert_eq!(
        stats.waits, 3,
        "each single ID of batch 1 waits on the counter"
    );
}

async fn start_is_the_first_value(b: Backend) {
    let seq = b.sequence(opts("c").start(1000).build());
    assert_eq!(seq.next().await.unwrap(), 1000);
    assert_eq!(seq.current().await.unwrap(), Some(1000));
    let neg = b.sequence(opts("n").start(-5).build());
    assert_eq!(neg.next().await.unwrap(), -5);
}

async fn exhaustion_at_max_writes_nothing(b: Backend) {
    let seq = b.sequence(opts("c").max(5).build());
    for want in 1..=3 {
        assert_eq!(seq.next().await.unwrap(), want);
    }
    match seq.reserve(3).await {
        Err(Error::Exhausted {
            counter,
            requested,
            last,
            max,
            limit,
        }) => {
            assert_eq!(counter, "c");
            assert_eq!((requested, last, max, limit), (3, 3, 5, "max"));
        }
        other => panic!("expected Exhausted, got {other:?}"),
    }
    assert_eq!(seq.current().await.unwrap(), Some(3), "nothing was written");
    assert_eq!(seq.next().await.unwrap(), 4);
    assert_eq!(seq.next().await.unwrap(), 5);
    for _ in 0..3 {
        assert!(matches!(
            seq.next().await,
            Err(Error::Exhausted { last: 5, .. })
        ));
    }
    // Where `width` sets the largest value, the fix is `width`, not a `max` never given.
    let narrow = b.sequence(opts("w").prefix("W-").width(1).build());
    match narrow.reserve(10).await {
        Err(
            e @ Error::Exhausted {
                limit: "width",
                max: 9,
                ..
            },
        ) => {
            assert!(
                e.to_string()
                    .ends_with("raise `width` or use another counter"),
                "{e}"
            );
        }
        other => panic!("expected Exhausted under `width`, got {other:?}"),
    }
    assert_eq!(
        seq.current().await.unwrap(),
        Some(5),
        "never wraps or overshoots"
    );

    let at_top = b.sequence(opts("top").start(i64::MAX - 1).build());
    assert_eq!(at_top.next().await.unwrap(), i64::MAX - 1);
    assert_eq!(at_top.next().await.unwrap(), i64::MAX);
    assert!(matches!(at_top.next().await, Err(Error::Exhausted { .. })));
    assert_eq!(at_top.current().await.unwrap(), Some(i64::MAX));
}

async fn batches_hand_out_the_rest_before_exhaustion(b: Backend) {
    let seq = b.sequence(opts("c").max(10).batch(4).build());
    let mut got = Vec::new();
    loop {
        match seq.next().await {
            Ok(id) => got.push(id),
            Err(Error::Exhausted { .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(got, (1..=10).collect::<Vec<_>>());
    assert_eq!(seq.current().await.unwrap(), Some(10));
}

async fn set_next_refuses_to_go_backwards(b: Backend) {
    let seq = b.sequence(opts("c").batch(10).build());
    assert_eq!(seq.next().await.unwrap(), 1);
    seq.set_next(500).await.unwrap();
    assert_eq!(
        seq.next().await.unwrap(),
        500,
        "cached values were invalidated"
    );
    match seq.set_next(100).await {
        Err(Error::WouldMoveBackwards {
            current, requested, ..
        }) => {
            assert_eq!(requested, 100);
            assert!(current >= 500);
        }
        other => panic!("expected WouldMoveBackwards, got {other:?}"),
    }
    seq.set_next(100).force(true).await.unwrap();
    assert_eq!(seq.next().await.unwrap(), 100);
    assert!(matches!(
        seq.set_next(0).await,
        Err(Error::InvalidArgument {
            argument: "next",
            ..
        })
    ));
    assert!(seq.stats().wasted > 0);
}

async fn reset_and_delete_start_over(b: Backend) {
    let seq = b.sequence(opts("c").start(7).batch(3).build());
    assert_eq!(seq.next().await.unwrap(), 7);
    assert_eq!(seq.next().await.unwrap(), 8);
    seq.reset().await.unwrap();
    assert_eq!(seq.current().await.unwrap(), Some(6));
    assert_eq!(seq.next().await.unwrap(), 7);
    assert!(seq.delete().await.unwrap());
    assert_eq!(seq.current().await.unwrap(), None);
    assert!(!seq.delete().await.unwrap());
    assert_eq!(seq.next().await.unwrap(), 7);
}

async fn release_gives_the_unused_tail_back(b: Backend) {
    let seq = b.sequence(opts("c").batch(10).prefetch_at(1.0).build());
    for want in 1..=3 {
        assert_eq!(seq.next().await.unwrap(), want);
    }
    assert_eq!(seq.release().await.unwrap(), 7);
    assert_eq!(seq.current().await.unwrap(), Some(3));
    let other = b.sequence(opts("c").build());
    assert_eq!(other.next().await.unwrap(), 4);
    assert_eq!(seq.stats().released, 7);
}

async fn release_after_another_writer_counts_as_wasted(b: Backend) {
    let seq = b.sequence(opts("c").batch(10).prefetch_at(1.0).build());
    assert_eq!(seq.next().await.unwrap(), 1);
    let other = b.sequence(opts("c").build());
    assert_eq!(other.next().await.unwrap(), 11);
    assert_eq!(seq.release().await.unwrap(), 0);
    assert_eq!(seq.stats().wasted, 9);
    assert_eq!(
        seq.current().await.unwrap(),
        Some(11),
        "the counter was left alone"
    );
}

async fn batches_are_contiguous_and_shared_by_clones(b: Backend) {
    let seq = b.sequence(opts("c").batch(25).build());
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let seq = seq.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..100 {
                    ids.push(seq.next().await.unwrap());
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_unstable();
    // One process, one cache: 800 IDs from 32 ranges of 25, with at most the prefetched range
    // beyond them.
    assert_eq!(all, (1..=800).collect::<Vec<_>>());
    let stats = seq.stats();
    assert_eq!(stats.issued, 800);
    assert!(stats.reservations <= 33, "{stats:?}");
}

async fn adaptive_batches_grow_when_used_fast(b: Backend) {
    let adaptive = AdaptiveBatch::new(2, 16)
        .grow_below(Duration::from_secs(3600))
        .shrink_above(Duration::from_secs(7200));
    let seq = b.sequence(opts("c").batch(adaptive).prefetch_at(1.0).build());
    let mut ids = Vec::new();
    for _ in 0..100 {
        ids.push(seq.next().await.unwrap());
    }
    assert_eq!(ids, (1..=100).collect::<Vec<_>>());
    // Sizes 2, 2, 4, 8, 16, 16, ... : 100 values take far fewer than 50 round trips.
    let stats = seq.stats();
    assert!(stats.reservations <= 10, "{stats:?}");
    assert!(stats.reservations >= 8, "{stats:?}");
}

async fn independent_allocators_never_overlap(b: Backend) {
    // Two allocators with caches of their own (as two processes have) on one counter, batch 5,
    // taking turns across 100 range boundaries: pooled-lo ranges never overlap.
    let first = b.sequence(opts("c").batch(5).prefetch_at(1.0).build());
    let second = b.sequence(opts("c").batch(5).prefetch_at(1.0).build());
    let mut seen = std::collections::HashSet::new();
    for round in 0..100 {
        let (a, b) = if round % 2 == 0 {
            (&first, &second)
        } else {
            (&second, &first)
        };
        for _ in 0..3 {
            assert!(seen.insert(a.next().await.unwrap()));
            assert!(seen.insert(b.next().await.unwrap()));
        }
    }
    assert_eq!(seen.len(), 600);
}

// ----- Real server only -----

#[tokio::test]
async fn corrupt_counters_are_reported_and_left_untouched() {
    let db = common::database("corrupt_counters").await;
    let cases = [
        (
            "string",
            doc! { "_id": "string", "seq": "41" },
            "instead of an integer",
        ),
        (
            "negative",
            doc! { "_id": "negative", "seq": -3_i64 },
            "negative",
        ),
        ("missing", doc! { "_id": "missing", "other": 1 }, "missing"),
        (
            "beyond",
            doc! { "_id": "beyond", "seq": 1000_i64 },
            "beyond `max`",
        ),
        (
            "fraction",
            doc! { "_id": "fraction", "seq": 2.5 },
            "instead of an integer",
        ),
    ];
    for (name, stored, reason) in cases {
        counters(&db).insert_one(stored.clone()).await.unwrap();
        let seq = Sequence::new(&db, opts(name).max(100).build()).unwrap();
        for result in [
            seq.next().await.map(|_| ()),
            seq.reserve(3).await.map(|_| ()),
        ] {
            match result {
                Err(Error::CorruptCounter {
                    counter, reason: r, ..
                }) => {
                    assert_eq!(counter, name);
                    assert!(r.contains(reason), "{name}: {r}");
                }
                other => panic!("{name}: expected CorruptCounter, got {other:?}"),
            }
        }
        assert!(matches!(
            seq.current().await,
            Err(Error::CorruptCounter { .. })
        ));
        let after = counters(&db)
            .find_one(doc! { "_id": name })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(after, stored, "{name}: the document was left untouched");
    }
    // A corrupt counter can be repaired with a forced set_next.
    let seq = Sequence::new(&db, opts("string").build()).unwrap();
    seq.set_next(50).force(true).await.unwrap();
    assert_eq!(seq.next().await.unwrap(), 50);
}

#[tokio::test]
async fn invalid_names_fail_before_any_write() {
    let db = common::database("invalid_names").await;
    for name in ["", "$inc", "nul\0byte", &"x".repeat(256)] {
        assert!(
            matches!(
                Sequence::new(&db, opts(name).build()),
                Err(Error::InvalidName { .. })
            ),
            "{name:?}"
        );
    }
    assert!(matches!(
        Sequence::new(&db, opts("ok").counters("bad$name").build()),
        Err(Error::InvalidName { .. })
    ));
    assert!(matches!(
        Sequence::new(&db, opts("ok").start(10).max(1).build()),
        Err(Error::InvalidConfig { key: "start", .. })
    ));
    let names = db.list_collection_names().await.unwrap();
    assert!(names.is_empty(), "nothing was written: {names:?}");
}

#[tokio::test]
async fn counter_layouts_interoperate_with_existing_documents() {
    use mongo_sequence::options::Stores;
    let db = common::database("layouts").await;

    // Seed 003's style: the field holds the next free value.
    counters(&db)
        .insert_one(doc! { "_id": "acct", "COUNT": 42_i64 })
        .await
        .unwrap();
    let next_free = |name: &str| opts(name).field("COUNT").stores(Stores::NextFree);
    let seq = Sequence::new(&db, next_free("acct").build()).unwrap();
    assert_eq!(seq.current().await.unwrap(), Some(41));
    assert_eq!(seq.next().await.unwrap(), 42);
    assert_eq!(seq.reserve(3).await.unwrap().first(), 43);
    let stored = counters(&db)
        .find_one(doc! { "_id": "acct" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get_i64("COUNT").unwrap(),
        46,
        "next free value after 45"
    );

    // Existing code that reads COUNT and then increments it by one stays collision-free.
    let before = counters(&db)
        .find_one_and_update(doc! { "_id": "acct" }, doc! { "$inc": { "COUNT": 1 } })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(before.get_i64("COUNT").unwrap(), 46);
    assert_eq!(seq.next().await.unwrap(), 47);

    // A fresh counter with this layout starts right.
    let fresh = Sequence::new(&db, next_free("fresh").start(100).build()).unwrap();
    assert_eq!(fresh.next().await.unwrap(), 100);
    let stored = counters(&db)
        .find_one(doc! { "_id": "fresh" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_i64("COUNT").unwrap(), 101);

    // A custom field name, last-issued semantics, in another collection.
    let seq = Sequence::new(
        &db,
        opts("personIdCounter")
            .field("sequence")
            .counters("ids")
            .build(),
    )
    .unwrap();
    assert_eq!(seq.next().await.unwrap(), 1);
    let stored = db
        .collection::<Document>("ids")
        .find_one(doc! { "_id": "personIdCounter" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_i64("sequence").unwrap(), 1);
}

#[tokio::test]
async fn plain_inc_writers_share_the_counter_safely() {
    let db = common::database("plain_inc").await;
    let seq = Sequence::new(&db, opts("shared").batch(10).prefetch_at(1.0).build()).unwrap();
    assert_eq!(seq.next().await.unwrap(), 1); // this process holds 1..=10
                                              // Seed 002's recipe, run by some other program.
    let theirs = counters(&db)
        .find_one_and_update(doc! { "_id": "shared" }, doc! { "$inc": { "seq": 1 } })
        .return_document(mongodb::options::ReturnDocument::After)
        .await
        .unwrap()
        .unwrap()
        .get_i64("seq")
        .unwrap();
    assert_eq!(theirs, 11);
    let mut ours = Vec::new();
    for _ in 0..15 {
        ours.push(seq.next().await.unwrap());
    }
    assert!(!ours.contains(&theirs));
    assert_eq!(&ours[..9], &(2..=10).collect::<Vec<_>>()[..]);
    assert_eq!(ours[9], 12);
}

/// A memory store that counts the reservations it was asked for (when asked, not when done),
/// and takes `delay` to answer each.
#[derive(Debug, Default)]
struct CountingStore {
    inner: MemoryStore,
    calls: std::sync::atomic::AtomicU64,
    delay: Duration,
}

impl CountingStore {
    fn calls(&self) -> u64 {
        self.calls.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl CounterStore for CountingStore {
    fn reserve<'a>(
        &'a self,
        key: &'a CounterKey,
        n: u64,
        bounds: Bounds,
        session: Option<&'a mut mongodb::ClientSession>,
    ) -> BoxFuture<'a, mongo_sequence::Result<Reservation>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            self.inner.reserve(key, n, bounds, session).await
        })
    }

    fn last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        bounds: Bounds,
        session: Option<&'a mut mongodb::ClientSession>,
    ) -> BoxFuture<'a, mongo_sequence::Result<Option<i64>>> {
        self.inner.last_issued(key, bounds, session)
    }

    fn set_last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        last: i64,
        force: bool,
        bounds: Bounds,
        session: Option<&'a mut mongodb::ClientSession>,
    ) -> BoxFuture<'a, mongo_sequence::Result<()>> {
        self.inner
            .set_last_issued(key, last, force, bounds, session)
    }

    fn compare_and_set<'a>(
        &'a self,
        key: &'a CounterKey,
        expected: i64,
        new: i64,
        session: Option<&'a mut mongodb::ClientSession>,
    ) -> BoxFuture<'a, mongo_sequence::Result<bool>> {
        self.inner.compare_and_set(key, expected, new, session)
    }

    fn delete<'a>(
        &'a self,
        key: &'a CounterKey,
        session: Option<&'a mut mongodb::ClientSession>,
    ) -> BoxFuture<'a, mongo_sequence::Result<bool>> {
        self.inner.delete(key, session)
    }

    fn location(&self) -> String {
        self.inner.location()
    }
}

/// A caller that takes cached IDs in a loop never waits on anything, so it never yields to the
/// runtime; the prefetch it starts must still be under way before the range runs out, not
/// begin only when the caller finds the cache empty.
#[tokio::test(flavor = "current_thread")]
async fn the_prefetch_starts_while_the_caller_takes_cached_ids() {
    let store = Arc::new(CountingStore::default());
    let seq = Sequence::with_store(
        store.clone(),
        SequenceOptions::builder("prefetch").batch(100).build(),
    )
    .unwrap();
    assert_eq!(seq.next().await.unwrap(), 1);
    assert_eq!(store.calls(), 1, "the first ID refills inline");
    // The 10th ID uses 10% of the range: the prefetch is due.
    for expected in 2..=10 {
        assert_eq!(seq.next().await.unwrap(), expected);
    }
    assert_eq!(
        store.calls(),
        2,
        "the prefetch has asked the store for the next range"
    );
    for expected in 11..=250 {
        assert_eq!(seq.next().await.unwrap(), expected);
    }
    let stats = seq.stats();
    assert_eq!((stats.issued, stats.reservations), (250, store.calls()));
    assert_eq!(
        stats.waits, 1,
        "only the first ID waits; every later range was prefetched in time"
    );
}

/// `Stats::waits` counts the calls that found the cache empty. Here a reservation takes 20 ms
/// (virtual time) and a range holds 4 IDs: callers that take IDs back to back outrun the
/// prefetch and wait once per range; callers that work 10 ms per ID use a range in 40 ms, so the
/// prefetched range is there in time and nobody waits.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn waits_count_the_calls_that_found_the_cache_empty() {
    let store = Arc::new(CountingStore {
        delay: Duration::from_millis(20),
        ..CountingStore::default()
    });
    let seq = Sequence::with_store(store.clone(), opts("slow").batch(4).build()).unwrap();
    for expected in 1..=12 {
        assert_eq!(seq.next().await.unwrap(), expected);
    }
    assert_eq!(
        seq.stats().waits,
        3,
        "IDs 1, 5 and 9 waited: a range of 4 went faster than a reservation"
    );
    // The prefetch started by ID 9 is still on its way: ID 13 waits for it, no later one does.
    for expected in 13..=40 {
        assert_eq!(seq.next().await.unwrap(), expected);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let stats = seq.stats();
    assert_eq!(stats.waits, 4, "{stats:?}");
    assert_eq!(stats.reservations, store.calls());
}

/// With `batch = 1`, callers of one counter that wait for a round trip at the same time share
/// one: the first caller's round trip takes its own value, the callers that queued meanwhile
/// share the next, in arrival order, and nothing is kept.
#[tokio::test(flavor = "current_thread")]
async fn callers_waiting_together_share_one_reservation_in_arrival_order() {
    let store = Arc::new(CountingStore {
        delay: Duration::from_millis(20),
        ..CountingStore::default()
    });
    let seq = Sequence::with_store(store.clone(), opts("together").build()).unwrap();
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let seq = seq.clone();
            tokio::spawn(async move { seq.next().await.unwrap() })
        })
        .collect();
    let mut got = Vec::new();
    for t in tasks {
        got.push(t.await.unwrap());
    }
    assert_eq!(got, (1..=50).collect::<Vec<_>>(), "arrival order");
    let stats = seq.stats();
    assert_eq!(
        store.calls(),
        2,
        "the first caller's round trip, then one for the other 49"
    );
    assert_eq!(
        (stats.reservations, stats.reserved, stats.issued),
        (2, 50, 50)
    );
    assert_eq!(stats.waits, 50);
    assert_eq!(
        seq.current().await.unwrap(),
        Some(50),
        "the last issued value"
    );
    // A caller dropped while it waits takes no value.
    let first = tokio::spawn({
        let seq = seq.clone();
        async move { seq.next().await.unwrap() }
    });
    tokio::task::yield_now().await; // the first caller's round trip is in flight
    let dropped = tokio::spawn({
        let seq = seq.clone();
        async move { seq.next().await.unwrap() }
    });
    let kept = tokio::spawn({
        let seq = seq.clone();
        async move { seq.next().await.unwrap() }
    });
    tokio::task::yield_now().await; // both queued
    dropped.abort();
    assert_eq!(first.await.unwrap(), 51);
    assert_eq!(kept.await.unwrap(), 52);
    assert_eq!(
        seq.current().await.unwrap(),
        Some(52),
        "nothing reserved for the dropped caller"
    );
}

/// From `batch = 10` on, a cache whose ranges run out within a few round trips reserves
/// several batches per round trip. A reservation takes 5 ms here and one caller takes IDs back
/// to back: a range of 25 or 100 lasts microseconds.
#[tokio::test(flavor = "current_thread")]
async fn busy_caches_reserve_batches_ahead() {
    async fn take(batch: u64, n: i64) -> (Vec<i64>, mongo_sequence::observability::Stats) {
        let store = Arc::new(CountingStore {
            delay: Duration::from_millis(5),
            ..CountingStore::default()
        });
        let seq = Sequence::with_store(store.clone(), opts("busy").batch(batch).build()).unwrap();
        let mut ids = Vec::new();
        for _ in 0..n {
            ids.push(seq.next().await.unwrap());
        }
        seq.release().await.unwrap(); // waits for the prefetch in flight
        let stats = seq.stats();
        assert_eq!(stats.reservations, store.calls());
        (ids, stats)
    }
    let (ids, stats) = take(100, 20_000).await;
    assert_eq!(ids, (1..=20_000).collect::<Vec<_>>(), "increasing, no gap");
    assert_eq!(stats.reserved % 100, 0, "whole batches: {stats:?}");
    assert!(
        stats.reserved <= 20_000 + 2 * Batch::MAX_AHEAD * 100,
        "at most two reservations held: {stats:?}"
    );
    assert!(
        stats.reservations <= 30,
        "one batch per round trip would take 200: {stats:?}"
    );
    let (ids, stats) = take(25, 5_000).await;
    assert_eq!(ids, (1..=5_000).collect::<Vec<_>>());
    assert_eq!(stats.reserved % 25, 0, "whole batches: {stats:?}");
    assert!(
        stats.reservations <= 40,
        "one batch per round trip would take 200: {stats:?}"
    );
    // Below `AHEAD_FROM`, one batch per round trip.
    let below = Batch::AHEAD_FROM - 1;
    let (ids, stats) = take(below, 900).await;
    assert_eq!(ids, (1..=900).collect::<Vec<_>>());
    assert_eq!(stats.reserved, stats.reservations * below, "{stats:?}");
    assert!(stats.reservations >= 900 / below, "{stats:?}");
}

/// The sequence of an invalid configuration (which the derive rules out at compile time) holds
/// the configuration's error: every fallible operation returns it, `release` included, nothing
/// is sent to the server, and the handle keeps the name it was given.
#[tokio::test]
async fn an_invalid_configuration_fails_every_operation_with_its_error() {
    let db = common::database("invalid_configuration").await;
    let seq = mongo_sequence::options::SequenceConfig::new("bad")
        .prefix("YYY")
        .batch(mongo_sequence::Batch::Fixed(10))
        .sequence(&db);
    let invalid = |what: &str, result: Result<(), Error>| match result {
        Err(Error::InvalidConfig {
            key: "prefix",
            message: m,
            ..
        }) => {
            assert!(m.contains("unknown prefix token `YYY`"), "{what}: {m}")
        }
        other => panic!("{what}: expected the configuration's error, got {other:?}"),
    };
    invalid("next", seq.next().await.map(drop));
    invalid("next_id", seq.next_id::<String>().await.map(drop));
    invalid("reserve", seq.reserve(3).await.map(drop));
    invalid("reserve_ids", seq.reserve_ids::<String>(3).await.map(drop));
    invalid("current", seq.current().await.map(drop));
    invalid("current_key", seq.current_key().map(drop));
    invalid("set_next", seq.set_next(5).await);
    invalid("reset", seq.reset().await);
    invalid("delete", seq.delete().await.map(drop));
    invalid("release", seq.release().await.map(drop));
    let day = mongo_sequence::jiff::civil::date(2025, 1, 1);
    invalid("purge", seq.purge_periods_before(day).await.map(drop));
    let mut session = db.client().start_session().await.unwrap();
    invalid(
        "reserve in a session",
        seq.reserve(1).session(&mut session).await.map(drop),
    );
    invalid(
        "in_scope",
        seq.in_scope(mongo_sequence::Scope::new().with("t", 1))
            .map(drop),
    );
    assert_eq!(
        seq.options().name,
        "bad",
        "the name it was given, not another"
    );
    assert_eq!(
        seq.stats(),
        mongo_sequence::observability::Stats::default(),
        "nothing happened"
    );
    let names = db.list_collection_names().await.unwrap();
    assert!(names.is_empty(), "nothing was written: {names:?}");
}
