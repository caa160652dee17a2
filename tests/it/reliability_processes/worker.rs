//! The worker side: what a worker process started by [`spawn_worker`](super::spawn_worker)
//! does in each mode, and the models it inserts.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::models::{self, Receipt};
use mongo_sequence::{Sequence, SequenceOptions, SequentialId};
use serde::{Deserialize, Serialize};

use super::{
    WORKER, WORKER_BATCH, WORKER_CLOCK, WORKER_CLOCK_STEP, WORKER_DB, WORKER_LABEL, WORKER_OUT,
    WORKER_PER_TASK, WORKER_TASKS, WORKER_URI,
};

/// Longest a worker runs, whatever it is told.
const WORKER_TIME_LIMIT: Duration = Duration::from_secs(180);

/// Longest a worker of the combined nemesis runs: its longest run (`SOAK`) and a margin.
const NEMESIS_TIME_LIMIT: Duration = Duration::from_secs(660);

/// Longest one insert of a worker may take, whatever the fault.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// The documents the crash test inserts. The ID is not `_id` and has no unique index, so an ID
/// issued twice would be stored twice instead of being refused.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "crash", batch = 50)]
pub(super) struct Job {
    #[seq(id)]
    pub(super) number: i64,
    pub(super) worker: String,
}

pub(super) const CRASH_BATCH: i64 = 50;

/// The documents of the gapless crash test, numbered in a field without a unique index (a
/// number given twice would be stored twice), committed in rounds.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "gapless_crash", gapless)]
pub(super) struct GaplessJob {
    #[seq(id)]
    pub(super) number: i64,
    pub(super) worker: String,
}

/// The documents of the proxy crash test: their uniqueness is held by claims in a proxy
/// collection (`proxied.claims.number`), written with each document in one transaction, a
/// round of several documents at a time when inserts wait together.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "proxied", batch = 25, unique = "proxy")]
pub(super) struct ProxiedJob {
    #[seq(id)]
    pub(super) number: i64,
    pub(super) worker: String,
}

/// The documents of the crash test of first values: numbered per tenant in a field without a
/// unique index (a number given twice to a tenant would be stored twice). Each new process
/// meets every tenant for the first time, so most of its inserts take their tenant's first
/// value in a round of first values.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "tenant_crash", scope = "tenant", batch = 10)]
pub(super) struct TenantJob {
    #[seq(id)]
    number: i64,
    tenant: i64,
    worker: String,
}

/// The tenants of the crash test of first values.
const CRASH_TENANTS: u64 = 600;

/// The acknowledged line of a tenant's job: its tenant and number in one integer.
pub(super) fn tenant_job_key(tenant: i64, number: i64) -> i64 {
    tenant * 1_000_000 + number
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

pub(super) fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("worker: {name} is not set"))
}

pub(super) fn env_num(name: &str) -> u64 {
    env(name)
        .parse()
        .unwrap_or_else(|e| panic!("worker: {name}: {e}"))
}

/// The name the test harness knows [`worker`] by: its path in the test binary, without the
/// binary's name (`reliability_processes::worker::worker`).
pub(super) fn worker_test_name() -> String {
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_binary, module)| module);
    format!("{module}::worker")
}

/// The worker side: does nothing unless started by [`spawn_worker`](super::spawn_worker).
#[test]
#[ignore = "a worker process started by the other tests of `reliability_processes`"]
fn worker() {
    let Ok(mode) = std::env::var(WORKER) else {
        return;
    };
    // A panic anywhere, in a spawned task too, ends the process (its message on standard
    // error, where the parent reads it): no task's failure hides behind the others.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::exit(101);
    }));
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
            "insert" | "insert_through_faults" => {
                let make = |worker: String| Job { number: 0, worker };
                let faults = mode.ends_with("_through_faults");
                insert_worker(db.collection("jobs"), make, |job| job.number, faults).await
            }
            "proxy" | "proxy_through_faults" => {
                let make = |worker: String| ProxiedJob { number: 0, worker };
                let faults = mode.ends_with("_through_faults");
                insert_worker(db.collection("proxied"), make, |job| job.number, faults).await
            }
            "gapless_stream" => {
                let make = |worker: String| GaplessJob { number: 0, worker };
                insert_worker(db.collection("gapless_jobs"), make, |job| job.number, false).await
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
                insert_worker(db.collection("tenant_jobs"), make, ack, false).await
            }
            "gapless" => gapless_worker(db).await,
            "skew" => skew_worker(db).await,
            "memory" => super::memory::memory_worker(db).await,
            other => panic!("worker: unknown mode {other}"),
        }
        // The client's pools and monitors end before the runtime does: a connection request
        // still in flight at the runtime's shutdown makes the driver panic, which ends a
        // worker with a failure here.
        client.shutdown().immediate(true).await;
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
///
/// `through_faults` (the modes `*_through_faults`, which the combined nemesis runs): a call
/// may fail, with a typed error of the server or the driver within 30 s, and its line is then
/// `err KIND` (see [`kind`](crate::reliability_support::kind)), followed by a pause of 100 ms;
/// the time limit is the nemesis's longest run. Otherwise every call must succeed.
async fn insert_worker<M>(
    coll: mongodb::Collection<M>,
    make: fn(String) -> M,
    ack: fn(&M) -> i64,
    through_faults: bool,
) where
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
    let limit = if through_faults {
        NEMESIS_TIME_LIMIT
    } else {
        WORKER_TIME_LIMIT
    };
    let started = Instant::now();
    let tasks: Vec<_> = (0..env_num(WORKER_TASKS))
        .map(|_| {
            let (coll, out, stop, label) = (coll.clone(), out.clone(), stop.clone(), label.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) && started.elapsed() < limit {
                    let mut doc = make(label.clone());
                    let call = tokio::time::timeout(CALL_LIMIT, doc.insert_with_id(&coll));
                    let line = match call.await.expect("a call returns within 30 s") {
                        Ok(_) => format!("{}\n", ack(&doc)),
                        Err(e @ mongo_sequence::Error::Mongo(_)) if through_faults => {
                            format!("err {}\n", crate::reliability_support::kind(&e))
                        }
                        Err(e) => panic!("worker: insert: {e:?}"),
                    };
                    out.lock().unwrap().write_all(line.as_bytes()).unwrap();
                    if line.starts_with("err") {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    if let Err(e) = M::sequence(&coll).release().await {
        assert!(through_faults, "worker: release: {e:?}");
    }
}
