//! What a sequential ID costs over MongoDB's own ObjectId inserts, measured in one run against
//! one server, as ratios.
//!
//! ```sh
//! cargo run --release --example bench                  # table on stdout
//! cargo run --release --example bench -- --json        # one JSON object on stdout
//! cargo run --release --example bench -- --chart docs/bench.svg
//! cargo run --example bench -- --quick                 # small counts: a smoke run, not a measurement
//! ```
//!
//! Uses `MONGODB_URI` if set, otherwise starts a throw-away single-node replica set (like the
//! quickstart). Every scenario runs at 1 and 32 concurrent tasks on a fresh database (so a fresh
//! collection and a fresh counter), all scenarios one after the other in each round, for several
//! rounds (every other round in reverse order); the table shows the median of the rounds. All
//! scenarios share one client, with a pool of 64 connections unless the URI sets `maxPoolSize`
//! (the driver's default of 10 would queue 32 tasks). The counter round trips of a run are the
//! `findAndModify` commands the server ran meanwhile (from `serverStatus`), so with
//! `MONGODB_URI` they are only right when nothing else sends such commands to that deployment
//! during the run. The waits of a run are the calls that waited for a counter round trip
//! (`Stats::waits` of the run's sequence).
//!
//! Throughput is in documents inserted (or IDs allocated, for `next_id`) per second; latencies
//! are per call (for the `insert_many` scenarios, per call of 1000 documents).
//!
//! Built with `--features metrics`, the run also has the rows `insert_with_id_metrics` (batch
//! 25) and `next_id_metrics` (batch 1000): the same scenarios as `insert_with_id` and `next_id`
//! at those batches, with the sequence's series registered with a Prometheus recorder
//! (`metrics-exporter-prometheus`), while the other rows record into no recorder. Side by side
//! in one run, they show what the metrics cost with a recorder installed and without:
//!
//! ```sh
//! cargo run --release --example bench --features metrics -- --rounds 3 \
//!     --only insert_with_id --only insert_with_id_metrics --only next_id --only next_id_metrics
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mongo_sequence::{Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, oid::ObjectId, Bson, DateTime};
use mongodb::options::{Acknowledgment, ClientOptions, ReturnDocument, WriteConcern};
use mongodb::{Client, Database};
use sequence_testkit::{unique_db_name, TestServer};
use serde::Serialize;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = BoxError> = std::result::Result<T, E>;
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The collection every scenario inserts into (in a database of its own).
const COLL: &str = "docs";
/// Documents per `insert_many` call.
const MANY: u64 = 1000;
/// The task counts of every scenario.
const TASKS: &[usize] = &[1, 32];
/// The client's connection pool (`maxPoolSize`), unless the URI sets one: more than the most
/// tasks, so that every task has an operation in flight.
const POOL_SIZE: u32 = 64;

// ---------------------------------------------------------------------------------------------
// Models: the same fields everywhere, only the ID differs.

/// Fills a document's fields for the `n`-th document of a run.
trait Sample {
    fn sample(n: u64) -> Self;
}

