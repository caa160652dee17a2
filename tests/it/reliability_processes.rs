//! Several operating-system processes on one counter, and processes killed with `SIGKILL` in the
//! middle of a range and started again.
//!
//! The workers are this test binary itself, run again with `--ignored --exact
//! reliability_processes::worker` and the environment variables below; they connect to the
//! parent's server through its URI and never start one of their own.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::models::{self, Receipt};
use mongo_sequence::{Batch, Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, Document};
use sequence_testkit::{unique_db_name, ServerOptions, TestServer};
use serde::{Deserialize, Serialize};

/// Set in a worker's environment: what it does (`alloc` or `insert`).
const WORKER: &str = "MONGO_SEQUENCE_TEST_WORKER";
const WORKER_URI: &str = "MONGO_SEQUENCE_TEST_WORKER_URI";
const WORKER_DB: &str = "MONGO_SEQUENCE_TEST_WORKER_DB";
const WORKER_BATCH: &str = "MONGO_SEQUENCE_TEST_WORKER_BATCH";
const WORKER_TASKS: &str = "MONGO_SEQUENCE_TEST_WORKER_TASKS";
const WORKER_PER_TASK: &str = "MONGO_SEQUENCE_TEST_WORKER_PER_TASK";
const WORKER_OUT: &str = "MONGO_SEQUENCE_TEST_WORKER_OUT";
const WORKER_LABEL: &str = "MONGO_SEQUENCE_TEST_WORKER_LABEL";
/// The time a `skew` worker's clock starts at, and how far it moves before each insert (ms).
const WORKER_CLOCK: &str = "MONGO_SEQUENCE_TEST_WORKER_CLOCK";
const WORKER_CLOCK_STEP: &str = "MONGO_SEQUENCE_TEST_WORKER_CLOCK_STEP";

/// Longest a worker runs, whatever it is told.
const WORKER_TIME_LIMIT: Duration = Duration::from_secs(180);

/// The documents the crash test inserts. The ID is not `_id` and has no unique index, so an ID
/// issued twice would be stored twice instead of being refused.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "crash", batch = 50)]
struct Job {
    #[seq(id)]
    number: i64,
    worker: String,
}

const CRASH_BATCH: i64 = 50;

/// The documents of the gapless crash test, numbered in a field without a unique index (a
/// number given twice would be stored twice), committed in rounds.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "gapless_crash", gapless)]
struct GaplessJob {
    #[seq(id)]
    number: i64,
    worker: String,
}

/// The documents of the proxy crash test: their uniqueness is held by claims in a proxy
/// collection (`proxied.claims.number`), written with each document in one transaction, a
/// round of several documents at a time when inserts wait together.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "proxied", batch = 25, unique = "proxy")]
struct ProxiedJob {
    #[seq(id)]
    number: i64,
    worker: String,
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("worker: {name} is not set"))
}

fn env_num(name: &str) -> u64 {
    env(name)
        .parse()
        .unwrap_or_else(|e| panic!("worker: {name}: {e}"))
}

/// The documents of the crash test of first values: numbered per tenant in a field without a
/// unique index (a number given twice to a tenant would be stored twice). Each new process
/// meets every tenant for the first time, so most of its inserts take their tenant's first
/// value in a round of first values.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "tenant_crash", scope = "tenant", batch = 10)]
struct TenantJob {
    #[seq(id)]
    number: i64,
    tenant: i64,
    worker: String,
}

/// The tenants of the crash test of first values.
const CRASH_TENANTS: u64 = 600;

/// The acknowledged line of a tenant's job: its tenant and number in one integer.
fn tenant_job_key(tenant: i64, number: i64) -> i64 {
    tenant * 1_000_000 + number
}

