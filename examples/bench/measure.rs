//! The measurement: what a scenario is and how much work a run of it does, the timed calls of a
//! run and their latency histogram, the counter round trips the server counts, and the medians of
//! the rounds with their ratios to the plain inserts.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Bson};
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection, Database};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Result<T, E = BoxError> = std::result::Result<T, E>;
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Documents per `insert_many` call.
pub const MANY: u64 = 1000;
/// The task counts of every scenario.
pub const TASKS: &[usize] = &[1, 32];
/// The client's connection pool (`maxPoolSize`), unless the URI sets one: more than the most
/// tasks, so that every task has an operation in flight.
const POOL_SIZE: u32 = 64;

/// One scenario: a name, a batch size where it applies, how much work a run does, what its ratio
/// is taken against, and the function that runs it.
pub struct Scenario {
    pub name: &'static str,
    pub batch: BatchSize,
    pub work: Work,
    /// The scenario whose throughput (at the same task count) is the denominator of the ratio.
    pub baseline: Option<&'static str>,
    pub run: fn(Run) -> BoxFuture<Result<Measured>>,
    /// The fewest tasks it runs with (a scenario of two processes needs two).
    pub min_tasks: usize,
}

impl Scenario {
    /// A scenario from 1 task up, its ratio taken against the plain inserts of its kind:
    /// `plain_insert_one` for single-document calls, `plain_insert_many` for `insert_many`
    /// calls, `atomic_next` (an atomic add in the same call shape) for IDs allocated without an
    /// insert.
    pub const fn new(
        name: &'static str,
        batch: BatchSize,
        work: Work,
        run: fn(Run) -> BoxFuture<Result<Measured>>,
    ) -> Scenario {
        let baseline = match work {
            Work::Docs | Work::FewDocs => Some("plain_insert_one"),
            Work::Many => Some("plain_insert_many"),
            Work::Ids(_) => Some("atomic_next"),
        };
        Scenario {
            name,
            batch,
            work,
            baseline,
            run,
            min_tasks: 1,
        }
    }
}

/// The batch size of a scenario's model.
#[derive(Clone, Copy)]
pub enum BatchSize {
    /// No sequence, or one that reserves per call (`insert_many_with_ids`).
    None,
    Fixed(u64),
    /// `batch = 10..=10_000`: adaptive, from 10, doubled while ranges run out in less than
    /// 15 s, to 10,000.
    Adaptive,
}

impl BatchSize {
    /// The fixed size, as the `batch` of the JSON rows and the chart's x axis.
    pub fn number(self) -> Option<u64> {
        match self {
            BatchSize::Fixed(n) => Some(n),
            BatchSize::None | BatchSize::Adaptive => None,
        }
    }

    pub fn label(self) -> String {
        match self {
            BatchSize::None => "-".to_owned(),
            BatchSize::Fixed(n) => n.to_string(),
            BatchSize::Adaptive => "10..=10000".to_owned(),
        }
    }
}

/// How many operations a run does, from `--docs`.
#[derive(Clone, Copy)]
pub enum Work {
    /// `docs` single-document calls, times `tasks / 8` with more than 8 tasks (so that a run at
    /// 32 tasks lasts seconds too, not a fraction of one).
    Docs,
    /// `docs / 5` single-document calls at 1 task, where every call is a transaction of its
    /// own; at more tasks, whose calls share transactions, as many as [`Work::Docs`].
    FewDocs,
    /// `insert_many` calls of 1000 documents: `20 × docs` documents, times `tasks / 8` with more
    /// than 8 tasks.
    Many,
    /// `docs × min(batch, 200)` IDs.
    Ids(u64),
}

/// Calls per task of a run.
pub fn calls_per_task(work: Work, docs: u64, tasks: usize) -> u64 {
    let tasks = tasks as u64;
    let total = match work {
        Work::FewDocs if tasks == 1 => docs / 5,
        Work::Docs | Work::FewDocs => docs * (tasks / 8).max(1),
        Work::Many => 20 * docs / MANY * (tasks / 8).max(1),
        Work::Ids(batch) => docs * batch.min(200),
    };
    (total / tasks).max(1)
}

