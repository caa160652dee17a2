//! Inserts from several processes at once: this one and the bench started again as workers,
//! the tasks split evenly between them, all on one counter. Which model they insert is named on
//! the workers' command line (see [`Model`]).

use std::future::Future;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use mongo_sequence::SequentialId;
use mongodb::bson::doc;
use mongodb::{Collection, Database};

use super::alternate::{alternate, Slices};
use super::models::{BProxy, Gapless, Plain, Sample, B1, B25};
use super::COLL;
use crate::measure::{connect, drive, BoxError, BoxFuture, Measured, Result, Run, ServerTotals};

/// One insert of a model's `n`-th sample, into the collection it was made for.
pub type Call = Arc<dyn Fn(u64) -> BoxFuture<Result<()>> + Send + Sync>;

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

    /// The collection the model's documents go to when it shares a database with other models
    /// (in the rate curves of `--scale`).
    pub fn coll(self) -> String {
        format!("{COLL}_{}", self.name())
    }

    /// `calls` inserts in each of `tasks` tasks into the collection `coll` of `db`, the
    /// documents numbered from `first`.
    pub async fn insert(
        self,
        db: &Database,
        coll: &str,
        tasks: usize,
        calls: u64,
        first: u64,
    ) -> Result<Measured> {
        let call = self.call(db, coll);
        drive(tasks, calls, move |n| {
            let insert = call(first + n);
            async move { insert.await.map(|()| 1) }
        })
        .await
    }

    /// One insert of the model into `coll` of `db`, as the scenarios make it: the driver's
    /// `insert_one` for plain documents, `insert_with_id` for the others.
    pub fn call(self, db: &Database, coll: &str) -> Call {
        match self {
            Model::Plain => {
                let coll: Collection<Plain> = db.collection(coll);
                Arc::new(move |n| {
                    let coll = coll.clone();
                    Box::pin(async move {
                        coll.insert_one(Plain::sample(n)).await?;
                        Ok(())
                    })
                })
            }
            Model::B1 => sequenced::<B1>(db, coll),
            Model::B25 => sequenced::<B25>(db, coll),
            Model::Gapless => sequenced::<Gapless>(db, coll),
            Model::Proxy => sequenced::<BProxy>(db, coll),
        }
    }
}

/// One `insert_with_id` of a sample of `M` into `coll` of `db`.
fn sequenced<M: SequentialId + Sample + Send + Sync + 'static>(db: &Database, coll: &str) -> Call {
    let coll: Collection<M> = db.collection(coll);
    Arc::new(move |n| {
        let coll = coll.clone();
        Box::pin(async move {
            let mut doc = M::sample(n);
            <M as SequentialId>::insert_with_id(&mut doc, &coll).await?;
            Ok(())
        })
    })
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

/// A worker started, connected and waiting for its next command.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

/// Where the documents of a process's warm-up are numbered from, after its own first: apart
/// from every run's.
const WARM_UP_FROM: u64 = 1 << 39;

/// Where the documents of the `w`-th process of a fleet are numbered from: apart from the
/// other processes'.
fn first_of(w: usize) -> u64 {
    w as u64 * (1 << 40)
}

/// Processes inserting together into one database: this one and workers (the bench started
/// again), `share` tasks each, connected and kept between their runs. A run of the fleet
/// ([`Fleet::insert`]) starts every process at once and lasts until the last one is done.
pub struct Fleet {
    db: mongodb::Database,
    share: usize,
    workers: Vec<Worker>,
}