/// A document of realistic size (about 250 bytes of BSON): a few strings, a list, numbers, a
/// date. `$id` is the type of `_id`; `None` leaves `_id` to the driver (an ObjectId) or to the
/// sequence.
macro_rules! bench_model {
    ($(#[$attr:meta])* $name:ident, $id:ty) => {
        #[derive(Debug, Serialize)]
        $(#[$attr])*
        struct $name {
            #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
            id: Option<$id>,
            name: String,
            email: String,
            address: String,
            tags: Vec<String>,
            score: f64,
            visits: i32,
            active: bool,
            created_at: DateTime,
        }

        impl Sample for $name {
            fn sample(n: u64) -> Self {
                const CITIES: [&str; 4] = ["Lyon", "Porto", "Leipzig", "Gdansk"];
                $name {
                    id: None,
                    name: format!("Customer {n:08}"),
                    email: format!("customer.{n:08}@example.com"),
                    address: format!("{} Harbour Street, {}", n % 997, CITIES[(n % 4) as usize]),
                    tags: vec!["retail".into(), "newsletter".into(), format!("cohort-{}", n % 12)],
                    score: (n % 1000) as f64 / 7.0,
                    visits: (n % 50) as i32,
                    active: n % 3 != 0,
                    created_at: DateTime::from_millis(1_700_000_000_000 + n as i64),
                }
            }
        }
    };
}

bench_model!(Plain, ObjectId);
bench_model!(Naive, i64);
bench_model!(
    #[derive(SequentialId)]
    #[seq(name = "bench_b1")]
    B1,
    i64
);
bench_model!(
    #[derive(SequentialId)]
    #[seq(name = "bench_b25", batch = 25)]
    B25,
    i64
);
bench_model!(
    #[derive(SequentialId)]
    #[seq(name = "bench_b1000", batch = 1000)]
    B1000,
    i64
);
bench_model!(
    #[derive(SequentialId)]
    #[seq(name = "bench_proxy", batch = 25, unique = "proxy")]
    BProxy,
    i64
);
bench_model!(
    #[derive(SequentialId)]
    #[seq(name = "bench_auto", batch = 10..=10_000)]
    BAuto,
    i64
);
bench_model!(
    #[derive(SequentialId)]
    #[seq(name = "bench_gapless", gapless)]
    Gapless,
    i64
);
bench_model!(
    #[derive(SequentialId)]
    #[seq(name = "bench_sharded", strategy = "ranges", shards = 16)]
    Sharded,
    i64
);

// ---------------------------------------------------------------------------------------------
// Scenarios.

/// One scenario: a name, a batch size where it applies, how much work a run does, what its ratio
/// is taken against, and the function that runs it.
struct Scenario {
    name: &'static str,
    batch: BatchSize,
    work: Work,
    /// The scenario whose throughput (at the same task count) is the denominator of the ratio.
    baseline: Option<&'static str>,
    run: fn(Run) -> BoxFuture<Result<Measured>>,
    /// The fewest tasks it runs with (a scenario of two processes needs two).
    min_tasks: usize,
}

/// The batch size of a scenario's model.
#[derive(Clone, Copy)]
enum BatchSize {
    /// No sequence, or one that reserves per call (`insert_many_with_ids`).
    None,
    Fixed(u64),
    /// `batch = 10..=10_000`: adaptive, from 10, doubled while ranges run out in less than
    /// 15 s, to 10,000.
    Adaptive,
}

impl BatchSize {
    /// The fixed size, as the `batch` of the JSON rows and the chart's x axis.
    fn number(self) -> Option<u64> {
        match self {
            BatchSize::Fixed(n) => Some(n),
            BatchSize::None | BatchSize::Adaptive => None,
        }
    }

    fn label(self) -> String {
        match self {
            BatchSize::None => "-".to_owned(),
            BatchSize::Fixed(n) => n.to_string(),
            BatchSize::Adaptive => "10..=10000".to_owned(),
        }
    }
}

/// How many operations a run does, from `--docs`.
#[derive(Clone, Copy)]
enum Work {
    /// `docs` single-document calls, times `tasks / 8` with more than 8 tasks (so that a run at
    /// 32 tasks lasts seconds too, not a fraction of one).
    Docs,
    /// `docs / 5` single-document calls (for the slow transactional path).
    FewDocs,
    /// `insert_many` calls of 1000 documents: `20 × docs` documents, times `tasks / 8` with more
    /// than 8 tasks.
    Many,
    /// `docs × min(batch, 200)` IDs.
    Ids(u64),
}

/// Every scenario, in the order of a round.
///
/// A new scenario is a function returning a [`Measured`] (usually one of the generic ones below
/// with a model of its own) and an entry here.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "plain_insert_one",
        batch: BatchSize::None,
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: plain_insert_one,
        min_tasks: 1,
    },
    Scenario {
        name: "naive_counter_insert",
        batch: BatchSize::None,
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: naive_counter_insert,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_with_id",
        batch: BatchSize::Fixed(1),
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: insert_with_id::<B1>,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_with_id",
        batch: BatchSize::Fixed(25),
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: insert_with_id::<B25>,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_with_id",
        batch: BatchSize::Fixed(1000),
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: insert_with_id::<B1000>,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_with_id_proxy",
        batch: BatchSize::Fixed(25),
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: insert_with_id::<BProxy>,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_with_id_auto",
        batch: BatchSize::Adaptive,
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: insert_with_id::<BAuto>,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_with_id_gapless",
        batch: BatchSize::Fixed(1),
        work: Work::FewDocs,
        baseline: Some("plain_insert_one"),
        run: insert_gapless,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_with_id_gapless_2p",
        batch: BatchSize::Fixed(1),
        work: Work::FewDocs,
        baseline: Some("plain_insert_one"),
        run: insert_gapless_two_processes,
        min_tasks: 2,
    },
    Scenario {
        name: "ranges_counter",
        batch: BatchSize::Fixed(1),
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: insert_with_id::<Sharded>,
        min_tasks: 1,
    },
    Scenario {
        name: "counter_w1_insert",
        batch: BatchSize::Fixed(1),
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: counter_w1_insert,
        min_tasks: 1,
    },
    Scenario {
        name: "plain_insert_many",
        batch: BatchSize::None,
        work: Work::Many,
        baseline: Some("plain_insert_many"),
        run: plain_insert_many,
        min_tasks: 1,
    },
    Scenario {
        name: "insert_many_with_ids",
        batch: BatchSize::None,
        work: Work::Many,
        baseline: Some("plain_insert_many"),
        run: insert_many_with_ids::<B1>,
        min_tasks: 1,
    },
    Scenario {
        name: "next_id",
        batch: BatchSize::Fixed(1),
        work: Work::Ids(1),
        baseline: None,
        run: next_id::<B1>,
        min_tasks: 1,
    },
    Scenario {
        name: "next_id",
        batch: BatchSize::Fixed(25),
        work: Work::Ids(25),
        baseline: None,
        run: next_id::<B25>,
        min_tasks: 1,
    },
    Scenario {
        name: "next_id",
        batch: BatchSize::Fixed(1000),
        work: Work::Ids(1000),
        baseline: None,
        run: next_id::<B1000>,
        min_tasks: 1,
    },
    #[cfg(feature = "metrics")]
    Scenario {
        name: "insert_with_id_metrics",
        batch: BatchSize::Fixed(25),
        work: Work::Docs,
        baseline: Some("plain_insert_one"),
        run: insert_with_id_metrics::<B25>,
        min_tasks: 1,
    },
    #[cfg(feature = "metrics")]
    Scenario {
        name: "next_id_metrics",
        batch: BatchSize::Fixed(1000),
        work: Work::Ids(1000),
        baseline: None,
        run: next_id_metrics::<B1000>,
        min_tasks: 1,
    },
    Scenario {
        name: "next_id_auto",
        batch: BatchSize::Adaptive,
        work: Work::Ids(1000),
        baseline: None,
        run: next_id::<BAuto>,
        min_tasks: 1,
    },
];

