//! Writer processes for the combined nemesis (`reliability_nemesis.rs`): workers that insert
//! from two tasks each until told to stop, through the faults of the schedule, each call's
//! outcome appended to a file at once (its ID, or `err KIND`). The schedule kills them
//! (`SIGKILL`, and a new process takes the writer's place) and pauses them (`SIGSTOP`, then
//! `SIGCONT`); at the end their calls are judged by the checker like the test process's own.

use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::checker::{self, Promise, Stored};
use crate::common;

use super::{
    kill, read_outcomes, spawn_worker, wait_ok, Scratch, WORKER_DB, WORKER_LABEL, WORKER_OUT,
    WORKER_TASKS, WORKER_URI,
};

/// What a writer inserts: the worker's mode, and where its documents go.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Writes {
    /// `Job`s (batch 50) into `jobs`, numbered in `number` without a unique index.
    Batch,
    /// `ProxiedJob`s (batch 25) into `proxied`, their numbers claimed in
    /// `proxied.claims.number`.
    Proxy,
}

impl Writes {
    fn mode(self) -> &'static str {
        match self {
            Writes::Batch => "insert_through_faults",
            Writes::Proxy => "proxy_through_faults",
        }
    }

    /// The short name of summaries and schedules.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Writes::Batch => "batch=50",
            Writes::Proxy => "proxy",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Writes::Batch => "jobs",
            Writes::Proxy => "proxied",
        }
    }
}

/// One writer: the process running now, and the output files of every process that ran in
/// its place.
struct Writer {
    writes: Writes,
    child: Child,
    err: PathBuf,
    outputs: Vec<PathBuf>,
}

/// The writer processes of a run, one per [`Writes`] given to [`Writers::start`].
pub(crate) struct Writers {
    scratch: Scratch,
    uri: String,
    db: String,
    lives: usize,
    writers: Vec<Writer>,
}

/// What the checker found for one writer.
pub(crate) struct Judged {
    /// Acknowledged inserts, over every process of the writer.
    pub(crate) ok: usize,
    /// Failed calls.
    pub(crate) errors: usize,
    /// Its summary: counts and the kinds of the errors.
    pub(crate) line: String,
}

impl Writers {
    /// Starts one writer process per entry of `writes`, connected to `uri` (the nemesis's
    /// client options are added to it) and writing into the database `db`.
    pub(crate) fn start(uri: &str, db: &str, writes: &[Writes]) -> Writers {
        let scratch = Scratch::new(&format!("{db}-writers-{}", std::process::id()));
        // Short timeouts and polled checks, as the test process's own writers: a cut-off call
        // fails in seconds.
        let options = "serverSelectionTimeoutMS=4000&connectTimeoutMS=2000\
                       &heartbeatFrequencyMS=500&serverMonitoringMode=poll&w=majority";
        let uri = match uri.split_once('?') {
            Some(_) => format!("{uri}&{options}"),
            None => format!("{}/?{options}", uri.trim_end_matches('/')),
        };
        let mut run = Writers {
            scratch,
            uri,
            db: db.to_owned(),
            lives: 0,
            writers: Vec::new(),
        };
        for &w in writes {
            let (child, out, err) = run.spawn(w);
            run.writers.push(Writer {
                writes: w,
                child,
                err,
                outputs: vec![out],
            });
        }
        run
    }

    fn spawn(&mut self, writes: Writes) -> (Child, PathBuf, PathBuf) {
        self.lives += 1;
        let label = format!("{}-life{}", writes.collection(), self.lives);
        let out = self.scratch.0.join(format!("{label}.ids"));
        let err = self.scratch.0.join(format!("{label}.err"));
        let vars = [
            (WORKER_URI, self.uri.clone()),
            (WORKER_DB, self.db.clone()),
            (WORKER_TASKS, "2".to_owned()),
            (WORKER_OUT, out.display().to_string()),
            (WORKER_LABEL, label),
        ];
        (spawn_worker(writes.mode(), &vars, &err), out, err)
    }

    /// How many writers there are.
    pub(crate) fn len(&self) -> usize {
        self.writers.len()
    }

    /// What writer `i` writes.
    pub(crate) fn writes(&self, i: usize) -> Writes {
        self.writers[i].writes
    }