impl Fleet {
    /// This process and `count - 1` workers, connected, `run.tasks / count` tasks each.
    pub async fn start(run: &Run, count: usize) -> Result<Fleet> {
        let share = (run.tasks / count).max(1);
        let mut workers = Vec::new();
        for _ in 1..count {
            let mut child = Command::new(std::env::current_exe()?)
                .args([WORKER, &run.uri, run.db.name(), &share.to_string()])
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
        let mut fleet = Fleet {
            db: run.db.clone(),
            share,
            workers: Vec::new(),
        };
        for mut worker in workers {
            let (ready, lines) =
                tokio::task::spawn_blocking(move || (worker.lines.next(), worker.lines)).await?;
            if !matches!(ready, Some(Ok(ref l)) if l == "ready") {
                return Err(format!("a worker did not start: {ready:?}").into());
            }
            worker.lines = lines;
            fleet.workers.push(worker);
        }
        Ok(fleet)
    }

    /// The warm-up of every process for `model` into `coll`: one insert per task, not
    /// measured, so that the runs after start with the processes' connections open and the
    /// model's first use made (a sequence's first reservation, its record), as in processes
    /// that have been running; the main bench warms its own pool the same way before its first
    /// run.
    pub async fn warm_up(&mut self, model: Model, coll: &str) -> Result<()> {
        self.insert(model, coll, 1, WARM_UP_FROM).await.map(drop)
    }

    /// A run: `calls` inserts of `model` into `coll` in every task of every process, the
    /// documents of each process numbered from `offset` after its own first. Its elapsed time
    /// is the longest of the processes', and [`Measured::server`] what the server did from
    /// just before the processes started to just after the last one was done.
    pub async fn insert(
        &mut self,
        model: Model,
        coll: &str,
        calls: u64,
        offset: u64,
    ) -> Result<Measured> {
        let (db, share) = (self.db.clone(), self.share);
        let before = ServerTotals::read(db.client()).await?;
        let ours = async {
            let first = first_of(0) + offset;
            Ok(vec![model.insert(&db, coll, share, calls, first).await?])
        };
        let line = |first| format!("{} {coll} {calls} {}", model.name(), first + offset);
        let mut measured = self.together(line, ours).await?.remove(0);
        measured.server = Some(ServerTotals::read(db.client()).await?.since(before));
        Ok(measured)
    }

    /// A run of modes [alternating](alternate) in `slices`, every process in all its tasks:
    /// what each mode measured, in the order of `slices.modes`, with the server's work over
    /// its slices (read at each slice's start and at the last one's end).
    pub async fn alternate(&mut self, slices: &Slices) -> Result<Vec<Measured>> {
        let (db, share) = (self.db.clone(), self.share);
        let sampler = {
            let (client, slices) = (db.client().clone(), slices.clone());
            tokio::spawn(async move {
                let mut totals = Vec::new();
                for k in 0..=slices.count() {
                    tokio::time::sleep_until(slices.start_of(k).into()).await;
                    totals.push(ServerTotals::read(&client).await?);
                }
                Ok::<_, BoxError>(totals)
            })
        };
        let ours = alternate(&db, share, slices, first_of(0));
        let line = |first| format!("alternate {first} {}", slices.words());
        let mut measured = self.together(line, ours).await?;
        let totals = sampler.await??;
        for (k, span) in totals.windows(2).enumerate() {
            let work = span[1].since(span[0]);
            let mode = &mut measured[slices.mode_of(k as u32)];
            mode.server = Some(mode.server.map_or(work, |w| w.plus(work)));
        }
        Ok(measured)
    }

    /// Every process at once: each worker is sent `line(first)` (`first`, where its documents
    /// are numbered from), and this one runs `ours` meanwhile. Each worker reports as many runs
    /// as `ours` measured, which its reports are added into, run by run: their documents and
    /// latencies, and the longest of their times.
    async fn together(
        &mut self,
        line: impl Fn(u64) -> String,
        ours: impl Future<Output = Result<Vec<Measured>>>,
    ) -> Result<Vec<Measured>> {
        let mut started = Vec::new();
        for (w, mut worker) in std::mem::take(&mut self.workers).into_iter().enumerate() {
            writeln!(worker.stdin, "{}", line(first_of(w + 1)))?;
            started.push(worker);
        }
        let mut measured = ours.await?;
        let runs = measured.len();
        for mut worker in started {
            let (reported, back) = tokio::task::spawn_blocking(move || {
                let reported = (0..runs)
                    .map(|_| report(&mut worker))
                    .collect::<Result<Vec<_>>>();
                (reported, worker)
            })
            .await?;
            self.workers.push(back);
            for (run, (ids, elapsed, latencies)) in measured.iter_mut().zip(reported?) {
                run.ids += ids;
                run.elapsed = run.elapsed.max(elapsed);
                for l in latencies {
                    run.latency.saturating_record(l);
                }
            }
        }
        Ok(measured)
    }

    /// Ends the workers: their input closed, each exits once done.
    pub fn finish(self) -> Result<()> {
        for mut worker in self.workers {
            drop(worker.stdin);
            if !worker.child.wait()?.success() {
                return Err("a worker failed".into());
            }
        }
        Ok(())
    }
}

/// Inserts of `model` from `count` processes at once, `run.tasks / count` tasks each: this one
/// and `count - 1` workers (a [`Fleet`]). All connect and [warm up](Fleet::warm_up) first,
/// then start together; the run lasts until the last one is done.
pub fn processes(run: Run, model: Model, count: usize) -> BoxFuture<Result<Measured>> {
    Box::pin(async move {
        let mut fleet = Fleet::start(&run, count).await?;
        fleet.warm_up(model, COLL).await?;
        let measured = fleet.insert(model, COLL, run.calls_per_task, 0).await?;
        fleet.finish()?;
        Ok(measured)
    })
}

/// What a worker reported when it was done with a run: its IDs, how long it ran and every
/// call's latency.
fn report(worker: &mut Worker) -> Result<(u64, Duration, Vec<u64>)> {
    let done = worker.lines.next().ok_or("a worker stopped")??;
    let mut parts = done.split_whitespace();
    if parts.next() != Some("done") {
        return Err(format!("a worker said {done:?}").into());
    }
    let mut next = || -> Result<u64> { Ok(parts.next().ok_or("short line")?.parse()?) };
    let (ids, nanos, calls) = (next()?, next()?, next()?);
    let latencies = worker
        .lines
        .by_ref()
        .take(calls as usize)
        .map(|l| Ok(l?.parse()?))
        .collect::<Result<Vec<u64>>>()?;
    Ok((ids, Duration::from_nanos(nanos), latencies))
}

/// A worker: `URI DB TASKS`. Says `ready` once connected, then runs what each line of its
/// input asks until the input ends, and reports each run:
///
/// - `MODEL COLL CALLS FIRST`: `CALLS` inserts of `MODEL` into `COLL` in each of its `TASKS`
///   tasks, the documents numbered from `FIRST` (apart from the other processes');
/// - `alternate FIRST START SLICE PER_MODE MODEL:COLL...`: the modes [alternating](alternate)
///   in slices (see [`Slices::words`]), one report per mode in their order.
///
/// A run's report is `done IDS NANOS CALLS`, then the latency of every call in nanoseconds,
/// one per line.
pub async fn worker(args: &[String]) -> Result<()> {
    let [uri, db, tasks] = args else {
        return Err(format!("{WORKER} takes URI DB TASKS").into());
    };
    let tasks = tasks.parse()?;
    let (client, _) = connect(uri).await?;
    client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await?;
    let db = client.database(db);
    println!("ready");
    std::io::stdout().flush()?;
    let mut line = String::new();
    while std::io::stdin().lock().read_line(&mut line)? > 0 {
        let words: Vec<&str> = line.split_whitespace().collect();
        let runs = match words[..] {
            ["alternate", first, ref slices @ ..] => {
                alternate(&db, tasks, &Slices::parse(slices)?, first.parse()?).await?
            }
            [model, coll, calls, first] => vec![
                Model::named(model)?
                    .insert(&db, coll, tasks, calls.parse()?, first.parse()?)
                    .await?,
            ],
            _ => return Err(format!("{WORKER}: unexpected input {line:?}").into()),
        };
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        for measured in runs {
            writeln!(
                out,
                "done {} {} {}",
                measured.ids,
                measured.elapsed.as_nanos(),
                measured.latency.len()
            )?;
            for v in measured.latency.iter_recorded() {
                for _ in 0..v.count_at_value() {
                    writeln!(out, "{}", v.value_iterated_to())?;
                }
            }
        }
        out.flush()?;
        line.clear();
    }
    Ok(())
}