/// The worker side: does nothing unless started by the tests below.
#[test]
#[ignore = "a worker process started by the other tests of this file"]
fn worker() {
    let Ok(mode) = std::env::var(WORKER) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let client = mongodb::Client::with_uri_str(env(WORKER_URI))
            .await
            .unwrap();
        let db = client.database(&env(WORKER_DB));
        match mode.as_str() {
            "alloc" => alloc_worker(db).await,
            "insert" => {
                let make = |worker: String| Job { number: 0, worker };
                insert_worker(db.collection("jobs"), make, |job| job.number).await
            }
            "proxy" => {
                let make = |worker: String| ProxiedJob { number: 0, worker };
                insert_worker(db.collection("proxied"), make, |job| job.number).await
            }
            "gapless_stream" => {
                let make = |worker: String| GaplessJob { number: 0, worker };
                insert_worker(db.collection("gapless_jobs"), make, |job| job.number).await
            }
            "first_values" => {
                static NEXT: AtomicU64 = AtomicU64::new(0);
                let make = |worker: String| {
                    let n = NEXT.fetch_add(1, Ordering::Relaxed);
                    let tenant = (n * 7919 % CRASH_TENANTS) as i64;
                    TenantJob {
                        number: 0,
                        tenant,
                        worker,
                    }
                };
                let ack = |job: &TenantJob| tenant_job_key(job.tenant, job.number);
                insert_worker(db.collection("tenant_jobs"), make, ack).await
            }
            "gapless" => gapless_worker(db).await,
            "skew" => skew_worker(db).await,
            other => panic!("worker: unknown mode {other}"),
        }
    });
}

/// `tasks` tasks each take `per_task` IDs from the counter `load`; the process then gives its
/// unused values back where it can and writes every ID it got to the output file.
async fn alloc_worker(db: mongodb::Database) {
    let batch = env_num(WORKER_BATCH);
    let seq = Sequence::new(&db, SequenceOptions::builder("load").batch(batch).build()).unwrap();
    let per_task = env_num(WORKER_PER_TASK) as usize;
    let tasks: Vec<_> = (0..env_num(WORKER_TASKS))
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
    let mut out = String::new();
    for t in tasks {
        for id in t.await.unwrap() {
            out.push_str(&id.to_string());
            out.push('\n');
        }
    }
    seq.release().await.unwrap();
    std::fs::write(env(WORKER_OUT), out).unwrap();
}

/// `tasks` tasks each make `per_task` gapless inserts, one in eight repeating a code; the output
/// file gets `ok ID` for each insert that succeeded and `refused` for each duplicate code.
async fn gapless_worker(db: mongodb::Database) {
    let coll = db.collection::<Receipt>("receipts");
    let label = env(WORKER_LABEL);
    let per_task = env_num(WORKER_PER_TASK);
    let tasks: Vec<_> = (0..env_num(WORKER_TASKS))
        .map(|task| {
            let (coll, label) = (coll.clone(), label.clone());
            tokio::spawn(async move {
                let mut out = String::new();
                for i in 0..per_task {
                    let (mut receipt, repeats) = models::receipt(&format!("{label}-{task}"), i);
                    match receipt.insert_with_id(&coll).await {
                        Ok(id) => out.push_str(&format!("ok {id}\n")),
                        Err(mongo_sequence::Error::DuplicateKey { .. }) if repeats => {
                            out.push_str("refused\n")
                        }
                        Err(e) => panic!("worker: insert {task}-{i}: {e}"),
                    }
                }
                out
            })
        })
        .collect();
    let mut out = String::new();
    for t in tasks {
        out.push_str(&t.await.unwrap());
    }
    std::fs::write(env(WORKER_OUT), out).unwrap();
}

/// Stamps of a day, numbered per day from the clock of the process that inserts them.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "stamp", prefix = "YYMMDD", width = 6, batch = 25)]
struct Stamp {
    #[serde(rename = "_id")]
    id: String,
    worker: String,
}

/// The same, gapless: each day's numbers dense from 1.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "gapless_stamp", prefix = "YYMMDD", width = 6, gapless)]
struct GaplessStamp {
    #[serde(rename = "_id")]
    id: String,
    worker: String,
}