/// What a run of a scenario gets: its own database, the task count and the calls per task.
struct Run {
    db: Database,
    /// The server's URI, for the scenarios that start another process.
    uri: String,
    tasks: usize,
    calls_per_task: u64,
}

/// What a run measured.
struct Measured {
    /// Documents inserted or IDs allocated.
    ids: u64,
    elapsed: Duration,
    /// Latency of every call, in nanoseconds.
    latency: Histogram<u64>,
    /// Calls that waited for a counter round trip (`Stats::waits`), for the scenarios that take
    /// IDs one at a time from a sequence.
    waits: Option<u64>,
}

fn plain_insert_one(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Plain>(COLL);
    drive(run.tasks, run.calls_per_task, move |n| {
        let coll = coll.clone();
        async move {
            coll.insert_one(Plain::sample(n)).await?;
            Ok(1)
        }
    })
}

/// The recipe of the MongoDB documentation: `$inc` the counter by one, then insert.
fn naive_counter_insert(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Naive>(COLL);
    let counters = run.db.collection::<mongodb::bson::Document>("counters");
    drive(run.tasks, run.calls_per_task, move |n| {
        let (coll, counters) = (coll.clone(), counters.clone());
        async move {
            let counter = counters
                .find_one_and_update(doc! { "_id": "bench_naive" }, doc! { "$inc": { "seq": 1 } })
                .upsert(true)
                .return_document(ReturnDocument::After)
                .await?
                .ok_or("the counter upsert returned no document")?;
            let mut doc = Naive::sample(n);
            doc.id = Some(
                counter
                    .get_i64("seq")
                    .or_else(|_| counter.get_i32("seq").map(i64::from))?,
            );
            coll.insert_one(doc).await?;
            Ok(1)
        }
    })
}

/// Batch 1 as `insert_with_id` does it, except that the counter updates are acknowledged by the
/// primary alone (`w: 1`) instead of a majority: not a setting to use (a failover can roll such
/// an update back, and its values be handed out again), but what it gains is what waiting for
/// a durable counter update costs batch 1.
fn counter_w1_insert(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Naive>(COLL);
    let options = SequenceOptions::builder("bench_w1")
        .write_concern(Some(
            WriteConcern::builder().w(Acknowledgment::Nodes(1)).build(),
        ))
        .build();
    let seq = match Sequence::new(&run.db, options) {
        Ok(seq) => seq,
        Err(e) => return Box::pin(async move { Err(e.into()) }),
    };
    drive(run.tasks, run.calls_per_task, move |n| {
        let (coll, seq) = (coll.clone(), seq.clone());
        async move {
            let mut doc = Naive::sample(n);
            doc.id = Some(seq.next().await?);
            coll.insert_one(doc).await?;
            Ok(1)
        }
    })
}

fn insert_with_id<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<M>(COLL);
    with_waits(coll.clone(), insert_one_each(run, coll))
}

/// Gapless inserts take their number inside their transaction, from no cache: no waits to count.
fn insert_gapless(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Gapless>(COLL);
    insert_one_each(run, coll)
}

/// The first argument that makes the bench the second process of
/// `insert_with_id_gapless_2p`.
const WORKER: &str = "--gapless-worker";

