//! Inserts from several processes at once: this one and the bench started again as workers,
//! the tasks split evenly between them, all on one counter. Which model they insert is named on
//! the workers' command line (see [`Model`]).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use mongo_sequence::SequentialId;
use mongodb::bson::doc;

use super::inserts::{insert_one_each, plain_one_each};
use super::models::{BProxy, Gapless, Sample, B1, B25};
use super::COLL;
use crate::measure::{connect, BoxFuture, Measured, Result, Run, ServerTotals};

/// The first argument that makes the bench a worker of a scenario of several processes.
pub const WORKER: &str = "--insert-worker";

/// The models the workers (and the rate curves of `--scale`) insert, by the name their command
/// line gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// `Plain`: the driver's `insert_one`, no sequence.
    Plain,
    /// `B1`: `insert_with_id` at batch 1, a counter round trip per document.
    B1,
    /// `B25`: `insert_with_id` at batch 25.
    B25,
    /// `Gapless`: gapless inserts.
    Gapless,
    /// `BProxy`: batch 25 with a proxy collection.
    Proxy,
}

impl Model {
    /// Every model, plain inserts first: the modes of the rate curves of `--scale`.
    pub const ALL: [Model; 5] = [
        Model::Plain,
        Model::B1,
        Model::B25,
        Model::Gapless,
        Model::Proxy,
    ];

    /// The name of the model on a worker's command line, and in the rows of `--scale`.
    pub fn name(self) -> &'static str {
        match self {
            Model::Plain => "plain",
            Model::B1 => "batch1",
            Model::B25 => "batch25",
            Model::Gapless => "gapless",
            Model::Proxy => "proxy",
        }
    }

    /// The model a worker's command line (or `--mode`) names `name`.
    pub fn named(name: &str) -> Result<Model> {
        Model::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| format!("{WORKER}: unknown model {name}").into())
    }

    /// `calls` inserts in each of `tasks` tasks into the collection `coll` of `db`, the
    /// documents numbered from `first`.
    pub async fn insert(
        self,
        db: &mongodb::Database,
        coll: &str,
        tasks: usize,
        calls: u64,
        first: u64,
    ) -> Result<Measured> {
        match self {
            Model::Plain => plain_one_each(db.collection(coll), tasks, calls, first).await,
            Model::B1 => each::<B1>(db, coll, tasks, calls, first).await,
            Model::B25 => each::<B25>(db, coll, tasks, calls, first).await,
            Model::Gapless => each::<Gapless>(db, coll, tasks, calls, first).await,
            Model::Proxy => each::<BProxy>(db, coll, tasks, calls, first).await,
        }
    }
}

async fn each<M: SequentialId + Sample>(
    db: &mongodb::Database,
    coll: &str,
    tasks: usize,
    calls: u64,
    first: u64,
) -> Result<Measured> {
    insert_one_each(db.collection::<M>(coll), tasks, calls, first).await
}

/// Plain inserts from four processes, a quarter of the tasks each: what four processes of
/// this machine reach without a sequence.
pub fn plain_4p(run: Run) -> BoxFuture<Result<Measured>> {
    processes(run, Model::Plain, 4)
}

/// Gapless inserts from two processes, half the tasks each.
pub fn gapless_2p(run: Run) -> BoxFuture<Result<Measured>> {
    processes(run, Model::Gapless, 2)
}

/// Gapless inserts from four processes, a quarter of the tasks each.
pub fn gapless_4p(run: Run) -> BoxFuture<Result<Measured>> {
    processes(run, Model::Gapless, 4)
}

/// Proxy inserts (batch 25) from two processes, half the tasks each.
pub fn proxy_2p(run: Run) -> BoxFuture<Result<Measured>> {
    processes(run, Model::Proxy, 2)
}

/// A worker started, connected and waiting for the signal to start.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

/// Where the documents of a process's warm-up are numbered from, after its own `first`: apart
/// from every run's.
const WARM_UP_FROM: u64 = 1 << 39;

/// The warm-up of a process before a run of `model` in `tasks` tasks: one insert per task, not
/// measured, so that the run starts with the process's connections open and the model's first
/// use made (a sequence's first reservation, its record), as in a process that has been
/// running; the main bench warms its own pool the same way before its first run.
pub async fn warm_up(model: Model, db: &mongodb::Database, tasks: usize, first: u64) -> Result<()> {
    model
        .insert(db, COLL, tasks, 1, first + WARM_UP_FROM)
        .await
        .map(drop)
}