/// Inserts `per_task` stamps (`GaplessStamp`s when `WORKER_BATCH` is `gapless`), moving its own
/// clock (a `ManualClock` from `WORKER_CLOCK`) by `WORKER_CLOCK_STEP` ms before each; the output
/// file gets `YYMMDD ID` per insert: the day its clock said, and the ID it got.
async fn skew_worker(db: mongodb::Database) {
    let start: mongo_sequence::jiff::Timestamp = env(WORKER_CLOCK).parse().unwrap();
    let step = mongo_sequence::jiff::SignedDuration::from_millis(env_num(WORKER_CLOCK_STEP) as i64);
    let clock = Arc::new(mongo_sequence::clock::ManualClock::new(start));
    let worker = env(WORKER_LABEL);
    let gapless = env(WORKER_BATCH) == "gapless";
    let (stamps, gapless_stamps) = (
        db.collection::<Stamp>("stamps"),
        db.collection::<GaplessStamp>("stamps"),
    );
    if gapless {
        GaplessStamp::sequence(&gapless_stamps).set_clock(clock.clone());
    } else {
        Stamp::sequence(&stamps).set_clock(clock.clone());
    }
    let mut out = String::new();
    let mut now = start;
    for _ in 0..env_num(WORKER_PER_TASK) {
        now = now.checked_add(step).unwrap();
        clock.set(now);
        let day = now.strftime("%y%m%d").to_string();
        let (id, worker) = (String::new(), worker.clone());
        let id = if gapless {
            GaplessStamp { id, worker }
                .insert_with_id(&gapless_stamps)
                .await
        } else {
            Stamp { id, worker }.insert_with_id(&stamps).await
        }
        .unwrap();
        out.push_str(&format!("{day} {id}\n"));
    }
    if !gapless {
        Stamp::sequence(&stamps).release().await.unwrap();
    }
    std::fs::write(env(WORKER_OUT), out).unwrap();
}

/// `tasks` tasks insert documents `make` makes until standard input closes (or the time
/// limit), appending each acknowledged insert's `ack` (its ID, or what identifies it) to the
/// output file at once, so that a kill loses none of them.
async fn insert_worker<M>(coll: mongodb::Collection<M>, make: fn(String) -> M, ack: fn(&M) -> i64)
where
    M: SequentialId<Id = i64>,
{
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            stop.store(true, Ordering::SeqCst);
        });
    }
    let out = Arc::new(Mutex::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(env(WORKER_OUT))
            .unwrap(),
    ));
    let label = env(WORKER_LABEL);
    let started = Instant::now();
    let tasks: Vec<_> = (0..env_num(WORKER_TASKS))
        .map(|_| {
            let (coll, out, stop, label) = (coll.clone(), out.clone(), stop.clone(), label.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) && started.elapsed() < WORKER_TIME_LIMIT {
                    let mut doc = make(label.clone());
                    doc.insert_with_id(&coll).await.unwrap();
                    out.lock()
                        .unwrap()
                        .write_all(format!("{}\n", ack(&doc)).as_bytes())
                        .unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    M::sequence(&coll).release().await.unwrap();
}

// ----- The parent side -----

/// The name the test harness knows [`worker`] by: its path in the test binary, without the
/// binary's name (`reliability_processes::worker`).
fn worker_test_name() -> String {
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_binary, module)| module);
    format!("{module}::worker")
}

/// Starts this test binary as a worker.
fn spawn_worker(mode: &str, vars: &[(&str, String)], stderr_to: &Path) -> Child {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--ignored",
        "--exact",
        &worker_test_name(),
        "--nocapture",
        "--test-threads=1",
    ])
    .env(WORKER, mode)
    .env_remove("SOAK")
    .stdin(Stdio::piped())
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(stderr_to).unwrap());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.spawn().expect("a worker process starts")
}

