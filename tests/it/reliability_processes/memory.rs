//! The memory of a long run: one worker process numbers in every mode at once (batch 25,
//! gapless, proxy, a new tenant for each insert of a scoped model, a new day every 50 inserts
//! of a daily model on its own clock) and samples its resident memory; past the warm-up the
//! samples stay within a bound. 8 s by default, 10 minutes with `SOAK=1`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mongo_sequence::clock::{Clock, ManualClock};
use mongo_sequence::SequentialId;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

use super::{spawn_worker, wait_ok, Scratch, WORKER_DB, WORKER_OUT, WORKER_PER_TASK, WORKER_URI};
use crate::common;

/// Batched numbers.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "memory_batched", batch = 25)]
struct Batched {
    #[seq(id)]
    number: i64,
}

/// Gapless numbers.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "memory_gapless", gapless)]
struct Dense {
    #[seq(id)]
    number: i64,
}

/// Batched numbers claimed in a proxy collection.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "memory_proxy", batch = 25, unique = "proxy")]
struct Claimed {
    #[seq(id)]
    number: i64,
}

/// Numbers per tenant: every insert a tenant never seen before.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "memory_tenant", scope = "tenant", batch = 10)]
struct PerTenant {
    #[seq(id)]
    number: i64,
    tenant: i64,
}

/// Numbers per day, on the worker's clock.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "memory_daily", prefix = "YYMMDD-", batch = 25)]
struct Daily {
    #[seq(id)]
    id: String,
}

/// The modes the worker numbers in, in the order of its report.
const MODES: [&str; 5] = ["batched", "gapless", "proxy", "tenant", "daily"];

/// The process's resident memory, in KiB (`/proc/self/statm`).
fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("resident pages");
    pages * 4
}

/// The worker side: two tasks per mode insert for `WORKER_PER_TASK` seconds while a thread
/// samples the resident memory every 100 ms; the output file gets `sample MS KIB` lines and
/// one `ops MODE N` line per mode.
pub(super) async fn memory_worker(db: mongodb::Database) {
    let seconds = super::worker::env_num(WORKER_PER_TASK);
    let until = Instant::now() + Duration::from_secs(seconds);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut samples = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                samples.push((started.elapsed().as_millis() as u64, resident_kib()));
                std::thread::sleep(Duration::from_millis(100));
            }
            samples
        })
    };
    let ops: Arc<[AtomicU64; 5]> = Arc::new(Default::default());
    let clock = Arc::new(ManualClock::new("2026-01-01T12:00:00Z".parse().unwrap()));
    let daily = db.collection::<Daily>("daily");
    Daily::sequence(&daily).set_clock(clock.clone());
    let next_tenant = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for mode in 0..MODES.len() {
        for _ in 0..2 {
            let (db, ops, clock, daily) = (db.clone(), ops.clone(), clock.clone(), daily.clone());
            let next_tenant = next_tenant.clone();
            tasks.push(tokio::spawn(async move {
                while Instant::now() < until {
                    let done = ops[mode].fetch_add(1, Ordering::SeqCst);
                    match mode {
                        0 => drop(
                            Batched { number: 0 }
                                .insert_with_id(&db.collection("batched"))
                                .await
                                .unwrap(),
                        ),
                        1 => drop(
                            Dense { number: 0 }
                                .insert_with_id(&db.collection("dense"))
                                .await
                                .unwrap(),
                        ),
                        2 => drop(
                            Claimed { number: 0 }
                                .insert_with_id(&db.collection("claimed"))
                                .await
                                .unwrap(),
                        ),
                        3 => {
                            let tenant = next_tenant.fetch_add(1, Ordering::SeqCst) as i64;
                            let mut doc = PerTenant { number: 0, tenant };
                            doc.insert_with_id(&db.collection("tenants")).await.unwrap();
                        }
                        _ => {
                            if done % 50 == 49 {
                                let day = mongo_sequence::jiff::SignedDuration::from_hours(24);
                                clock.set(clock.now().checked_add(day).unwrap());
                            }
                            let mut doc = Daily { id: String::new() };
                            doc.insert_with_id(&daily).await.unwrap();
                        }
                    }
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let mut out = String::new();
    for (ms, kib) in sampler.join().unwrap() {
        out.push_str(&format!("sample {ms} {kib}\n"));
    }
    for (mode, n) in MODES.iter().zip(ops.iter()) {
        out.push_str(&format!("ops {mode} {}\n", n.load(Ordering::SeqCst)));
    }
    std::fs::write(super::worker::env(WORKER_OUT), out).unwrap();
}

/// A worker numbers in every mode for 8 s (10 minutes with `SOAK=1`); its resident memory in
/// the last quarter of the run stays within the bound above its peak in the second quarter
/// (once the caches, pools and the runtime are warm): more than that grows with the work, a
/// leak.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_bounded_over_a_long_run() {
    let seconds = common::pick(8, 600);
    let server = TestServer::shared_or_panic();
    let name = unique_db_name("memory");
    let scratch = Scratch::new(&name);
    let (out, err) = (scratch.0.join("memory-out"), scratch.0.join("memory-err"));
    let vars = [
        (WORKER_URI, server.uri().to_owned()),
        (WORKER_DB, name.clone()),
        (WORKER_PER_TASK, seconds.to_string()),
        (WORKER_OUT, out.display().to_string()),
    ];
    let mut child = spawn_worker("memory", &vars, &err);
    let limit = Duration::from_secs(seconds + 120);
    tokio::task::spawn_blocking(move || wait_ok(&mut child, limit, &err))
        .await
        .unwrap();

    let text = std::fs::read_to_string(&out).expect("the worker's report");
    let mut samples = Vec::new();
    let mut ops = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts[..] {
            ["sample", ms, kib] => {
                samples.push((ms.parse::<u64>().unwrap(), kib.parse::<u64>().unwrap()))
            }
            ["ops", mode, n] => ops.push((mode.to_owned(), n.parse::<u64>().unwrap())),
            _ => panic!("an unknown line in the worker's report: {line}"),
        }
    }
    for (mode, n) in &ops {
        assert!(*n > 10, "the worker numbered in mode {mode}: {n} inserts");
    }
    let total = seconds * 1000;
    let peak_in = |from: u64, to: u64| {
        (samples.iter())
            .filter(|(ms, _)| (from..to).contains(ms))
            .map(|(_, kib)| *kib)
            .max()
            .expect("samples in each quarter")
    };
    let warm = peak_in(total / 4, total / 2);
    let late = peak_in(total * 3 / 4, total);
    // 16 MiB or a quarter of the warm peak, whichever is larger: the allocator's arenas and
    // the driver's buffers vary that much between two moments of the same work.
    let bound = (16 * 1024).max(warm / 4);
    assert!(
        late <= warm + bound,
        "resident memory grew from {warm} KiB to {late} KiB (bound {bound} KiB) over {seconds} s"
    );
    let ops_line: Vec<String> = ops.iter().map(|(m, n)| format!("{m}={n}")).collect();
    println!(
        "reliability: memory seconds={seconds} warm_kib={warm} late_kib={late} bound_kib={bound} {}",
        ops_line.join(" ")
    );
}