/// A client of the server at `uri`, and its pool size: [`POOL_SIZE`] connections unless the URI
/// sets `maxPoolSize`.
pub async fn connect(uri: &str) -> Result<(Client, u32)> {
    let mut options = ClientOptions::parse(uri).await?;
    let pool = *options.max_pool_size.get_or_insert(POOL_SIZE);
    Ok((Client::with_options(options)?, pool))
}

/// What a run of a scenario gets: its own database, the task count and the calls per task.
pub struct Run {
    pub db: Database,
    /// The server's URI, for the scenarios that start another process.
    pub uri: String,
    pub tasks: usize,
    pub calls_per_task: u64,
}

/// What a run measured.
pub struct Measured {
    /// Documents inserted or IDs allocated.
    pub ids: u64,
    pub elapsed: Duration,
    /// Latency of every call, in nanoseconds.
    pub latency: Histogram<u64>,
    /// Calls that waited for a counter round trip (`Stats::waits`), for the scenarios that take
    /// IDs one at a time from a sequence.
    pub waits: Option<u64>,
    /// The memory the process held at the end of the run (resident set), for the scenarios
    /// whose memory depends on what they number.
    pub rss_bytes: Option<u64>,
    /// The allocations of this process during the run (the bench's own timing included; for
    /// the scenarios of several processes, this process's share only).
    pub allocations: u64,
    /// What the server did during the measured part of the run, for the runs of the rate
    /// curves of `--scale` (see [`with_server_work`]) and of several processes.
    pub server: Option<ServerTotals>,
}

/// The resident set of this process (`VmRSS` of `/proc/self/status`), where there is one.
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Measured {
    /// A run of `ids` in `elapsed`, with the latencies of its calls, and nothing else known.
    pub fn new(ids: u64, elapsed: Duration, latency: Histogram<u64>) -> Measured {
        Measured {
            ids,
            elapsed,
            latency,
            waits: None,
            rss_bytes: None,
            allocations: 0,
            server: None,
        }
    }

    /// `total` (of the run) per ID of the run.
    pub fn per_id(&self, total: Option<u64>) -> Option<f64> {
        total.map(|t| t as f64 / self.ids.max(1) as f64)
    }

    /// Documents inserted or IDs allocated per second.
    pub fn ops_per_s(&self) -> f64 {
        self.ids as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency of a call at quantile `q`, in microseconds.
    pub fn latency_us(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q) as f64 / 1000.0
    }
}

/// Runs `call` `calls_per_task` times in each of `tasks` tasks, timing every call. `call(n)`
/// gets a number unique in the run and returns how many documents or IDs it handled.
pub fn drive<F, Fut>(tasks: usize, calls_per_task: u64, call: F) -> BoxFuture<Result<Measured>>
where
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<u64>> + Send + 'static,
{
    drive_holding(
        tasks,
        calls_per_task,
        || (),
        move |(), n| {
            let call = call(n);
            async move { Ok(((), call.await?)) }
        },
    )
}