/// Starts `count` workers in `mode`, worker `p` with the environment `vars(p, its output
/// file)`, waits for all of them to exit successfully (5 minutes at most), and returns their
/// output files.
async fn run_workers(
    scratch: &Scratch,
    mode: &str,
    count: usize,
    vars: impl Fn(usize, String) -> Vec<(&'static str, String)>,
) -> Vec<PathBuf> {
    let children: Vec<_> = (0..count)
        .map(|p| {
            let out = scratch.0.join(format!("{mode}-out-{p}"));
            let err = scratch.0.join(format!("{mode}-err-{p}"));
            let child = spawn_worker(mode, &vars(p, out.display().to_string()), &err);
            (child, out, err)
        })
        .collect();
    tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|(mut child, out, err)| {
                wait_ok(&mut child, Duration::from_secs(300), &err);
                out
            })
            .collect()
    })
    .await
    .unwrap()
}

/// Kills a worker with `SIGKILL` and asserts that it died of it, not before.
fn kill(child: &mut Child) {
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the worker died of the SIGKILL, not before it: {status}"
    );
}

/// Waits for a worker to exit successfully, killing it if it takes longer than `limit`.
fn wait_ok(child: &mut Child, limit: Duration, stderr: &Path) {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(
                status.success(),
                "worker failed ({status}): {}",
                std::fs::read_to_string(stderr).unwrap_or_default()
            );
            return;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("worker did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The IDs a worker wrote (ignoring a last line cut short by a kill).
fn read_ids(path: &Path) -> Vec<i64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(|l| l.trim_end().parse().unwrap())
        .collect()
}

/// A scratch directory for the workers' files, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mongo-sequence-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const PROCESSES: usize = 4;
const TASKS: u64 = 32;

/// 4 processes × 32 tasks on one counter, with batch 1, 25 and 1000. Each process takes a whole
/// number of ranges, so what it holds unused at the end is at most its prefetched range: the
/// union has no duplicate and misses at most `processes × batch` values (none with batch 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_share_one_counter() {
    let server = TestServer::shared_or_panic();
    // (batch, IDs per task): per process 32 × n, a multiple of the batch.
    let runs: [(u64, u64); 3] = [
        (1, common::pick(100, 500)),
        (25, common::pick(1250, 5000)),
        (1000, common::pick(2000, 10_000)),
    ];
    let mut total = 0;
    let mut total_lost = 0;
    let mut lines = Vec::new();
    for (batch, per_task) in runs {
        assert_eq!(TASKS * per_task % batch, 0);
        let name = unique_db_name(&format!("processes_{batch}"));
        let scratch = Scratch::new(&name);
        let started = Instant::now();
        let outputs = run_workers(&scratch, "alloc", PROCESSES, |_, out| {
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
            (PROCESSES as u64 * 2 * Batch::MAX_AHEAD * batch) as i64
        } else {
            PROCESSES as i64 * batch as i64
        };
        assert!(union.iter().all(|id| (1..=last).contains(id)));
        assert!(
            lost <= bound,
            "batch {batch}: {lost} values lost, bound {bound}"
        );
        total += issued;
        total_lost += lost;
        lines.push(format!(
            "batch={batch} ids={issued} lost={lost} holes={holes} bound={bound} ms={}",
            elapsed.as_millis()
        ));
    }
    for line in &lines {
        println!("processes: {line}");
    }
    assert!(total >= 200_000, "{total} IDs");
    println!(
        "reliability: multi-process processes={PROCESSES} tasks={TASKS} ids={total} duplicates=0 lost={total_lost} faults=0"
    );
}

/// Two worker processes insert documents with `batch = 50`; ten times, one of them is killed
/// with `SIGKILL` while it works through a range, and started again. No ID is issued twice,
/// every acknowledged document is stored, and at most the ranges a killed process held (its
/// current one and the prefetched one: `2 × batch` per kill) are lost, plus what the two
/// processes still hold when they stop at the end (given back where nobody took a later range).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_processes_never_reuse_an_id() {
    let server = TestServer::shared_or_panic();
    const SLOTS: usize = 2;
    let kills = common::pick(10, 40);
    let name = unique_db_name("crash");
    let scratch = Scratch::new(&name);
    let dir = scratch.0.clone();
    let uri = server.uri().to_owned();
    let db_name = name.clone();
    let life = AtomicU64::new(0);
    let spawn = move |slot: usize| {
        let n = life.fetch_add(1, Ordering::SeqCst);
        let label = format!("slot{slot}-life{n}");
        let out = dir.join(format!("{label}.ids"));
        let err = dir.join(format!("{label}.err"));
        let child = spawn_worker(
            "insert",
            &[
                (WORKER_URI, uri.clone()),
                (WORKER_DB, db_name.clone()),
                (WORKER_TASKS, "4".to_owned()),
                (WORKER_OUT, out.display().to_string()),
                (WORKER_LABEL, label.clone()),
            ],
            &err,
        );
        (child, out, err)
    };
    let started = Instant::now();
    let (killed, finished) = tokio::task::spawn_blocking(move || {
        let mut running: Vec<_> = (0..SLOTS).map(&spawn).collect();
        let mut killed = Vec::new();
        for k in 0..kills {
            let slot = k % SLOTS;
            // Let it get going (some IDs out, so a range is in use), then a little more.
            let (_, out, _) = &running[slot];
            let before = read_ids(out).len();
            let deadline = Instant::now() + Duration::from_secs(60);
            while read_ids(out).len() < before + 30 {
                assert!(Instant::now() < deadline, "worker {slot} makes no progress");
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis((k as u64 * 37) % 300));
            let (mut child, out, _) = std::mem::replace(&mut running[slot], spawn(slot));
            kill(&mut child);
            killed.push(out);
        }
        let mut finished = Vec::new();
        for (mut child, out, err) in running {
            drop(child.stdin.take()); // closing standard input stops the worker
            wait_ok(&mut child, Duration::from_secs(120), &err);
            finished.push(out);
        }
        (killed, finished)
    })
    .await
    .unwrap();
    let elapsed = started.elapsed();

    let db = common::client().await.database(&name);
    let docs: Vec<Document> = common::all(&db.collection::<Document>("jobs")).await;
    let mut stored = BTreeMap::<i64, usize>::new();
    for d in &docs {
        *stored.entry(d.get_i64("number").unwrap()).or_default() += 1;
    }
    let reused: Vec<_> = stored.iter().filter(|(_, n)| **n > 1).collect();
    assert!(reused.is_empty(), "IDs stored more than once: {reused:?}");

    let mut acknowledged = HashSet::new();
    let mut mid_range = 0;
    for path in killed.iter().chain(&finished) {
        let ids = read_ids(path);
        for id in &ids {
            assert!(acknowledged.insert(*id), "ID {id} acknowledged twice");
            assert!(
                stored.contains_key(id),
                "acknowledged ID {id} is not stored"
            );
        }
        // Ranges are aligned on the batch until the final stops give values back: a killed
        // process worked in the middle of a range if it acknowledged only part of the range
        // of its highest ID.
        if let (true, Some(&top)) = (killed.contains(path), ids.iter().max()) {
            let range = (top - 1) / CRASH_BATCH;
            let used = ids
                .iter()
                .filter(|id| (*id - 1) / CRASH_BATCH == range)
                .count();
            if (used as i64) < CRASH_BATCH {
                mid_range += 1;
            }
        }
    }
    // The kills fell in the middle of ranges (the fault this test is about), most of them.
    assert!(
        mid_range * 2 >= kills,
        "only {mid_range} of {kills} kills hit a process in the middle of a range"
    );
    let last = common::counter(&db, "crash").await.unwrap_or(0);
    let lost = last - stored.len() as i64;
    let bound = 2 * CRASH_BATCH * (kills as i64 + SLOTS as i64);
    assert!(lost <= bound, "{lost} values lost, bound {bound}");
    println!(
        "reliability: crash kills={kills} mid_range_kills={mid_range} ids={} acknowledged={} duplicates=0 lost={lost} lost_bound={bound} (2 x batch {CRASH_BATCH} x (kills + {SLOTS} final stops)) ms={}",
        stored.len(),
        acknowledged.len(),
        elapsed.as_millis()
    );
}