/// Gapless inserts from two processes at once, half the tasks each: this one, and the bench
/// started again as a worker. Both connect first, then start together; the run lasts until the
/// later one is done.
fn insert_gapless_two_processes(run: Run) -> BoxFuture<Result<Measured>> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    Box::pin(async move {
        let half = (run.tasks / 2).max(1);
        let mut child = Command::new(std::env::current_exe()?)
            .args([
                WORKER,
                &run.uri,
                run.db.name(),
                &half.to_string(),
                &run.calls_per_task.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let (ready, lines) = tokio::task::spawn_blocking(move || (lines.next(), lines)).await?;
        if !matches!(ready, Some(Ok(ref l)) if l == "ready") {
            return Err(format!("the worker did not start: {ready:?}").into());
        }
        writeln!(stdin, "go")?;
        let theirs = tokio::task::spawn_blocking(move || -> Result<(u64, Duration, Vec<u64>)> {
            let mut lines = lines;
            let done = lines.next().ok_or("the worker stopped")??;
            let mut parts = done.split_whitespace().skip(1);
            let mut next = || -> Result<u64> { Ok(parts.next().ok_or("short line")?.parse()?) };
            let (ids, nanos) = (next()?, next()?);
            let latencies = lines
                .map(|l| Ok(l?.parse()?))
                .collect::<Result<Vec<u64>>>()?;
            Ok((ids, Duration::from_nanos(nanos), latencies))
        });
        let coll = run.db.collection::<Gapless>(COLL);
        let ours = insert_one_each(Run { tasks: half, ..run }, coll).await?;
        let (ids, elapsed, latencies) = theirs.await??;
        if !child.wait()?.success() {
            return Err("the worker failed".into());
        }
        let mut latency = ours.latency;
        for l in latencies {
            latency.saturating_record(l);
        }
        Ok(Measured {
            ids: ours.ids + ids,
            elapsed: ours.elapsed.max(elapsed),
            latency,
            waits: None,
        })
    })
}

/// The second process of `insert_with_id_gapless_2p`: `URI DB TASKS CALLS`. Says `ready` once
/// connected, waits for a line, runs its tasks, then writes `done IDS NANOS` and the latency of
/// every call in nanoseconds, one per line.
async fn gapless_worker(args: &[String]) -> Result<()> {
    use std::io::{BufRead, Write};
    let [uri, db, tasks, calls] = args else {
        return Err(format!("{WORKER} takes URI DB TASKS CALLS").into());
    };
    let mut options = ClientOptions::parse(uri).await?;
    options.max_pool_size.get_or_insert(POOL_SIZE);
    let client = Client::with_options(options)?;
    client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await?;
    println!("ready");
    std::io::stdout().flush()?;
    std::io::stdin().lock().read_line(&mut String::new())?;
    let db = client.database(db);
    let coll = db.collection::<Gapless>(COLL);
    // Numbers of its own for the documents' fields, apart from the other process's.
    let calls: u64 = calls.parse()?;
    let measured = drive(tasks.parse()?, calls, move |n| {
        let coll = coll.clone();
        async move {
            let mut doc = Gapless::sample((1 << 40) + n);
            <Gapless as SequentialId>::insert_with_id(&mut doc, &coll).await?;
            Ok(1)
        }
    })
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

fn insert_one_each<M: SequentialId + Sample>(
    run: Run,
    coll: mongodb::Collection<M>,
) -> BoxFuture<Result<Measured>> {
    drive(run.tasks, run.calls_per_task, move |n| {
        let coll = coll.clone();
        async move {
            let mut doc = M::sample(n);
            <M as SequentialId>::insert_with_id(&mut doc, &coll).await?;
            Ok(1)
        }
    })
}

fn plain_insert_many(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Plain>(COLL);
    drive(run.tasks, run.calls_per_task, move |n| {
        let coll = coll.clone();
        async move {
            let docs: Vec<Plain> = (0..MANY).map(|k| Plain::sample(n * MANY + k)).collect();
            coll.insert_many(docs).await?;
            Ok(MANY)
        }
    })
}

fn insert_many_with_ids<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<M>(COLL);
    drive(run.tasks, run.calls_per_task, move |n| {
        let coll = coll.clone();
        async move {
            let mut docs: Vec<M> = (0..MANY).map(|k| M::sample(n * MANY + k)).collect();
            <M as SequentialId>::insert_many_with_ids(&mut docs, &coll).await?;
            Ok(MANY)
        }
    })
}

fn next_id<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<M>(COLL);
    let ids = coll.clone();
    let measured = drive(run.tasks, run.calls_per_task, move |_| {
        let coll = ids.clone();
        async move {
            <M as SequentialId>::next_id(&coll).await?;
            Ok(1)
        }
    });
    with_waits(coll, measured)
}

