//! Many tasks on one counter against the real server: every ID distinct, and every reserved
//! range exactly one `findAndModify` round trip (counted with the driver's command monitoring);
//! with batch 1, at most one round trip per ID, shared by the callers waiting together.
//!
//! 64 tasks race for the counter from its first upsert on; each takes a few hundred IDs by
//! default, 10,000 with `SOAK=1`.

use crate::common;

use std::time::Instant;

use mongo_sequence::{Batch, Error, Sequence, SequenceOptions};
use mongodb::bson::doc;
use sequence_testkit::{unique_db_name, TestServer};

const TASKS: usize = 64;

/// 64 tasks take `per_task` IDs each (10,000 with `SOAK=1`) from one counter.
async fn run(batch: u64, per_task: usize) {
    let per_task = common::pick(per_task, 10_000);
    let name = unique_db_name(&format!("load_batch_{batch}"));
    let (client, round_trips) = common::monitored_client(&name).await;
    let db = client.database(&name);
    let seq = Sequence::new(&db, SequenceOptions::builder("load").batch(batch).build()).unwrap();

    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let seq = seq.clone();
            tokio::spawn(async move {
                let mut ids = Vec::with_capacity(per_task);
                for _ in 0..per_task {
                    ids.push(seq.next().await.unwrap());
                }
                ids
            })
        })
        .collect();
    let all = common::distinct_ids(tasks).await;
    let elapsed = started.elapsed();
    // Background prefetches may still be landing: wait until each sent reservation is counted.
    common::wait_until(std::time::Duration::from_secs(5), || {
        let stats = seq.stats();
        round_trips.round_trips() == stats.reservations + stats.retries
    })
    .await;

    let stats = seq.stats();
    let trips = round_trips.round_trips();
    assert_eq!(all.len(), TASKS * per_task);
    assert_eq!(stats.issued, (TASKS * per_task) as u64);
    // The first reservations race to create the counter: the losers' upserts collide with the
    // winner's document and are sent again once (counted in `retries`).
    assert_eq!(
        trips,
        stats.reservations + stats.retries,
        "every reservation is one findAndModify, plus one per retried first upsert (batch {batch}): {stats:?}"
    );
    assert!(
        stats.retries < TASKS as u64,
        "only first upserts are retried: {stats:?}"
    );
    if batch == 1 {
        // Coalesced: each round trip reserves one value per caller waiting for it, and nothing
        // is kept once they are served.
        assert_eq!(stats.reserved, stats.issued, "nothing reserved is kept");
        assert!(
            stats.reservations * 4 <= stats.issued,
            "64 tasks on one counter share round trips: {stats:?}"
        );
    } else if batch >= Batch::AHEAD_FROM {
        // A busy cache reserves up to `MAX_AHEAD` batches per round trip.
        assert_eq!(stats.reserved % batch, 0, "whole batches: {stats:?}");
        assert!(
            stats.reserved <= stats.reservations * batch * Batch::MAX_AHEAD,
            "{stats:?}"
        );
    } else {
        assert_eq!(
            stats.reserved,
            stats.reservations * batch,
            "every round trip reserves a full batch"
        );
    }
    let last = seq.current().await.unwrap().unwrap() as u64;
    assert_eq!(
        last, stats.reserved,
        "the counter holds exactly what was reserved"
    );
    assert!(
        trips <= (TASKS * per_task) as u64 / batch + 2,
        "{trips} round trips for batch {batch}"
    );
    println!(
        "allocator: batch={batch} tasks={TASKS} ids={} round_trips={trips} round_trips_per_id={:.3} elapsed_ms={}",
        all.len(),
        trips as f64 / all.len() as f64,
        elapsed.as_millis()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_1() {
    run(1, 100).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_25() {
    run(25, 500).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_1000() {
    run(1000, 2000).await;
}

/// A refill that fails reaches every caller that waited for it; the next call tries again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_refill_reaches_its_callers_and_the_next_call_retries() {
    let name = unique_db_name("failed_refill");
    // The fail point only hits this client (by app name), not the other tests of this binary.
    let app = format!("refill-{name}");
    let client = common::client_with_app(TestServer::shared_or_panic().uri(), &app, |_| {}).await;
    let db = client.database(&name);
    let seq = Sequence::new(&db, SequenceOptions::builder("refill").batch(5).build()).unwrap();
    let admin = client.database("admin");
    // The first reservation is held for 500 ms, then fails with a non-retryable error.
    let fault = common::fail_point(
        &admin,
        doc! { "times": 1 },
        doc! {
            "failCommands": ["findAndModify"],
            "blockConnection": true,
            "blockTimeMS": 500,
            "errorCode": 2,
            "appName": &app,
        },
    )
    .await;
    let callers: Vec<_> = (0..8)
        .map(|_| {
            let seq = seq.clone();
            tokio::spawn(async move { seq.next().await })
        })
        .collect();
    let mut results = Vec::new();
    for c in callers {
        results.push(c.await.unwrap());
    }
    assert_eq!(fault.fired().await, 1);
    for r in &results {
        match r {
            // Error code 2 (BadValue), as the fail point answered the one reservation.
            Err(Error::Mongo(e)) => assert!(
                matches!(&*e.kind, mongodb::error::ErrorKind::Command(c) if c.code == 2),
                "{e:?}"
            ),
            other => panic!("every waiting caller gets the refill's error, got {other:?}"),
        }
    }
    assert_eq!(seq.stats().reservations, 0);
    // Nothing was consumed by the failed attempt, and the next call refills.
    assert_eq!(seq.next().await.unwrap(), 1);
    assert_eq!(seq.stats().reservations, 1);
}

/// Numbered in ranges of 100,000: a loop of `next_id` takes cached IDs only.
#[derive(Debug, serde::Serialize, serde::Deserialize, mongo_sequence::SequentialId)]
#[seq(name = "coop", batch = 100_000)]
struct Event {
    #[serde(rename = "_id")]
    #[seq(id)]
    id: i64,
}

/// A task taking a model's cached IDs in a loop (each `next_id` ready at once) yields to the
/// runtime once it has spent its budget of Tokio's cooperative scheduling: a task spawned after
/// it on the same thread runs before the loop of 1,000 IDs ends, and soon (the budget is 128
/// per poll). Without it, the replies the runtime reads for that thread would wait too, the
/// prefetch of the next range among them.
#[tokio::test(flavor = "current_thread")]
async fn a_loop_of_cached_ids_lets_other_tasks_run() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let db = common::database("coop").await;
    let events = db.collection::<Event>("events");
    // The first range, a round trip; the prefetch mark is far past the loop.
    Event::next_id(&events).await.unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let looping = {
        let (events, ran) = (events.clone(), ran.clone());
        tokio::spawn(async move {
            for i in 0..1_000 {
                Event::next_id(&events).await.unwrap();
                if ran.load(Ordering::SeqCst) {
                    return Some(i);
                }
            }
            None
        })
    };
    let other = {
        let ran = ran.clone();
        tokio::spawn(async move { ran.store(true, Ordering::SeqCst) })
    };
    let seen_at = looping.await.unwrap();
    other.await.unwrap();
    let at = seen_at.expect("the other task ran before the loop of 1,000 cached IDs ended");
    assert!(at <= 200, "the loop yielded after {at} IDs");
}