/// What [`kill_mid_rounds`] leaves: the server, the database, the workers' output files and
/// how many kills left a transaction open.
struct Killed {
    server: TestServer,
    /// Holds the output files until the checks are done.
    _scratch: Scratch,
    name: String,
    outputs: Vec<PathBuf>,
    caught: usize,
    kills: usize,
    elapsed: Duration,
}

/// Runs `processes` workers of `mode` (8 tasks each) on a server of the test's own (started
/// with `options`), kills all of them with `SIGKILL` once the first acknowledged 40 more
/// inserts, and starts them again, `kills` times (`SOAK`: 30), then lets the last ones finish.
/// No worker runs while the server's open transactions are counted after a kill, so a kill
/// that leaves more open than before caught a round in flight, whose writes nobody sees (it
/// never commits). With `until_caught`, while no kill has caught one the kills go on, up to
/// four times as many (a loaded machine can make rounds rare at the moment of a kill).
async fn kill_mid_rounds(
    mode: &'static str,
    processes: usize,
    options: ServerOptions,
    until_caught: bool,
) -> Killed {
    let server = tokio::task::spawn_blocking(move || TestServer::start(options))
        .await
        .unwrap()
        .expect("a server for the crash test starts");
    let kills = common::pick(6, 30);
    let name = unique_db_name(&format!("{mode}_crash"));
    let scratch = Scratch::new(&name);
    let dir = scratch.0.clone();
    let uri = server.uri().to_owned();
    let admin = mongodb::Client::with_uri_str(&uri)
        .await
        .unwrap()
        .database("admin");
    let open_transactions = move || {
        let admin = admin.clone();
        async move {
            let status = admin.run_command(doc! { "serverStatus": 1 }).await.unwrap();
            let open = status
                .get_document("transactions")
                .unwrap()
                .get("currentOpen");
            open.and_then(mongodb::bson::Bson::as_i64)
                .or_else(|| open.and_then(mongodb::bson::Bson::as_i32).map(i64::from))
                .unwrap()
        }
    };
    let db_name = name.clone();
    let life = AtomicU64::new(0);
    let spawn = move || {
        let n = life.fetch_add(1, Ordering::SeqCst);
        let label = format!("life{n}");
        let out = dir.join(format!("{label}.ids"));
        let err = dir.join(format!("{label}.err"));
        let vars = [
            (WORKER_URI, uri.clone()),
            (WORKER_DB, db_name.clone()),
            (WORKER_TASKS, "8".to_owned()),
            (WORKER_OUT, out.display().to_string()),
            (WORKER_LABEL, label),
        ];
        (spawn_worker(mode, &vars, &err), out, err)
    };
    let started = Instant::now();
    let mut outputs = Vec::new();
    let mut caught = 0;
    let mut open_before = open_transactions().await;
    let mut running: Vec<_> = (0..processes).map(|_| spawn()).collect();
    let mut k = 0;
    while k < kills || (until_caught && caught == 0 && k < 4 * kills) {
        let out = running[0].1.clone();
        let before = read_ids(&out).len();
        let deadline = Instant::now() + Duration::from_secs(60);
        while read_ids(&out).len() < before + 40 {
            for (child, _, err) in &mut running {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!(
                        "a {mode} worker ended ({status}): {}",
                        std::fs::read_to_string(err).unwrap_or_default()
                    );
                }
            }
            assert!(
                Instant::now() < deadline,
                "the {mode} worker makes no progress"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis((k as u64 * 37) % 200)).await;
        for (child, out, _) in &mut running {
            kill(child);
            outputs.push(out.clone());
        }
        // No worker runs now: the open transactions are the killed workers' rounds.
        let open = open_transactions().await;
        if open > open_before {
            caught += 1;
        }
        open_before = open;
        running = (0..processes).map(|_| spawn()).collect();
        k += 1;
    }
    for (mut child, out, err) in running {
        drop(child.stdin.take()); // closing standard input stops the worker
        tokio::task::spawn_blocking(move || wait_ok(&mut child, Duration::from_secs(120), &err))
            .await
            .unwrap();
        outputs.push(out);
    }
    Killed {
        server,
        _scratch: scratch,
        name,
        outputs,
        caught,
        kills: k,
        elapsed: started.elapsed(),
    }
}