/// `insert_with_id`, with the series of the sequence registered with a recorder.
#[cfg(feature = "metrics")]
fn insert_with_id_metrics<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    recorded::<M>(&run);
    insert_with_id::<M>(run)
}

/// `next_id`, with the series of the sequence registered with a recorder.
#[cfg(feature = "metrics")]
fn next_id_metrics<M: SequentialId + Sample>(run: Run) -> BoxFuture<Result<Measured>> {
    recorded::<M>(&run);
    next_id::<M>(run)
}

/// Registers the series of `M`'s sequence in the run's (fresh) database with the bench's
/// Prometheus recorder: a sequence registers them, on its first use in the process, with the
/// recorder of that moment, here one set for this thread only. What the run records goes to
/// that recorder, from any thread; the other scenarios' sequences record into none.
#[cfg(feature = "metrics")]
fn recorded<M: SequentialId>(run: &Run) {
    static RECORDER: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusRecorder> =
        std::sync::OnceLock::new();
    let recorder = RECORDER
        .get_or_init(|| metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder());
    metrics::with_local_recorder(recorder, || {
        M::sequence(&run.db.collection::<M>(COLL));
    });
}

/// `measured`, with the waits of `M`'s sequence in `coll`'s database (a fresh one per run).
fn with_waits<M: SequentialId>(
    coll: mongodb::Collection<M>,
    measured: BoxFuture<Result<Measured>>,
) -> BoxFuture<Result<Measured>> {
    Box::pin(async move {
        let mut measured = measured.await?;
        measured.waits = Some(M::sequence(&coll).stats().waits);
        Ok(measured)
    })
}

/// Runs `call` `calls_per_task` times in each of `tasks` tasks, timing every call. `call(n)`
/// gets a number unique in the run and returns how many documents or IDs it handled.
fn drive<F, Fut>(tasks: usize, calls_per_task: u64, call: F) -> BoxFuture<Result<Measured>>
where
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<u64>> + Send + 'static,
{
    Box::pin(async move {
        let started = Instant::now();
        let handles: Vec<_> = (0..tasks as u64)
            .map(|task| {
                let call = call.clone();
                tokio::spawn(async move {
                    let mut latency = new_histogram();
                    let mut ids = 0;
                    for i in 0..calls_per_task {
                        let t = Instant::now();
                        ids += call(task * calls_per_task + i).await?;
                        latency.saturating_record(t.elapsed().as_nanos() as u64);
                    }
                    Ok::<_, BoxError>((ids, latency))
                })
            })
            .collect();
        let mut ids = 0;
        let mut latency = new_histogram();
        for handle in handles {
            let (n, h) = handle.await??;
            ids += n;
            latency.add(&h)?;
        }
        Ok(Measured {
            ids,
            elapsed: started.elapsed(),
            latency,
            waits: None,
        })
    })
}

fn new_histogram() -> Histogram<u64> {
    // 1 ns to 10 min, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("valid histogram bounds")
}

// ---------------------------------------------------------------------------------------------
// Options.

struct Options {
    quick: bool,
    rounds: usize,
    docs: u64,
    json: bool,
    chart: Option<PathBuf>,
    /// Scenario names to run (all if empty).
    only: Vec<String>,
}

const USAGE: &str = "\
usage: bench [--quick] [--rounds N] [--docs N] [--json] [--chart PATH] [--only SCENARIO]...

  --quick        small counts and one round: a smoke run, not a measurement
  --rounds N     rounds of every scenario; the table shows the median (default 3)
  --docs N       documents per run of the insert_one scenarios at 1 task (default 10000);
                 insert_many runs insert 20N; both 4 times as many at 32 tasks; gapless
                 runs insert N/5, next_id runs allocate N x min(batch, 200) IDs
  --json         print one JSON object on stdout (everything else goes to stderr)
  --chart PATH   write an SVG chart of IDs/s against batch size to PATH
  --only NAME    run only the scenario NAME (repeatable), e.g. --only next_id; built with
                 --features metrics, also insert_with_id_metrics and next_id_metrics";

fn parse_args() -> Result<Options, lexopt::Error> {
    use lexopt::prelude::*;
    let mut options = Options {
        quick: false,
        rounds: 3,
        docs: 10_000,
        json: false,
        chart: None,
        only: Vec::new(),
    };
    let (mut rounds, mut docs) = (None, None);
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("quick") => options.quick = true,
            Long("rounds") => rounds = Some(parser.value()?.parse()?),
            Long("docs") => docs = Some(parser.value()?.parse()?),
            Long("json") => options.json = true,
            Long("chart") => options.chart = Some(parser.value()?.into()),
            Long("only") => {
                let name = parser.value()?.string()?;
                if !SCENARIOS.iter().any(|s| s.name == name) {
                    return Err(format!("unknown scenario `{name}`").into());
                }
                options.only.push(name);
            }
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if options.quick {
        options.rounds = 1;
        options.docs = 200;
    }
    options.rounds = rounds.unwrap_or(options.rounds).max(1);
    options.docs = docs.unwrap_or(options.docs).max(1);
    Ok(options)
}

