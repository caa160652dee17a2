//! Sequences at their limits, judged by the checker: counters reaching `max` under 32 tasks
//! (every value up to `max` issued once, then `Exhausted` for every caller, none past), and
//! 1,000 tasks inserting at once in one process.

use crate::checker::{self, Promise, Stored};
use crate::common;
use crate::reliability_support::{self as support, Until};

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// Counter `capped` with a batch, its last value 500; the number in a field without a unique
/// index, so that a number issued twice would be stored twice.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "capped", batch = 25, max = 500)]
struct Capped {
    #[seq(id)]
    number: i64,
    call: String,
}

/// The same one value at a time (callers waiting together share a reservation).
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "capped_one", max = 300)]
struct CappedOne {
    #[seq(id)]
    number: i64,
    call: String,
}

/// A busy counter with a batch, for many tasks at once.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "crowd", batch = 25)]
struct Crowd {
    #[seq(id)]
    number: i64,
    call: String,
}

/// The same one value at a time.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "crowd_one")]
struct CrowdOne {
    #[seq(id)]
    number: i64,
    call: String,
}

/// Counters reaching `max` under 32 tasks, with a batch and without: every value up to `max`
/// is stored once (`1..=max`, nothing past), and every task's last call is `Exhausted`, the
/// one error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_reaching_max_issue_every_value_once() {
    const TASKS: usize = 32;
    let db = common::database("max_limit").await;
    let (capped, capped_one) = (
        db.collection::<Capped>("capped"),
        db.collection::<CappedOne>("capped_one"),
    );
    // Each task calls until a call fails with `Exhausted`; any other error is counted too,
    // and fails the checks below.
    let (batched, one) = tokio::join!(
        support::concurrent(TASKS, Until::Failed("exhausted"), move |call| {
            let coll = capped.clone();
            async move { Capped { number: 0, call }.insert_with_id(&coll).await }
        }),
        support::concurrent(TASKS, Until::Failed("exhausted"), move |call| {
            let coll = capped_one.clone();
            async move { CappedOne { number: 0, call }.insert_with_id(&coll).await }
        }),
    );
    let mut ids = 0;
    for (label, calls, coll, counter, max) in [
        ("batch=25", &batched, "capped", "capped", 500),
        ("batch=1", &one, "capped_one", "capped_one", 300),
    ] {
        let (ok, errors) = support::outcomes(calls);
        let stored = Stored::read(&db, coll, "number").await;
        let dense = Promise {
            gaps_at_most: Some((max, 0)),
            dense: true,
        };
        checker::judge(&ok, &stored, dense).assert_clean(label);
        assert_eq!(
            stored.documents(),
            max as usize,
            "{label}: every value once"
        );
        assert_eq!(
            errors,
            vec!["exhausted".to_owned(); TASKS],
            "{label}: each task's last call, and no other, failed with Exhausted"
        );
        assert_eq!(
            common::counter(&db, counter).await,
            Some(max),
            "{label}: the counter stops at max"
        );
        ids += ok.len();
    }
    println!(
        "reliability: max-limit ids={ids} exhausted={} duplicates=0 lost=0 past_max=0",
        2 * TASKS
    );
}

/// 1,000 tasks in one process insert at once (`SOAK=1`: 4,000), with a batch and without: no
/// number twice, every acknowledged document stored, and the batch's gaps within what its
/// cache holds at the end (at most the two reservations of `common::held_at_most`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tasks_in_one_process() {
    let tasks = common::pick(1_000, 4_000);
    let db = common::database("many_tasks").await;
    let (crowd, crowd_one) = (
        db.collection::<Crowd>("crowd"),
        db.collection::<CrowdOne>("crowd_one"),
    );
    let run = |i: usize| {
        let (crowd, crowd_one) = (crowd.clone(), crowd_one.clone());
        async move {
            let call = format!("call-{i}");
            let batched = Crowd {
                number: 0,
                call: call.clone(),
            }
            .insert_with_id(&crowd)
            .await;
            let one = CrowdOne { number: 0, call }
                .insert_with_id(&crowd_one)
                .await;
            (batched, one)
        }
    };
    let handles: Vec<_> = (0..tasks).map(|i| tokio::spawn(run(i))).collect();
    let (mut batched, mut one) = (Vec::new(), Vec::new());
    for h in handles {
        let (b, o) = h.await.unwrap();
        batched.push(b.expect("an insert with a batch"));
        one.push(o.expect("an insert without a batch"));
    }
    for (label, ok, coll, counter, batch) in [
        ("batch=25", &batched, "crowd", "crowd", 25),
        ("batch=1", &one, "crowd_one", "crowd_one", 1),
    ] {
        let held = common::held_by_cache(&db, counter, batch).await;
        let stored = Stored::read(&db, coll, "number").await;
        let last = common::counter(&db, counter).await.unwrap_or(0);
        let gaps = Promise {
            gaps_at_most: Some((last, held)),
            dense: false,
        };
        checker::judge(ok, &stored, gaps).assert_clean(label);
        assert_eq!(stored.documents(), tasks, "{label}");
    }
    println!(
        "reliability: many-tasks tasks={tasks} ids={} duplicates=0 lost=0",
        2 * tasks
    );
}