impl Killed {
    /// The database of the run.
    async fn db(&self) -> mongodb::Database {
        mongodb::Client::with_uri_str(self.server.uri())
            .await
            .unwrap()
            .database(&self.name)
    }

    /// Asserts that every acknowledged ID is in `stored`, and that there were some; returns
    /// how many were acknowledged.
    fn acknowledged_stored(&self, stored: &HashSet<i64>) -> usize {
        let mut acknowledged = 0;
        for path in &self.outputs {
            for id in read_ids(path) {
                assert!(stored.contains(&id), "acknowledged ID {id} is not stored");
                acknowledged += 1;
            }
        }
        assert!(acknowledged > 0, "no insert was acknowledged");
        acknowledged
    }

    /// Asserts that at least one kill fell in the middle of a round (the fault these tests are
    /// about). A round whose operation was running when its process died is aborted by the
    /// server at once and is not counted, so this count is a lower bound.
    fn assert_caught_a_round(&self) {
        assert!(
            self.caught >= 1,
            "none of {} kills left a round's transaction open",
            self.kills
        );
    }
}

/// A process inserting from 8 tasks through the proxy's rounds (claims and documents of the
/// inserts waiting together, one transaction) is killed with `SIGKILL` and started again, six
/// times. At the end every stored document has its claim and every claim its document, no
/// number is claimed twice, and every acknowledged insert is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_proxy_rounds_leave_no_half() {
    let run = kill_mid_rounds("proxy", 1, ServerOptions::default(), true).await;
    let db = run.db().await;
    let docs = common::claims_match(
        "proxy crash",
        &db.collection("proxied"),
        &db.collection("proxied.claims.number"),
    )
    .await;
    let mut stored = HashSet::new();
    for d in &docs {
        assert!(
            stored.insert(d.get_i64("number").unwrap()),
            "a number stored twice"
        );
    }
    let acknowledged = run.acknowledged_stored(&stored);
    run.assert_caught_a_round();
    println!(
        "reliability: proxy crash kills={} rounds_in_flight_at_kill={} documents={} acknowledged={acknowledged} claims_whole=yes duplicates=0 ms={}",
        run.kills,
        run.caught,
        docs.len(),
        run.elapsed.as_millis()
    );
}