/// Calls per task of a run.
fn calls_per_task(work: Work, docs: u64, tasks: usize) -> u64 {
    let tasks = tasks as u64;
    let total = match work {
        Work::Docs => docs * (tasks / 8).max(1),
        Work::FewDocs => docs / 5,
        Work::Many => 20 * docs / MANY * (tasks / 8).max(1),
        Work::Ids(batch) => docs * batch.min(200),
    };
    (total / tasks).max(1)
}

// ---------------------------------------------------------------------------------------------
// Round trips, counted by the server.

/// The `findAndModify` commands the server has run since it started (`serverStatus`): the
/// counter round trips of a run are the difference across it.
///
/// Counted on the server rather than with the driver's command monitoring: with a command event
/// handler installed, the driver copies every command into an event document, which for an
/// `insert_many` of 1000 documents took a third of the throughput away in a trial run.
async fn find_and_modify_total(client: &Client) -> Result<u64> {
    let status = client
        .database("admin")
        .run_command(doc! { "serverStatus": 1 })
        .await?;
    let total = status
        .get_document("metrics")?
        .get_document("commands")?
        .get_document("findAndModify")?
        .get("total");
    match total {
        Some(Bson::Int64(n)) => Ok(*n as u64),
        Some(Bson::Int32(n)) => Ok(*n as u64),
        Some(Bson::Double(n)) => Ok(*n as u64),
        other => Err(format!("unexpected findAndModify counter in serverStatus: {other:?}").into()),
    }
}

// ---------------------------------------------------------------------------------------------
// Results.

/// The median of a scenario's rounds, at one task count.
struct Row {
    scenario: &'static str,
    batch: BatchSize,
    tasks: usize,
    ops_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    round_trips_per_id: f64,
    /// Calls that waited for a counter round trip, per ID.
    waits_per_id: Option<f64>,
    /// Median over the rounds of the throughput over the baseline's in the same round.
    ratio: Option<f64>,
}

#[derive(Default)]
struct Rounds {
    ops_per_s: Vec<f64>,
    p50_us: Vec<f64>,
    p99_us: Vec<f64>,
    ids: u64,
    trips: u64,
    /// Waits over the rounds, if the scenario counts them.
    waits: Option<u64>,
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn rows(results: &[Vec<Rounds>]) -> Vec<Row> {
    // Each round's throughput of every scenario, to pair a scenario with its baseline round by
    // round (both ran minutes apart at most, so a slower phase of the machine hits both).
    let mut per_round: HashMap<(&str, usize), &[f64]> = HashMap::new();
    for (s, per_tasks) in SCENARIOS.iter().zip(results) {
        for (&tasks, r) in TASKS.iter().zip(per_tasks) {
            per_round.insert((s.name, tasks), &r.ops_per_s);
        }
    }
    let mut rows = Vec::new();
    for (s, per_tasks) in SCENARIOS.iter().zip(results) {
        for (&tasks, r) in TASKS.iter().zip(per_tasks) {
            if r.ops_per_s.is_empty() {
                continue; // not run (--only)
            }
            let ratio = s
                .baseline
                .and_then(|b| per_round.get(&(b, tasks)))
                .filter(|base| base.len() == r.ops_per_s.len())
                .map(|base| {
                    let ratios: Vec<f64> =
                        r.ops_per_s.iter().zip(*base).map(|(x, b)| x / b).collect();
                    median(&ratios)
                });
            rows.push(Row {
                scenario: s.name,
                batch: s.batch,
                tasks,
                ops_per_s: median(&r.ops_per_s),
                p50_us: median(&r.p50_us),
                p99_us: median(&r.p99_us),
                round_trips_per_id: r.trips as f64 / r.ids.max(1) as f64,
                waits_per_id: r.waits.map(|w| w as f64 / r.ids.max(1) as f64),
                ratio,
            });
        }
    }
    rows
}

/// What the columns of the table mean.
const NOTE: &str = "\
ops/s: documents inserted (next_id: IDs allocated) per second. p50/p99: latency of one call
(insert_many: of 1000 documents). trips/ID: counter round trips (findAndModify) per ID.
waits/ID: calls that waited for a counter round trip (Stats::waits), per ID; with a batch,
above 1/batch means callers outran the prefetch.
ratio: ops/s over plain_insert_one's at the same task count in the same round, median of the
rounds; for insert_many_with_ids and plain_insert_many, over plain_insert_many's.
";

fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<26} {:>6} {:>6} {:>12} {:>10} {:>10} {:>9} {:>9} {:>7}\n",
        "scenario", "batch", "tasks", "ops/s", "p50 µs", "p99 µs", "trips/ID", "waits/ID", "ratio"
    );
    for r in rows {
        let batch = r.batch.label();
        let ratio = r.ratio.map_or("-".to_owned(), |x| format!("{x:.3}"));
        let waits = r.waits_per_id.map_or("-".to_owned(), |x| format!("{x:.3}"));
        out += &format!(
            "{:<26} {:>6} {:>6} {:>12.0} {:>10.1} {:>10.1} {:>9.3} {:>9} {:>7}\n",
            r.scenario,
            batch,
            r.tasks,
            r.ops_per_s,
            r.p50_us,
            r.p99_us,
            r.round_trips_per_id,
            waits,
            ratio
        );
    }
    out += NOTE;
    out
}