/// [`drive`] for calls made with a handle their task holds, as an application holds its
/// collection handle: `hold()` makes each task's, which every call of the task takes and gives
/// back (moved, not cloned, so that the harness writes nothing shared per call).
pub fn drive_holding<H, M, F, Fut>(
    tasks: usize,
    calls_per_task: u64,
    hold: M,
    call: F,
) -> BoxFuture<Result<Measured>>
where
    H: Send + 'static,
    M: Fn() -> H + Send + 'static,
    F: Fn(H, u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<(H, u64)>> + Send + 'static,
{
    Box::pin(async move {
        let started = Instant::now();
        let handles: Vec<_> = (0..tasks as u64)
            .map(|task| {
                let call = call.clone();
                let mut held = hold();
                tokio::spawn(async move {
                    let mut latency = new_histogram();
                    let mut ids = 0;
                    for i in 0..calls_per_task {
                        let t = Instant::now();
                        let (back, n) = call(held, task * calls_per_task + i).await?;
                        held = back;
                        ids += n;
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
        Ok(Measured::new(ids, started.elapsed(), latency))
    })
}

/// A histogram of latencies in nanoseconds.
pub fn new_histogram() -> Histogram<u64> {
    // 1 ns to 10 min, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("valid histogram bounds")
}

/// `measured`, with the waits of `M`'s sequence in `coll`'s database (a fresh one per run).
pub fn with_waits<M: SequentialId>(
    coll: Collection<M>,
    measured: BoxFuture<Result<Measured>>,
) -> BoxFuture<Result<Measured>> {
    Box::pin(async move {
        let mut measured = measured.await?;
        measured.waits = Some(M::sequence(&coll).stats().waits);
        Ok(measured)
    })
}

// ---------------------------------------------------------------------------------------------
// Round trips, counted by the server.

/// What the server has done since it started (`serverStatus`, `top`): the work of a run is the
/// difference across it ([`ServerTotals::since`]).
#[derive(Clone, Copy, Debug)]
pub struct ServerTotals {
    /// The commands a counter round trip is made of: `findAndModify` (one reservation),
    /// `update` and `find` (a reservation of several counters at once, a gapless group's
    /// counter update), and the `insert` commands into counters collections (new counters of a
    /// round; `top`).
    pub counter_commands: u64,
    /// The server process's CPU time, user and system, in microseconds (`extra_info`), where
    /// its platform reports it (Linux does).
    pub cpu_us: Option<u64>,
    /// The times an operation met another's write to the same document and was retried
    /// (`metrics.operation.writeConflicts`), where the server reports them.
    pub write_conflicts: Option<u64>,
}

impl ServerTotals {
    /// The server's totals now.
    ///
    /// Counted on the server rather than with the driver's command monitoring: with a command
    /// event handler installed, the driver copies every command into an event document, which
    /// for an `insert_many` of 1000 documents took a third of the throughput away in a trial
    /// run.
    pub async fn read(client: &Client) -> Result<ServerTotals> {
        let admin = client.database("admin");
        let status = admin.run_command(doc! { "serverStatus": 1 }).await?;
        let commands = status.get_document("metrics")?.get_document("commands")?;
        let mut counter_commands = 0;
        for name in ["findAndModify", "update", "find"] {
            counter_commands += number(commands.get_document(name)?.get("total"))
                .ok_or_else(|| format!("unexpected {name} counter in serverStatus"))?;
        }
        let top = admin.run_command(doc! { "top": 1 }).await?;
        for (namespace, counts) in top.get_document("totals")? {
            if !namespace.ends_with(".counters") {
                continue;
            }
            let inserts = counts
                .as_document()
                .and_then(|c| c.get_document("insert").ok());
            counter_commands += inserts.and_then(|i| number(i.get("count"))).unwrap_or(0);
        }
        let extra = status.get_document("extra_info").ok();
        let cpu = |key| extra.and_then(|e| number(e.get(key)));
        let cpu_us = cpu("user_time_us")
            .zip(cpu("system_time_us"))
            .map(|(u, s)| u + s);
        let write_conflicts = status
            .get_document("metrics")?
            .get_document("operation")
            .ok()
            .and_then(|o| number(o.get("writeConflicts")));
        Ok(ServerTotals {
            counter_commands,
            cpu_us,
            write_conflicts,
        })
    }

    /// What the server did in two spans: these totals and `other`, added up.
    pub fn plus(self, other: ServerTotals) -> ServerTotals {
        ServerTotals {
            counter_commands: self.counter_commands + other.counter_commands,
            cpu_us: self.cpu_us.zip(other.cpu_us).map(|(a, b)| a + b),
            write_conflicts: self
                .write_conflicts
                .zip(other.write_conflicts)
                .map(|(a, b)| a + b),
        }
    }

    /// What the server did between `before` and these totals.
    pub fn since(self, before: ServerTotals) -> ServerTotals {
        ServerTotals {
            counter_commands: self.counter_commands - before.counter_commands,
            cpu_us: self
                .cpu_us
                .zip(before.cpu_us)
                .map(|(now, then)| now.saturating_sub(then)),
            write_conflicts: self
                .write_conflicts
                .zip(before.write_conflicts)
                .map(|(now, then)| now.saturating_sub(then)),
        }
    }
}

/// `run`, with what the server did while it ran in [`Measured::server`].
pub async fn with_server_work(
    client: &Client,
    run: impl Future<Output = Result<Measured>>,
) -> Result<Measured> {
    let before = ServerTotals::read(client).await?;
    let mut measured = run.await?;
    measured.server = Some(ServerTotals::read(client).await?.since(before));
    Ok(measured)
}

/// A count of `serverStatus` or `top`, of whichever numeric type the server chose.
fn number(value: Option<&Bson>) -> Option<u64> {
    match value? {
        Bson::Int64(n) => Some(*n as u64),
        Bson::Int32(n) => Some(*n as u64),
        Bson::Double(n) => Some(*n as u64),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Rounds and ratios.

/// The median of a scenario's rounds, at one task count.
pub struct Row {
    pub scenario: &'static str,
    pub batch: BatchSize,
    pub tasks: usize,
    pub ops_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub trips_per_id: f64,
    /// Calls that waited for a counter round trip, per ID.
    pub waits_per_id: Option<f64>,
    /// The most memory the process held at the end of a round, if the scenario measures it.
    pub rss_bytes: Option<u64>,
    /// Allocations of this process per ID, over the rounds.
    pub allocations_per_id: f64,
    /// The server's CPU time per ID in microseconds, median of the rounds (where the server
    /// reports its CPU time).
    pub server_us_per_id: Option<f64>,
    /// Median over the rounds of the throughput over the baseline's in the same round.
    pub ratio: Option<f64>,
}

#[derive(Default)]
pub struct Rounds {
    ops_per_s: Vec<f64>,
    p50_us: Vec<f64>,
    p99_us: Vec<f64>,
    ids: u64,
    trips: u64,
    /// The server's CPU µs per ID of each round (where the server reports its CPU time).
    server_us: Vec<f64>,
    /// Waits over the rounds, if the scenario counts them.
    waits: Option<u64>,
    /// The most memory held at the end of a round, if the scenario measures it.
    rss_bytes: Option<u64>,
    allocations: u64,
}

impl Rounds {
    /// Adds a round: what it measured and what the server did meanwhile.
    pub fn record(&mut self, measured: &Measured, work: ServerTotals) {
        self.ops_per_s.push(measured.ops_per_s());
        self.p50_us.push(measured.latency_us(0.50));
        self.p99_us.push(measured.latency_us(0.99));
        self.ids += measured.ids;
        self.trips += work.counter_commands;
        self.server_us.extend(measured.per_id(work.cpu_us));
        self.allocations += measured.allocations;
        if let Some(w) = measured.waits {
            *self.waits.get_or_insert(0) += w;
        }
        if let Some(rss) = measured.rss_bytes {
            self.rss_bytes = Some(self.rss_bytes.map_or(rss, |r| r.max(rss)));
        }
    }
}

/// The median of `values` (NaN if there are none).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The median of `values`, if there are any.
pub fn median_of_some(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median(values))
}

/// The rows of the table: `results[s][t]` holds the rounds of `scenarios[s]` at `TASKS[t]`.
pub fn rows(scenarios: &[Scenario], results: &[Vec<Rounds>]) -> Vec<Row> {
    // Each round's throughput of every scenario, to pair a scenario with its baseline round by
    // round (both ran minutes apart at most, so a slower phase of the machine hits both).
    let mut per_round: HashMap<(&str, usize), &[f64]> = HashMap::new();
    for (s, per_tasks) in scenarios.iter().zip(results) {
        for (&tasks, r) in TASKS.iter().zip(per_tasks) {
            per_round.insert((s.name, tasks), &r.ops_per_s);
        }
    }
    let mut rows = Vec::new();
    for (s, per_tasks) in scenarios.iter().zip(results) {
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
                trips_per_id: r.trips as f64 / r.ids.max(1) as f64,
                waits_per_id: r.waits.map(|w| w as f64 / r.ids.max(1) as f64),
                rss_bytes: r.rss_bytes,
                allocations_per_id: r.allocations as f64 / r.ids.max(1) as f64,
                server_us_per_id: median_of_some(&r.server_us),
                ratio,
            });
        }
    }
    rows
}
