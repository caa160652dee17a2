//! `--scale`: how each mode bends as the work grows, as ratios to plain inserts measured side by
//! side in the same run. Four curves:
//!
//! - **processes**: 1 to 16 processes of 8 tasks each, every mode (plain `insert_one`, batch 1,
//!   batch 25, gapless, proxy) from all of them at once on one counter;
//! - **tasks**: 1 to 1024 tasks in one process, the same modes;
//! - **scope values**: the memory a process holds after taking IDs of a scoped model over 10 to
//!   1,000,000 scope values, and the time it took;
//! - **counters**: `insert_with_id` at batch 1 and 25 against plain inserts, with 1,000 to
//!   1,000,000 other counter documents in the counters collection, and that collection's size.
//!
//! In the processes and tasks curves, the processes of a round start once, on a fresh database
//! dropped after, warm up for every mode (one call per task, not measured: their first
//! connections and reservations), then alternate between the modes in slices of time (see
//! `rates`): every task inserts without a pause, each call in the mode of the slice it starts
//! in, each mode into a collection of its own, for at least 4 seconds per mode. In the counters
//! curve, the runs of a round share one database, filled with the counters first, and each
//! mode inserts `--docs` documents into a collection of its own, once per round. The modes'
//! order is reversed from round to round. A ratio is a mode's throughput over the plain
//! inserts' of the same point in the same round, median of the rounds. The memory curve runs
//! each point once.
//!
//! `--mode NAME` keeps only plain inserts and the modes named in the rate curves (see
//! [`Bench::modes`]).
//!
//! `--curve NAME` runs only the curves named (see [`Curve`]): the others are left empty, out of
//! the table, empty arrays in the JSON and blank panels in the chart.

mod chart;
mod counters;
mod rates;
mod report;
mod scopes;

pub use chart::chart;
pub use report::{json, table};

use std::time::Instant;

use mongodb::{Client, Database};
use sequence_testkit::unique_db_name;

use crate::measure::{median, median_of_some, Measured, Result};
use crate::scenarios::{Model, COLL};

/// A curve of `--scale`, as `--curve` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    /// The rate curve against processes of 8 tasks each.
    Processes,
    /// The rate curve against tasks in one process.
    Tasks,
    /// The memory curve against scope values.
    Scopes,
    /// The rate curve against counters in the collection, with the collection's size.
    Counters,
}

impl Curve {
    /// The four curves, in the order they run (and of the table, the JSON and the chart).
    pub const ALL: [Curve; 4] = [
        Curve::Processes,
        Curve::Tasks,
        Curve::Scopes,
        Curve::Counters,
    ];