/// Two processes inserting gapless numbers from 8 tasks each, their groups waiting for each
/// other's transactions on the one counter, are both killed with `SIGKILL` and started again,
/// six times. The numbers stored are exactly 1..=N (a killed round leaves no number behind nor
/// a hole), the counter is N, and every acknowledged insert is stored.
///
/// A round killed in flight holds the counter until the server aborts its transaction, at
/// `transactionLifetimeLimitSeconds` (60 s by default): the next processes' inserts wait for
/// it. The test's server sets it to 2 s, as the gapless guide advises where processes may die.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_gapless_rounds_leave_numbers_dense() {
    let options =
        ServerOptions::default().args(["--setParameter", "transactionLifetimeLimitSeconds=2"]);
    let run = kill_mid_rounds("gapless_stream", 2, options, true).await;
    let db = run.db().await;
    let docs: Vec<Document> = common::all(&db.collection::<Document>("gapless_jobs")).await;
    let mut numbers: Vec<i64> = docs.iter().map(|d| d.get_i64("number").unwrap()).collect();
    numbers.sort_unstable();
    let n = numbers.len() as i64;
    assert_eq!(
        numbers,
        (1..=n).collect::<Vec<_>>(),
        "the stored numbers are 1..=N, once each"
    );
    assert_eq!(common::counter(&db, "gapless_crash").await, Some(n));
    let acknowledged = run.acknowledged_stored(&numbers.iter().copied().collect());
    run.assert_caught_a_round();
    // The processes' rounds met each other on the counter and waited (each wait counted).
    let waited = common::counters(&db)
        .find_one(doc! { "_id": "gapless_crash" })
        .await
        .unwrap()
        .and_then(|c| c.get_i64("waited").ok())
        .unwrap_or(0);
    assert!(waited >= 1, "no round waited for another process's round");
    println!(
        "reliability: gapless crash processes=2 kills={} rounds_in_flight_at_kill={} waits={waited} documents={n} acknowledged={acknowledged} gaps=0 duplicates=0 ms={}",
        run.kills,
        run.caught,
        run.elapsed.as_millis()
    );
}