/// Inserts of `model` from `count` processes at once, `run.tasks / count` tasks each: this one
/// and `count - 1` workers. All connect and [warm up](warm_up) first, then start together; the
/// run lasts until the last one is done.
pub fn processes(run: Run, model: Model, count: usize) -> BoxFuture<Result<Measured>> {
    Box::pin(async move {
        let share = (run.tasks / count).max(1);
        let mut workers = Vec::new();
        for w in 1..count {
            let mut child = Command::new(std::env::current_exe()?)
                .args([
                    WORKER,
                    &run.uri,
                    run.db.name(),
                    model.name(),
                    &share.to_string(),
                    &run.calls_per_task.to_string(),
                    &(w as u64 * (1 << 40)).to_string(),
                ])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()?;
            let stdin = child.stdin.take().ok_or("no stdin")?;
            let lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
            workers.push(Worker {
                child,
                stdin,
                lines,
            });
        }
        let mut running = Vec::new();
        for mut worker in workers {
            let (ready, lines) =
                tokio::task::spawn_blocking(move || (worker.lines.next(), worker.lines)).await?;
            if !matches!(ready, Some(Ok(ref l)) if l == "ready") {
                return Err(format!("a worker did not start: {ready:?}").into());
            }
            worker.lines = lines;
            running.push(worker);
        }
        warm_up(model, &run.db, share, 0).await?;
        let client = run.db.client();
        let before = ServerTotals::read(client).await?;
        let mut results = Vec::new();
        for mut worker in running {
            writeln!(worker.stdin, "go")?;
            results.push(tokio::task::spawn_blocking(move || report(worker)));
        }
        let ours = model
            .insert(&run.db, COLL, share, run.calls_per_task, 0)
            .await?;
        let (mut ids, mut elapsed, mut latency) = (ours.ids, ours.elapsed, ours.latency);
        for result in results {
            let (theirs, took, latencies) = result.await??;
            ids += theirs;
            elapsed = elapsed.max(took);
            for l in latencies {
                latency.saturating_record(l);
            }
        }
        let server = Some(ServerTotals::read(client).await?.since(before));
        Ok(Measured {
            ids,
            elapsed,
            latency,
            waits: None,
            rss_bytes: None,
            allocations: 0,
            server,
        })
    })
}

/// What a worker reported when it was done: its IDs, how long it ran and every call's latency.
fn report(mut worker: Worker) -> Result<(u64, Duration, Vec<u64>)> {
    let done = worker.lines.next().ok_or("a worker stopped")??;
    let mut parts = done.split_whitespace().skip(1);
    let mut next = || -> Result<u64> { Ok(parts.next().ok_or("short line")?.parse()?) };
    let (ids, nanos) = (next()?, next()?);
    let latencies = worker
        .lines
        .by_ref()
        .map(|l| Ok(l?.parse()?))
        .collect::<Result<Vec<u64>>>()?;
    if !worker.child.wait()?.success() {
        return Err("a worker failed".into());
    }
    Ok((ids, Duration::from_nanos(nanos), latencies))
}

/// A worker: `URI DB MODEL TASKS CALLS FIRST`. Says `ready` once connected and
/// [warmed up](warm_up), waits for a line, runs its tasks (its documents numbered from
/// `FIRST`, apart from the other processes'), then writes `done IDS NANOS` and the latency of
/// every call in nanoseconds, one per line.
pub async fn worker(args: &[String]) -> Result<()> {
    let [uri, db, model, tasks, calls, first] = args else {
        return Err(format!("{WORKER} takes URI DB MODEL TASKS CALLS FIRST").into());
    };
    let model = Model::named(model)?;
    let (tasks, first) = (tasks.parse()?, first.parse()?);
    let (client, _) = connect(uri).await?;
    client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await?;
    let db = client.database(db);
    warm_up(model, &db, tasks, first).await?;
    println!("ready");
    std::io::stdout().flush()?;
    std::io::stdin().lock().read_line(&mut String::new())?;
    let measured = model
        .insert(&db, COLL, tasks, calls.parse()?, first)
        .await?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "done {} {}", measured.ids, measured.elapsed.as_nanos())?;
    for v in measured.latency.iter_recorded() {
        for _ in 0..v.count_at_value() {
            writeln!(out, "{}", v.value_iterated_to())?;
        }
    }
    out.flush()?;
    Ok(())
}
