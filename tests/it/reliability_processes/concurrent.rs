//! Processes numbering at once, each until it is done: 4 processes on one counter (batch 1, 25
//! and 1000) and 8 (batch 25), gapless groups of 2 processes, and 2 processes whose clocks
//! differ crossing midnight.

use crate::checker::{self, Promise, Stored};
use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use mongo_sequence::Batch;
use mongodb::bson::{doc, Document};
use sequence_testkit::{unique_db_name, TestServer};

use super::{
    read_ids, run_workers, Scratch, WORKER_BATCH, WORKER_CLOCK, WORKER_CLOCK_STEP, WORKER_DB,
    WORKER_LABEL, WORKER_OUT, WORKER_PER_TASK, WORKER_TASKS, WORKER_URI,
};

const TASKS: u64 = 32;

/// 4 processes × 32 tasks on one counter, with batch 1, 25 and 1000, then 8 × 32 with batch 25.
/// Each process takes a whole number of ranges, so what it holds unused at the end is at most
/// its prefetched range: the union has no duplicate and misses at most `processes × batch`
/// values (none with batch 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_share_one_counter() {
    let server = TestServer::shared_or_panic();
    // (processes, batch, IDs per task): per process 32 × n, a multiple of the batch.
    let runs: [(usize, u64, u64); 4] = [
        (4, 1, common::pick(100, 500)),
        (4, 25, common::pick(250, 5000)),
        (4, 1000, common::pick(1000, 10_000)),
        (8, 25, common::pick(250, 2500)),
    ];
    let mut total = 0;
    let mut total_lost = 0;
    let mut lines = Vec::new();
    for (processes, batch, per_task) in runs {
        assert_eq!(TASKS * per_task % batch, 0);
        let name = unique_db_name(&format!("processes_{processes}_{batch}"));
        let scratch = Scratch::new(&name);
        let started = Instant::now();
        let outputs = run_workers(&scratch, "alloc", processes, |_, out| {
            vec![
                (WORKER_URI, server.uri().to_owned()),
                (WORKER_DB, name.clone()),
                (WORKER_BATCH, batch.to_string()),
                (WORKER_TASKS, TASKS.to_string()),
                (WORKER_PER_TASK, per_task.to_string()),
                (WORKER_OUT, out),
            ]
        })
        .await
        .iter()
        .map(|out| read_ids(out))
        .collect::<Vec<_>>();
        let elapsed = started.elapsed();

        let mut union = HashSet::new();
        let mut duplicates = 0;
        for ids in &outputs {
            assert_eq!(ids.len() as u64, TASKS * per_task, "every task got its IDs");
            for id in ids {
                if !union.insert(*id) {
                    duplicates += 1;
                }
            }
        }
        assert_eq!(duplicates, 0, "batch {batch}: IDs issued twice");
        let db = common::client().await.database(&name);
        let last = common::counter(&db, "load").await.unwrap_or(0);
        let issued = union.len() as i64;
        let max_issued = *union.iter().max().unwrap();
        let lost = last - issued;
        let holes = max_issued - issued;
        // Each process ends holding what is left of its ranges: one batch, or from
        // `AHEAD_FROM` on up to two reservations of `MAX_AHEAD` batches each.
        let bound = if batch == 1 {
            0
        } else if batch >= Batch::AHEAD_FROM {
            (processes as u64 * 2 * Batch::MAX_AHEAD * batch) as i64
        } else {
            processes as i64 * batch as i64
        };
        assert!(union.iter().all(|id| (1..=last).contains(id)));
        assert!(
            lost <= bound,
            "batch {batch}: {lost} values lost, bound {bound}"
        );
        total += issued;
        total_lost += lost;
        lines.push(format!(
            "processes={processes} batch={batch} ids={issued} lost={lost} holes={holes} bound={bound} ms={}",
            elapsed.as_millis()
        ));
    }
    for line in &lines {
        println!("processes: {line}");
    }
    assert!(total >= 200_000, "{total} IDs");
    println!(
        "reliability: multi-process processes=4,8 tasks={TASKS} ids={total} duplicates=0 lost={total_lost} faults=0"
    );
}