fn json(server: &str, rows: &[Row]) -> serde_json::Value {
    serde_json::json!({
        "server": server,
        "rows": rows.iter().map(|r| serde_json::json!({
            "scenario": r.scenario,
            "batch": r.batch.number(),
            "tasks": r.tasks,
            "ops_per_s": round1(r.ops_per_s),
            "p50_us": round1(r.p50_us),
            "p99_us": round1(r.p99_us),
            "round_trips_per_id": (r.round_trips_per_id * 1000.0).round() / 1000.0,
            "waits_per_id": r.waits_per_id.map(|x| (x * 1000.0).round() / 1000.0),
            "ratio": r.ratio.map(|x| (x * 1000.0).round() / 1000.0),
        })).collect::<Vec<_>>(),
    })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// IDs/s against batch size: `next_id` and `insert_with_id`, at each task count, with
/// `plain_insert_one` for reference.
fn chart(path: &std::path::Path, server: &str, rows: &[Row]) -> Result<()> {
    use plotters::prelude::*;

    let series = |scenario: &str, tasks: usize| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.scenario == scenario && r.tasks == tasks && r.ops_per_s > 0.0)
            .filter_map(|r| Some((r.batch.number()? as f64, r.ops_per_s)))
            .collect()
    };
    let batches: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.batch.number())
        .map(|b| b as f64)
        .collect();
    let x_max = batches.iter().copied().fold(1.0, f64::max) * 2.0;
    let y: Vec<f64> = rows
        .iter()
        .filter(|r| r.ops_per_s > 0.0)
        .map(|r| r.ops_per_s)
        .collect();
    let y_min = y.iter().copied().fold(f64::INFINITY, f64::min).min(100.0) / 2.0;
    let y_max = y.iter().copied().fold(1.0, f64::max) * 3.0;

    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("IDs per second against batch size (MongoDB {server})"),
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d((0.7..x_max).log_scale(), (y_min..y_max).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("batch size (IDs reserved per counter round trip)")
        .y_desc("IDs per second")
        .light_line_style(BLACK.mix(0.04))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format_rate(*y))
        .draw()?;

    let lines = [
        ("next_id", 32, RGBColor(0xd6, 0x27, 0x28)),
        ("next_id", 1, RGBColor(0xff, 0x98, 0x96)),
        ("insert_with_id", 32, RGBColor(0x1f, 0x77, 0xb4)),
        ("insert_with_id", 1, RGBColor(0x9e, 0xc7, 0xe9)),
    ];
    for (scenario, tasks, color) in lines {
        let points = series(scenario, tasks);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(format!(
                "{scenario}, {tasks} task{}",
                if tasks == 1 { "" } else { "s" }
            ))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 4, color.filled())),
        )?;
    }
    for (tasks, color) in [
        (32, RGBColor(0x2c, 0xa0, 0x2c)),
        (1, RGBColor(0x98, 0xdf, 0x8a)),
    ] {
        let Some(plain) = rows
            .iter()
            .find(|r| r.scenario == "plain_insert_one" && r.tasks == tasks)
        else {
            continue;
        };
        let level = plain.ops_per_s;
        chart
            .draw_series(DashedLineSeries::new(
                [(0.7, level), (x_max, level)],
                8,
                6,
                color.stroke_width(2),
            ))?
            .label(format!(
                "plain_insert_one (ObjectId), {tasks} task{}",
                if tasks == 1 { "" } else { "s" }
            ))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn format_rate(y: f64) -> String {
    if y >= 1e6 {
        format!("{:.0}M", y / 1e6)
    } else if y >= 1e3 {
        format!("{:.0}k", y / 1e3)
    } else {
        format!("{y:.0}")
    }
}

// ---------------------------------------------------------------------------------------------

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(WORKER) {
        return gapless_worker(&args[1..]).await;
    }
    let options = match parse_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("bench: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    // In JSON mode stdout carries the JSON object only.
    let say = |line: &str| eprintln!("{line}");

    let server = tokio::task::spawn_blocking(TestServer::shared).await??;
    let mut client_options = ClientOptions::parse(server.uri()).await?;
    // 32 tasks should mean 32 operations in flight, plus the background prefetch: the driver's
    // default pool of 10 connections would queue them. A `maxPoolSize` in the URI wins.
    let pool = *client_options.max_pool_size.get_or_insert(POOL_SIZE);
    let client = Client::with_options(client_options)?;
    let info = client
        .database("admin")
        .run_command(doc! { "buildInfo": 1 })
        .await?;
    let version = info.get_str("version").unwrap_or("unknown").to_owned();
    say(&format!(
        "bench: MongoDB {version}, {} build, {} round(s), {} docs per run, pool of {pool}{}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        options.rounds,
        options.docs,
        if options.quick {
            " (quick: a smoke run, not a measurement)"
        } else {
            ""
        },
    ));

    // Warm-up: open the pool's connections and let the server settle; not measured.
    {
        let db = client.database(&unique_db_name("bench_warmup"));
        plain_insert_one(Run {
            db: db.clone(),
            uri: server.uri().to_owned(),
            tasks: 32,
            calls_per_task: if options.quick { 2 } else { 20 },
        })
        .await?;
        db.drop().await?;
    }

    let mut results: Vec<Vec<Rounds>> = SCENARIOS
        .iter()
        .map(|_| TASKS.iter().map(|_| Rounds::default()).collect())
        .collect();
    // All scenarios at one task count, then at the next: a scenario runs close in time to its
    // baseline at the same task count.
    let mut order: Vec<(usize, usize)> = (0..TASKS.len())
        .flat_map(|t| (0..SCENARIOS.len()).map(move |s| (s, t)))
        .filter(|&(s, _)| {
            options.only.is_empty() || options.only.iter().any(|o| o == SCENARIOS[s].name)
        })
        .filter(|&(s, t)| TASKS[t] >= SCENARIOS[s].min_tasks)
        .collect();
    for round in 0..options.rounds {
        for &(s, t) in &order {
            let scenario = &SCENARIOS[s];
            let tasks = TASKS[t];
            let db = client.database(&unique_db_name(&format!("bench_{}", scenario.name)));
            db.create_collection(COLL).await?;
            db.create_collection("counters").await?;
            let trips_before = find_and_modify_total(&client).await?;
            let measured = (scenario.run)(Run {
                db: db.clone(),
                uri: server.uri().to_owned(),
                tasks,
                calls_per_task: calls_per_task(scenario.work, options.docs, tasks),
            })
            .await?;
            // A prefetch may still be on its way: let it land before counting round trips.
            tokio::time::sleep(Duration::from_millis(100)).await;
            let round_trips = find_and_modify_total(&client).await? - trips_before;
            db.drop().await?;

            let ops_per_s = measured.ids as f64 / measured.elapsed.as_secs_f64();
            let p50 = measured.latency.value_at_quantile(0.50) as f64 / 1000.0;
            let p99 = measured.latency.value_at_quantile(0.99) as f64 / 1000.0;
            let quantile = |q| measured.latency.value_at_quantile(q) as f64 / 1000.0;
            say(&format!(
                "round {}/{}: {:<25} batch {:>4} tasks {:>2}: {:>9.0} ops/s, latency µs p50 {:.1} \
                 p99 {:.1} p99.9 {:.1} max {:.1}; {} IDs, {} round trips, {} waits, {:.2} s",
                round + 1,
                options.rounds,
                scenario.name,
                scenario.batch.label(),
                tasks,
                ops_per_s,
                p50,
                p99,
                quantile(0.999),
                measured.latency.max() as f64 / 1000.0,
                measured.ids,
                round_trips,
                measured.waits.map_or("-".to_owned(), |w| w.to_string()),
                measured.elapsed.as_secs_f64(),
            ));
            let r = &mut results[s][t];
            r.ops_per_s.push(ops_per_s);
            r.p50_us.push(p50);
            r.p99_us.push(p99);
            r.ids += measured.ids;
            r.trips += round_trips;
            if let Some(w) = measured.waits {
                *r.waits.get_or_insert(0) += w;
            }
        }
        order.reverse();
    }

    let rows = rows(&results);
    let table = table(&rows);
    if options.json {
        eprint!("{table}");
        println!("{}", json(&version, &rows));
    } else {
        print!("{table}");
    }
    if let Some(path) = &options.chart {
        chart(path, &version, &rows)?;
        say(&format!("bench: chart written to {}", path.display()));
    }
    Ok(())
}