/// Two processes inserting per-tenant numbers from 8 tasks each over 600 tenants, most inserts
/// their process's first of a tenant (taken in rounds of first values: several tenants'
/// counters in one command, their documents in one `insert_many`), are both killed with
/// `SIGKILL` and started again, six times, so rounds die between their counters and their
/// documents. No tenant has a number stored twice, every tenant's counter is at or past its
/// highest stored number (no number is given again later), and every acknowledged insert is
/// stored. These rounds open no transaction, so no kill is counted as catching one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_first_value_rounds_leave_no_duplicate() {
    let run = kill_mid_rounds("first_values", 2, ServerOptions::default(), false).await;
    let db = run.db().await;
    let docs: Vec<Document> = common::all(&db.collection::<Document>("tenant_jobs")).await;
    let mut stored = HashSet::new();
    let mut highest: BTreeMap<i64, i64> = BTreeMap::new();
    for d in &docs {
        let (tenant, number) = (d.get_i64("tenant").unwrap(), d.get_i64("number").unwrap());
        assert!(
            stored.insert(tenant_job_key(tenant, number)),
            "tenant {tenant}: number {number} stored twice"
        );
        let top = highest.entry(tenant).or_default();
        *top = (*top).max(number);
    }
    let acknowledged = run.acknowledged_stored(&stored);
    // The inserts took their first values in rounds, several counters moved by one `update`.
    let in_rounds = common::counters(&db)
        .count_documents(doc! { "lastRound": { "$exists": true } })
        .await
        .unwrap();
    assert!(
        in_rounds >= 1,
        "no counter was moved by a round of first values"
    );
    let seq = TenantJob::sequence(&db.collection::<TenantJob>("tenant_jobs"));
    for (&tenant, &top) in &highest {
        let scoped = seq.in_scope(mongo_sequence::Scope::new().with("tenant", tenant));
        let counter = scoped.unwrap().current().await.unwrap().unwrap_or(0);
        assert!(
            counter >= top,
            "tenant {tenant}: counter {counter} below stored {top}"
        );
    }
    println!(
        "reliability: first values crash processes=2 kills={} tenants={} counters_moved_in_rounds={in_rounds} documents={} acknowledged={acknowledged} duplicates=0 ms={}",
        run.kills,
        highest.len(),
        docs.len(),
        run.elapsed.as_millis()
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
    let docs: Vec<Document> = common::all(&db.collection::<Document>("receipts")).await;
    let mut stored: Vec<i64> = docs.iter().map(|d| d.get_i64("_id").unwrap()).collect();
    stored.sort_unstable();
    let n = acknowledged.len() as i64;
    assert_eq!(
        stored,
        (1..=n).collect::<Vec<_>>(),
        "the numbers are 1..=N, once each"
    );
    assert_eq!(common::counter(&db, "receipt").await.unwrap_or(0), n);
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
        let stored = db
            .collection::<Document>("stamps")
            .count_documents(doc! {})
            .await
            .unwrap();
        assert_eq!(
            stored,
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