    /// Kills writer `i`'s process with `SIGKILL`, asserting (by `waitpid`) that it was running
    /// and died of it with nothing unexpected on its standard error, and starts a new one in its
    /// place. Returns the IDs the killed process had acknowledged.
    pub(crate) fn kill_and_replace(&mut self, i: usize) -> usize {
        let writes = self.writers[i].writes;
        let (child, out, err) = self.spawn(writes);
        let writer = &mut self.writers[i];
        kill(&mut writer.child, &writer.err);
        let acknowledged = read_outcomes(writer.outputs.last().unwrap()).0.len();
        writer.child = child;
        writer.err = err;
        writer.outputs.push(out);
        acknowledged
    }

    /// Pauses writer `i`'s process with `SIGSTOP` and waits until the kernel says it is stopped
    /// (`/proc/PID/stat`).
    pub(crate) fn pause(&self, i: usize) {
        self.signal(i, libc::SIGSTOP, 'T');
    }

    /// Resumes writer `i`'s process with `SIGCONT` and waits until the kernel says it runs.
    pub(crate) fn resume(&self, i: usize) {
        self.signal(i, libc::SIGCONT, 'S');
    }

    fn signal(&self, i: usize, signal: i32, state: char) {
        let pid = self.writers[i].child.id() as i32;
        // SAFETY: `kill` only sends a signal, to a process this test started and has not
        // waited for.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal {signal}");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let now = process_state(pid);
            // A running process may be in `R` or `S` (or `D`): anything but stopped.
            if (state == 'T') == (now == Some('T')) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "writer {pid} is in state {now:?} after signal {signal}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops every writer (closing its standard input), waits until each exits successfully
    /// with nothing unexpected on its standard error, and judges each writer's calls over all
    /// its processes with the checker against what `db` stores (majority read): no number
    /// stored twice, none acknowledged twice, every acknowledged one stored, and for the proxy
    /// a claim for every document and a document for every claim.
    pub(crate) async fn finish(mut self, db: &mongodb::Database) -> Vec<Judged> {
        let writers = std::mem::take(&mut self.writers);
        let mut judged = Vec::new();
        for writer in writers {
            let Writer {
                writes,
                mut child,
                err,
                outputs,
            } = writer;
            drop(child.stdin.take());
            tokio::task::spawn_blocking(move || {
                wait_ok(&mut child, Duration::from_secs(120), &err)
            })
            .await
            .unwrap();
            judged.push(judge(writes, &outputs, db).await);
        }
        judged
    }
}

async fn judge(writes: Writes, outputs: &[PathBuf], db: &mongodb::Database) -> Judged {
    let label = writes.name();
    let (mut ok, mut errors) = (Vec::new(), Vec::new());
    for out in outputs {
        let (ids, kinds) = read_outcomes(out);
        ok.extend(ids);
        errors.extend(kinds);
    }
    assert!(!ok.is_empty(), "writer {label}: no insert was acknowledged");
    let unique: std::collections::HashSet<i64> = ok.iter().copied().collect();
    assert_eq!(
        unique.len(),
        ok.len(),
        "writer {label}: an ID was acknowledged twice"
    );
    let coll = writes.collection();
    if let Writes::Proxy = writes {
        common::claims_match(
            label,
            &db.collection(coll),
            &db.collection(&format!("{coll}.claims.number")),
        )
        .await;
    }
    let stored = Stored::read(db, coll, "number").await;
    checker::judge(&ok, &stored, Promise::default()).assert_clean(label);
    let line = format!(
        "writer {label}: processes={} ok={} errors={} stored={} kinds={}",
        outputs.len(),
        ok.len(),
        errors.len(),
        stored.documents(),
        crate::reliability_support::tally(&errors)
    );
    Judged {
        ok: ok.len(),
        errors: errors.len(),
        line,
    }
}

/// The state letter of process `pid` (`R`, `S`, `T`, …), from `/proc/PID/stat`.
fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name between parentheses may hold spaces: the state follows the last `)`.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

impl Drop for Writers {
    /// A writer left behind (the test failed before `finish`) is killed, stopped or not.
    fn drop(&mut self) {
        for writer in &mut self.writers {
            let _ = writer.child.kill();
            let _ = writer.child.wait();
        }
    }
}