/// 2 processes × 16 tasks of gapless inserts into one collection, one insert in eight refused by
/// a unique index: each process commits its callers in groups, the groups of the two conflict
/// and are retried, and the stored numbers are exactly 1..=N, each acknowledged once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_groups_across_processes() {
    const GAPLESS_PROCESSES: usize = 2;
    const GAPLESS_TASKS: u64 = 16;
    let server = TestServer::shared_or_panic();
    let per_task = common::pick(16, 200);
    let name = unique_db_name("processes_gapless");
    let scratch = Scratch::new(&name);
    let db = common::client().await.database(&name);
    common::unique_index(&db.collection::<Document>("receipts"), "code").await;
    let started = Instant::now();
    let outputs = run_workers(&scratch, "gapless", GAPLESS_PROCESSES, |p, out| {
        vec![
            (WORKER_URI, server.uri().to_owned()),
            (WORKER_DB, name.clone()),
            (WORKER_TASKS, GAPLESS_TASKS.to_string()),
            (WORKER_PER_TASK, per_task.to_string()),
            (WORKER_LABEL, format!("p{p}")),
            (WORKER_OUT, out),
        ]
    })
    .await
    .iter()
    .map(|out| std::fs::read_to_string(out).unwrap())
    .collect::<Vec<_>>();
    let elapsed = started.elapsed();
    let (mut acknowledged, mut refused) = (HashSet::new(), 0);
    for line in outputs.iter().flat_map(|o| o.lines()) {
        match line.split_once(' ') {
            Some(("ok", id)) => {
                let id: i64 = id.parse().unwrap();
                assert!(acknowledged.insert(id), "ID {id} acknowledged twice");
            }
            _ => {
                assert_eq!(line, "refused");
                refused += 1;
            }
        }
    }
    let calls = GAPLESS_PROCESSES as u64 * GAPLESS_TASKS * per_task;
    assert_eq!(acknowledged.len() as u64 + refused, calls);
    assert_eq!(refused, calls / 8, "exactly the repeated codes are refused");
    let stored = Stored::read(&db, "receipts", "_id").await;
    let n = acknowledged.len() as i64;
    let counter = common::counter(&db, "receipt").await.unwrap_or(0);
    let dense = Promise {
        gaps_at_most: Some((counter, 0)),
        dense: true,
    };
    let acknowledged: Vec<i64> = acknowledged.into_iter().collect();
    checker::judge(&acknowledged, &stored, dense).assert_clean("gapless processes");
    assert_eq!(
        (stored.documents() as i64, counter),
        (n, n),
        "N stored, the counter N"
    );
    println!(
        "reliability: gapless-processes processes={GAPLESS_PROCESSES} tasks={} ids={n} duplicates=0 gaps=0 refused={refused} ms={}",
        GAPLESS_PROCESSES as u64 * GAPLESS_TASKS,
        elapsed.as_millis()
    );
}

/// Two processes whose clocks differ by two minutes number one `prefix = "YYMMDD"` model at
/// once, both across midnight (each clock moves 2 s per insert: the first crosses at its 90th
/// insert, the other, behind, at its 150th), with batch 25 and gapless: no ID is issued twice,
/// and each ID is in the day its own process's clock named, even while the other process
/// already numbers the next day; gapless numbers are dense from 1 within each day.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skewed_clocks_number_each_their_own_day() {
    let server = TestServer::shared_or_panic();
    let per_process: u64 = common::pick(200, 2000);
    for mode in ["25", "gapless"] {
        let name = unique_db_name("processes_skew");
        let scratch = Scratch::new(&name);
        let db = common::client().await.database(&name);
        let clocks = ["2025-11-25T23:57:00Z", "2025-11-25T23:55:00Z"];
        let outputs = run_workers(&scratch, "skew", clocks.len(), |p, out| {
            vec![
                (WORKER_URI, server.uri().to_owned()),
                (WORKER_DB, name.clone()),
                (WORKER_BATCH, mode.to_owned()),
                (WORKER_CLOCK, clocks[p].to_owned()),
                (WORKER_CLOCK_STEP, "2000".to_owned()),
                (WORKER_PER_TASK, per_process.to_string()),
                (WORKER_LABEL, format!("p{p}")),
                (WORKER_OUT, out),
            ]
        })
        .await;
        let mut issued = HashSet::new();
        let mut days: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for out in &outputs {
            for line in std::fs::read_to_string(out).unwrap().lines() {
                let (day, id) = line.split_once(' ').unwrap();
                assert!(issued.insert(id.to_owned()), "{mode}: ID {id} issued twice");
                assert_eq!(
                    &id[..6],
                    day,
                    "{mode}: {id} is in the day its process's clock named"
                );
                days.entry(day.to_owned())
                    .or_default()
                    .push(id[6..].parse().unwrap());
            }
        }
        assert_eq!(issued.len() as u64, 2 * per_process);
        assert_eq!(
            days.keys().map(String::as_str).collect::<Vec<_>>(),
            ["251125", "251126"],
            "{mode}: both days were numbered"
        );
        if mode == "gapless" {
            for (day, numbers) in &mut days {
                numbers.sort_unstable();
                let dense: Vec<u64> = (1..=numbers.len() as u64).collect();
                assert_eq!(
                    *numbers, dense,
                    "gapless: the numbers of {day} are dense from 1"
                );
            }
        }
        // The checker, with each ID's day and number as one key (`YYMMDD` and six digits).
        let key = |id: &str| -> i64 { id.parse().expect("a stamp of twelve digits") };
        let stamps: Vec<Document> = common::all(&db.collection::<Document>("stamps")).await;
        let stored = Stored::from_numbers(stamps.iter().map(|d| key(d.get_str("_id").unwrap())));
        let acknowledged: Vec<i64> = issued.iter().map(|id| key(id)).collect();
        checker::judge(&acknowledged, &stored, Promise::default()).assert_clean(mode);
        assert_eq!(
            stored.documents() as u64,
            2 * per_process,
            "{mode}: each acknowledged stamp stored once"
        );
        println!(
            "reliability: clock-skew mode={mode} processes=2 skew_s=120 ids={} per_day={:?} duplicates=0 wrong_day=0",
            issued.len(),
            days.values().map(Vec::len).collect::<Vec<_>>()
        );
    }
}
