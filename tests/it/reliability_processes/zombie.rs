//! Zombie writers: a worker paused (`SIGSTOP`) past the server's transaction lifetime (2 s on
//! a server of the test's own) while it numbers, and resumed (`SIGCONT`). Meanwhile this
//! process numbers on the same counter. The server aborts the paused worker's transaction, so
//! the counter it held goes to the writer here, and the worker, resumed, takes its numbers
//! again; a worker with a batch resumes with the range it held. The checker then reads the
//! collection: no number twice, every acknowledged document stored, gapless numbers exactly
//! `1..=N`, the proxy's claims whole.

use std::process::Child;
use std::time::{Duration, Instant};

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Document};
use sequence_testkit::{unique_db_name, ServerOptions, TestServer};

use super::worker::{GaplessJob, Job, ProxiedJob};
use super::{
    open_transactions, read_ids, spawn_worker, wait_ok, Scratch, WORKER_DB, WORKER_LABEL,
    WORKER_OUT,
};
use super::{WORKER_TASKS, WORKER_URI};
use crate::checker::{self, Promise, Stored};
use crate::common;

/// The server's transaction lifetime here.
const LIFETIME: Duration = Duration::from_secs(2);

/// A worker, killed with `SIGKILL` if the test ends before it does (a stopped process would
/// outlive it otherwise).
struct Worker(Child);

impl Worker {
    fn signal(&self, signal: i32) {
        // SAFETY: `kill` takes a pid and a signal number; the child is ours and not reaped.
        let sent = unsafe { libc::kill(self.0.id() as i32, signal) };
        assert_eq!(sent, 0, "signal {signal} sent to the worker");
    }

    /// Stops the worker with `SIGSTOP` and returns once `waitpid` reports it stopped: what it
    /// wrote until then is all it writes until it is resumed.
    fn stop(&self) {
        self.signal(libc::SIGSTOP);
        let pid = self.0.id() as i32;
        let mut status = 0;
        // SAFETY: `waitpid` on our own child, not reaped; `WUNTRACED` reports a stop without
        // reaping anything.
        let waited = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
        assert_eq!(waited, pid, "waitpid of the worker");
        assert!(
            libc::WIFSTOPPED(status),
            "the worker stopped, not ended: status {status}"
        );
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One mode: the worker numbers, is paused (with a transaction open, for the modes that have
/// one: paused again until it is), this process numbers for the lifetime and more, the worker
/// is resumed, both number a while more, then stop. Returns the summary, and whether the pause
/// caught a transaction open.
async fn zombie<T, F>(server: &TestServer, mode: &'static str, coll: &str, make: F) -> String
where
    T: SequentialId<Id = i64> + Send + Sync + 'static,
    F: Fn(String) -> T + Send + Sync + 'static,
{
    let name = unique_db_name(&format!("zombie_{mode}"));
    let scratch = Scratch::new(&name);
    let (out, err) = (scratch.0.join("worker.ids"), scratch.0.join("worker.err"));
    let vars = [
        (WORKER_URI, server.uri().to_owned()),
        (WORKER_DB, name.clone()),
        (WORKER_TASKS, "4".to_owned()),
        (WORKER_OUT, out.display().to_string()),
        (WORKER_LABEL, "zombie".to_owned()),
    ];
    let mut worker = Worker(spawn_worker(mode, &vars, &err));
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let admin = client.database("admin");
    let docs = client.database(&name).collection::<T>(coll);
    let in_transactions = mode != "insert";

    // Pause it once it numbers, and (with transactions) while one is open: no other writer
    // runs yet, so an open transaction is the worker's.
    let deadline = Instant::now() + Duration::from_secs(60);
    let caught = loop {
        assert!(
            Instant::now() < deadline,
            "{mode}: the worker makes no progress"
        );
        if read_ids(&out).len() >= 20 {
            worker.stop();
            if !in_transactions || open_transactions(&admin).await > 0 {
                break in_transactions;
            }
            worker.signal(libc::SIGCONT);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let paused_at = read_ids(&out).len();

    // This process numbers while the worker is stopped, past the lifetime.
    let mut here = Vec::new();
    let started = Instant::now();
    let mut i = 0;
    while started.elapsed() < LIFETIME + Duration::from_secs(1) || here.len() < 20 {
        i += 1;
        let mut doc = make(format!("here-{i}"));
        here.push(doc.insert_with_id(&docs).await.expect("an insert here"));
    }
    assert_eq!(
        read_ids(&out).len(),
        paused_at,
        "{mode}: the worker numbered while stopped"
    );
    worker.signal(libc::SIGCONT);
    // Both number a while more.
    let resumed = Instant::now();
    while read_ids(&out).len() < paused_at + 20 {
        assert!(
            resumed.elapsed() < Duration::from_secs(60),
            "{mode}: the resumed worker makes no progress"
        );
        i += 1;
        let mut doc = make(format!("here-{i}"));
        here.push(doc.insert_with_id(&docs).await.expect("an insert here"));
    }
    drop(worker.0.stdin.take()); // closing standard input stops the worker
    let limit = Duration::from_secs(60);
    tokio::task::spawn_blocking(move || {
        wait_ok(&mut worker.0, limit, &err);
        worker
    })
    .await
    .unwrap();

    let mut acknowledged = read_ids(&out);
    let from_worker = acknowledged.len();
    acknowledged.extend(&here);
    let db = client.database(&name);
    let stored = Stored::read(&db, coll, "number").await;
    let promise = Promise {
        dense: mode == "gapless_stream",
        ..Promise::default()
    };
    checker::judge(&acknowledged, &stored, promise).assert_clean(mode);
    if mode == "proxy" {
        common::claims_match(
            mode,
            &db.collection::<Document>(coll),
            &db.collection::<Document>(&format!("{coll}.claims.number")),
        )
        .await;
    }
    format!(
        "{mode}: worker={from_worker} here={} stored={} caught_open={caught}",
        here.len(),
        stored.documents()
    )
}

/// A zombie writer in gapless, proxy and batch modes, one after the other on one server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zombie_writers_repeat_and_lose_nothing() {
    let lifetime = format!("transactionLifetimeLimitSeconds={}", LIFETIME.as_secs());
    let options = ServerOptions::default().args(["--setParameter", lifetime.as_str()]);
    let server = tokio::task::spawn_blocking(move || TestServer::start(options))
        .await
        .unwrap()
        .expect("a server with a short transaction lifetime starts");
    let gapless = zombie(&server, "gapless_stream", "gapless_jobs", |worker| {
        GaplessJob { number: 0, worker }
    })
    .await;
    let proxy = zombie(&server, "proxy", "proxied", |worker| ProxiedJob {
        number: 0,
        worker,
    })
    .await;
    let batch = zombie(&server, "insert", "jobs", |worker| Job {
        number: 0,
        worker,
    })
    .await;
    for line in [&gapless, &proxy, &batch] {
        println!("zombie: {line}");
    }
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
    println!(
        "reliability: zombie modes=gapless,proxy,batch paused_past_lifetime=true duplicates=0 lost=0 gapless_dense=true"
    );
}
