//! Several operating-system processes on one counter, and processes killed with `SIGKILL` in the
//! middle of a range and started again:
//!
//! - `concurrent.rs`: processes numbering at once, each until it is done;
//! - `kills.rs`: processes killed in the middle of a range or a round, and started again;
//! - `zombie.rs`: a worker paused past the server's transaction lifetime and resumed;
//! - `memory.rs`: a worker's resident memory over a long run in every mode;
//! - `writers.rs`: workers that write through the faults of the combined nemesis, killed and
//!   paused by its schedule;
//! - `worker.rs`: what a worker process does.
//!
//! The workers are this test binary itself, run again with `--ignored --exact
//! reliability_processes::worker::worker` and the environment variables below; they connect to
//! the parent's server through its URI and never start one of their own. Here: those
//! variables, and the parent's side (starting, killing and waiting for workers, reading what
//! they wrote).

mod concurrent;
mod kills;
mod memory;
mod worker;
mod writers;
mod zombie;

pub(crate) use writers::{Writers, Writes};

use crate::checker::{self, Promise, Stored};
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mongodb::bson::doc;
use sequence_testkit::{unique_db_name, ServerOptions, TestServer};

use worker::worker_test_name;

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

/// Kills a worker with `SIGKILL` and asserts that it died of it, not before, with nothing
/// unexpected on its standard error (`stderr`).
fn kill(child: &mut Child, stderr: &Path) {
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the worker died of the SIGKILL, not before it: {status}: {}",
        std::fs::read_to_string(stderr).unwrap_or_default()
    );
    assert_quiet(stderr);
}

/// What a worker's standard error says that it should not: a panic (which also ends it) or
/// an error, one line each. A worker that ran as it should writes nothing there.
fn unexpected(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("panicked") || l.contains("error")
        })
        .collect()
}

/// Asserts that the worker's standard error, in the file `stderr`, holds nothing unexpected.
fn assert_quiet(stderr: &Path) {
    let text = std::fs::read_to_string(stderr).expect("the worker's standard error");
    let found = unexpected(&text);
    assert!(
        found.is_empty(),
        "a worker wrote {found:?} to {}",
        stderr.display()
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
            assert_quiet(stderr);
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

/// The IDs a worker wrote (ignoring a last line cut short by a kill); a worker of these tests
/// writes no failed call.
fn read_ids(path: &Path) -> Vec<i64> {
    let (ids, errors) = read_outcomes(path);
    assert!(
        errors.is_empty(),
        "{}: calls failed: {errors:?}",
        path.display()
    );
    ids
}

/// The IDs and the kinds of the failed calls (`err KIND` lines) a worker wrote, ignoring a last
/// line cut short by a kill.
fn read_outcomes(path: &Path) -> (Vec<i64>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let (mut ids, mut errors) = (Vec::new(), Vec::new());
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        match line.trim_end().strip_prefix("err ") {
            Some(kind) => errors.push(kind.to_owned()),
            None => ids.push(line.trim_end().parse().unwrap()),
        }
    }
    (ids, errors)
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

/// The server's open transactions (`serverStatus`), as `admin` reads them.
async fn open_transactions(admin: &mongodb::Database) -> i64 {
    let status = admin.run_command(doc! { "serverStatus": 1 }).await.unwrap();
    let open = status
        .get_document("transactions")
        .unwrap()
        .get("currentOpen");
    open.and_then(mongodb::bson::Bson::as_i64)
        .or_else(|| open.and_then(mongodb::bson::Bson::as_i32).map(i64::from))
        .unwrap()
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
    let mut open_before = open_transactions(&admin).await;
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
        for (child, out, err) in &mut running {
            kill(child, err);
            outputs.push(out.clone());
        }
        // No worker runs now: the open transactions are the killed workers' rounds.
        let open = open_transactions(&admin).await;
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

    /// Judges the IDs every worker acknowledged against `stored` with the checker (no number
    /// stored twice, every acknowledged one stored, `promise`), and asserts there were some;
    /// returns how many were acknowledged.
    fn judge(&self, label: &str, stored: &Stored, promise: Promise) -> usize {
        let acknowledged: Vec<i64> = self.outputs.iter().flat_map(|p| read_ids(p)).collect();
        assert!(
            !acknowledged.is_empty(),
            "{label}: no insert was acknowledged"
        );
        checker::judge(&acknowledged, stored, promise).assert_clean(label);
        acknowledged.len()
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

/// A worker's standard error is read line by line: a panic or an error is unexpected, a
/// warning of the driver is not.
#[test]
fn a_workers_panic_or_error_is_unexpected() {
    let stderr = "thread 'tokio-runtime-worker' panicked at tests/it/x.rs:1:1:\n\
                  worker: insert 3-4: Error: the server answered 91\n\
                  WARN the pool was cleared\n";
    assert_eq!(unexpected(stderr).len(), 2);
    assert!(unexpected("").is_empty());
}
