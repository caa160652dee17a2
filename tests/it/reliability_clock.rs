//! The clock stepping back minutes across a period boundary while 64 tasks take IDs of an
//! hourly sequence with a batch (ranges cached and prefetched for the new hour when the clock
//! goes back to the old one), judged by the checker per period: no number twice in a period,
//! every acknowledged document stored, and each ID in the period the clock said when its call
//! began and ended (when both readings fall in one period).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::checker::{self, Promise, Stored};
use crate::common;
use crate::common::models::{hour, hourly_key, Hourly};

use mongo_sequence::clock::{Clock, ManualClock};
use mongo_sequence::jiff::Timestamp;

/// One call: its ID, and the periods the clock said before and after it, and whether the
/// clock was set meanwhile.
struct Taken {
    id: String,
    call: String,
    before: String,
    after: String,
    clock_set: bool,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clock_stepping_back_repeats_no_id() {
    const TASKS: usize = 64;
    let per_step = common::pick(400, 4_000);
    let db = common::database("clock_back").await;
    let coll = db.collection::<Hourly>("stamps");
    let at = |s: &str| -> Timestamp { s.parse().unwrap() };
    let clock = Arc::new(ManualClock::new(at("2026-11-28T10:59:00Z")));
    Hourly::sequence(&coll).set_clock(clock.clone());
    // 10:59, then 11:00:30 (a new hour), back 3 minutes and more to 10:57 (the old hour,
    // with ranges of the new one cached), then 11:01.
    let steps = [
        "2026-11-28T11:00:30Z",
        "2026-11-28T10:57:00Z",
        "2026-11-28T11:01:00Z",
    ];
    let done = Arc::new(AtomicUsize::new(0));
    // How many times the clock was set: counted before each set.
    let sets = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (coll, clock, done, stop) =
                (coll.clone(), clock.clone(), done.clone(), stop.clone());
            let sets = sets.clone();
            tokio::spawn(async move {
                let mut taken = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let call = format!("{task}-{i}");
                    let sets_before = sets.load(Ordering::SeqCst);
                    let before = hour(clock.now());
                    let mut doc = Hourly {
                        id: String::new(),
                        call: call.clone(),
                    };
                    let id = doc.insert_with_id(&coll).await.expect("an insert");
                    let after = hour(clock.now());
                    let clock_set = sets.load(Ordering::SeqCst) != sets_before;
                    taken.push(Taken {
                        id,
                        call,
                        before,
                        after,
                        clock_set,
                    });
                    done.fetch_add(1, Ordering::SeqCst);
                }
                taken
            })
        })
        .collect();
    for (k, step) in steps.iter().enumerate() {
        let target = (k + 1) * per_step;
        let limit = std::time::Duration::from_secs(60);
        assert!(
            common::wait_until(limit, || done.load(Ordering::SeqCst) >= target).await,
            "the tasks made {} calls, not {target}",
            done.load(Ordering::SeqCst)
        );
        sets.fetch_add(1, Ordering::SeqCst);
        clock.set(at(step));
    }
    let last = (steps.len() + 1) * per_step;
    let limit = std::time::Duration::from_secs(60);
    assert!(common::wait_until(limit, || done.load(Ordering::SeqCst) >= last).await);
    stop.store(true, Ordering::SeqCst);
    let mut taken = Vec::new();
    for t in tasks {
        taken.extend(t.await.unwrap());
    }

    // Each ID in the period the clock said, for each call the clock was not set during (a
    // set between two readings of one period would have gone there and back).
    let mut periods = std::collections::BTreeMap::<String, usize>::new();
    for t in &taken {
        let (p, _) = t.id.split_once('-').expect("an ID with a period");
        *periods.entry(p.to_owned()).or_default() += 1;
        if !t.clock_set {
            assert_eq!(t.before, t.after);
            assert_eq!(
                p, t.before,
                "{} taken while the clock said {}",
                t.id, t.before
            );
        }
    }
    assert_eq!(periods.len(), 2, "IDs of both hours: {periods:?}");

    // The checker, per period: (period, number) as one key, and the calls.
    let stored = Stored::read_hourly(&db, "stamps").await;
    let acknowledged: Vec<(i64, String)> = taken
        .iter()
        .map(|t| (hourly_key(&t.id), t.call.clone()))
        .collect();
    checker::judge(&acknowledged, &stored, Promise::default()).assert_clean("clock-back");
    assert_eq!(stored.documents(), taken.len());
    println!(
        "reliability: clock-back tasks={TASKS} ids={} periods={periods:?} duplicates=0 lost=0",
        taken.len()
    );
}