    /// The curve's name for `--curve`.
    pub fn name(self) -> &'static str {
        match self {
            Curve::Processes => "processes",
            Curve::Tasks => "tasks",
            Curve::Scopes => "scopes",
            Curve::Counters => "counters",
        }
    }

    /// The curve `--curve` names `name`, if any.
    pub fn named(name: &str) -> Option<Curve> {
        Curve::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// What every curve needs: the client, the server and how much work a run does.
pub struct Bench {
    pub client: Client,
    /// The server's URI, for the workers of the processes curve.
    pub uri: String,
    /// The connection pool of `client`.
    pub pool: u32,
    pub rounds: usize,
    /// Documents per run of the counters curve.
    pub docs: u64,
    /// Smaller curves: a smoke run, not a measurement.
    pub quick: bool,
    /// The curves to run; the others are left empty.
    pub curves: Vec<Curve>,
    /// The modes of the rate curves to run besides plain inserts (all if empty).
    pub modes: Vec<Model>,
}

impl Bench {
    /// The modes of `all` (plain first) this run measures: plain, and those of
    /// [`modes`](Self::modes) if any are named.
    fn modes_of(&self, all: &[Model]) -> Vec<Model> {
        all.iter()
            .copied()
            .filter(|&m| m == Model::Plain || self.modes.is_empty() || self.modes.contains(&m))
            .collect()
    }
}

/// The four curves, as measured; those that did not run are empty.
pub struct Curves {
    pub rounds: usize,
    pub docs: u64,
    pub pool: u32,
    /// The curves that ran, in the order of [`Curve::ALL`].
    pub ran: Vec<Curve>,
    /// Against the number of processes (`point`), 8 tasks each.
    pub processes: Vec<RateRow>,
    /// Against the number of tasks in one process (`point`).
    pub tasks: Vec<RateRow>,
    pub scopes: Vec<scopes::MemoryRow>,
    /// Against the number of counter documents in the collection (`point`).
    pub counters: Vec<RateRow>,
    /// The counters collection's size at each point of [`Curves::counters`].
    pub collections: Vec<counters::CollectionSize>,
}

/// One mode at one point of a rate curve: the medians of its rounds.
pub struct RateRow {
    /// The curve's x: processes, tasks or counter documents.
    pub point: u64,
    /// Tasks in all, over every process.
    pub tasks: usize,
    pub model: Model,
    /// Documents inserted in a round (the last one's): per run in the counters curve, the
    /// calls started in the mode's slices in the processes and tasks curves.
    pub docs: u64,
    pub docs_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    /// Median over the rounds of the throughput over plain's in the same round.
    pub ratio: f64,
    /// Median over the rounds of the server's CPU time per document, in microseconds (where
    /// the server reports its CPU time).
    pub server_us_per_doc: Option<f64>,
    /// Median over the rounds of the counter round trips per document.
    pub trips_per_doc: Option<f64>,
}

/// Runs the curves of `bench.curves`, in the order of [`Curve::ALL`], with progress lines on
/// stderr; the others are left empty.
pub async fn run(bench: &Bench) -> Result<Curves> {
    let started = Instant::now();
    let ran: Vec<Curve> = Curve::ALL
        .into_iter()
        .filter(|c| bench.curves.contains(c))
        .collect();
    let mut processes = Vec::new();
    let mut tasks = Vec::new();
    let mut scopes = Vec::new();
    let (mut counters, mut collections) = (Vec::new(), Vec::new());
    for &curve in &ran {
        match curve {
            Curve::Processes => processes = rates::against_processes(bench).await?,
            Curve::Tasks => tasks = rates::against_tasks(bench).await?,
            Curve::Scopes => scopes = scopes::curve(bench).await?,
            Curve::Counters => (counters, collections) = counters::curve(bench).await?,
        }
    }
    let names: Vec<&str> = ran.iter().map(|c| c.name()).collect();
    eprintln!(
        "scale: the curves {} took {:.0} s",
        names.join(", "),
        started.elapsed().as_secs_f64()
    );
    Ok(Curves {
        rounds: bench.rounds,
        docs: bench.docs,
        pool: bench.pool,
        ran,
        processes,
        tasks,
        scopes,
        counters,
        collections,
    })
}

/// The modes in the order of `round`: as given in even rounds, reversed in odd ones, so that
/// no mode always runs first.
fn in_order(modes: &[Model], round: usize) -> Vec<Model> {
    let mut order = modes.to_vec();
    if round % 2 == 1 {
        order.reverse();
    }
    order
}

/// A fresh database named after `curve`, with the documents' and the counters' collections
/// created (so that creating them is not measured).
async fn fresh_db(client: &Client, curve: &str) -> Result<Database> {
    let db = client.database(&unique_db_name(&format!("scale_{curve}")));
    db.create_collection(COLL).await?;
    db.create_collection("counters").await?;
    Ok(db)
}

/// The line of one run, on stderr as the runs go: `at` names the point.
fn progress(at: &str, round: usize, rounds: usize, model: Model, measured: &Measured) {
    let server = measured.server;
    let server_us = measured
        .per_id(server.and_then(|w| w.cpu_us))
        .map_or("-".to_owned(), |us| format!("{us:.0}"));
    let trips = measured
        .per_id(server.map(|w| w.counter_commands))
        .map_or("-".to_owned(), |t| format!("{t:.3}"));
    let conflicts = measured
        .per_id(server.and_then(|w| w.write_conflicts))
        .map_or("-".to_owned(), |c| format!("{c:.4}"));
    eprintln!(
        "scale: {at}, round {}/{rounds}: {:<8} {:>6} docs: {:>8.0} docs/s, latency µs p50 {:.1} \
         p99 {:.1}, {:.2} s, server µs/doc {server_us}, trips/doc {trips}, write conflicts/doc \
         {conflicts}",
        round + 1,
        model.name(),
        measured.ids,
        measured.ops_per_s(),
        measured.latency_us(0.50),
        measured.latency_us(0.99),
        measured.elapsed.as_secs_f64(),
    );
}

/// The rounds of one point of a rate curve: what each mode measured in each round.
struct Samples {
    /// The modes, plain first (the baseline).
    modes: Vec<Model>,
    /// `ops[m][r]`: docs/s of `modes[m]` in round `r`.
    ops: Vec<Vec<f64>>,
    p50_us: Vec<Vec<f64>>,
    p99_us: Vec<Vec<f64>>,
    /// `server_us[m][r]`: the server's CPU µs per document (rounds where the server reports
    /// its CPU time).
    server_us: Vec<Vec<f64>>,
    /// `trips[m][r]`: counter round trips per document.
    trips: Vec<Vec<f64>>,
    /// Documents per run of each mode.
    docs: Vec<u64>,
}

impl Samples {
    fn new(modes: Vec<Model>) -> Samples {
        debug_assert_eq!(modes.first(), Some(&Model::Plain));
        let per_mode = || vec![Vec::new(); modes.len()];
        Samples {
            ops: per_mode(),
            p50_us: per_mode(),
            p99_us: per_mode(),
            server_us: per_mode(),
            trips: per_mode(),
            docs: vec![0; modes.len()],
            modes,
        }
    }

    /// Adds the run of `model` in the current round.
    fn record(&mut self, model: Model, measured: &Measured) {
        let m = self
            .modes
            .iter()
            .position(|&x| x == model)
            .expect("a mode of the point");
        self.ops[m].push(measured.ops_per_s());
        self.p50_us[m].push(measured.latency_us(0.50));
        self.p99_us[m].push(measured.latency_us(0.99));
        let server = measured.server;
        self.server_us[m].extend(measured.per_id(server.and_then(|w| w.cpu_us)));
        self.trips[m].extend(measured.per_id(server.map(|w| w.counter_commands)));
        self.docs[m] = measured.ids;
    }

    /// The rows of the point `point` at `tasks` tasks, one per mode.
    fn rows(&self, point: u64, tasks: usize) -> Vec<RateRow> {
        let plain = &self.ops[0];
        self.modes
            .iter()
            .enumerate()
            .map(|(m, &model)| {
                let ratios: Vec<f64> = self.ops[m].iter().zip(plain).map(|(x, b)| x / b).collect();
                RateRow {
                    point,
                    tasks,
                    model,
                    docs: self.docs[m],
                    docs_per_s: median(&self.ops[m]),
                    p50_us: median(&self.p50_us[m]),
                    p99_us: median(&self.p99_us[m]),
                    ratio: median(&ratios),
                    server_us_per_doc: median_of_some(&self.server_us[m]),
                    trips_per_doc: median_of_some(&self.trips[m]),
                }
            })
            .collect()
    }
}
