//! What a sequential ID costs over MongoDB's own ObjectId inserts, measured in one run against
//! one server, as ratios.
//!
//! ```sh
//! cargo run --release --example bench                  # table on stdout
//! cargo run --release --example bench -- --json        # one JSON object on stdout
//! cargo run --release --example bench -- --chart docs/bench.svg
//! cargo run --example bench -- --quick                 # small counts: a smoke run, not a measurement
//! cargo run --release --example bench -- --render       # formatted IDs rendered alone, no server
//! cargo run --release --example bench -- --scale [--quick] [--rounds N] [--json] [--chart docs/scale.svg]
//! cargo run --release --example bench -- --scale --curve tasks --curve counters   # those two only
//! cargo run --release --example bench -- --scale --curve processes --mode batch25  # plain and batch 25
//! ```
//!
//! Uses `MONGODB_URI` if set, otherwise starts a throw-away single-node replica set (like the
//! quickstart). Every scenario runs at 1 and 32 concurrent tasks on a fresh database (so a fresh
//! collection and a fresh counter), all scenarios one after the other in each round, for several
//! rounds (every other round in reverse order); the table shows the median of the rounds. All
//! scenarios share one client, with a pool of 64 connections unless the URI sets `maxPoolSize`
//! (the driver's default of 10 would queue 32 tasks). The counter round trips of a run are the
//! `findAndModify`, `update` and `find` commands the server ran meanwhile (from
//! `serverStatus`; the scenarios send no others of those kinds) and the `insert` commands into
//! collections named `counters` (from `top`), so with `MONGODB_URI` they are
//! only right when nothing else sends such commands to that deployment during the run. The waits of a run are the calls that waited for a counter round trip
//! (`Stats::waits` of the run's sequence). The server's CPU time of a run is the user and
//! system time `serverStatus` reports in `extra_info` (on Linux), likewise a difference across
//! the run, and with `MONGODB_URI` likewise only right for a deployment nothing else uses.
//! The progress lines of `--scale` also show the write conflicts per document
//! (`metrics.operation.writeConflicts`: writes that met another's write to the same document,
//! such as two processes' reservations from one counter, and were retried), the same way.
//!
//! Throughput is in documents inserted (or IDs allocated, for `next_id` and `atomic_next`) per
//! second; latencies are per call (for the `insert_many` scenarios, per call of 1000
//! documents). The `next_id` rows' ratio is to `atomic_next`, an `AtomicI64::fetch_add` shared
//! by the tasks and called in the same shape: the least that handing out a value can cost.
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
//!
//! `--scale` measures instead how each mode (plain `insert_one`, batch 1, batch 25, gapless,
//! proxy) bends as the work grows, as ratios to plain inserts run side by side: against 1 to
//! 16 processes, against 1 to 1024 tasks in one process, the memory held against 10 to
//! 1,000,000 scope values, and against 1,000 to 1,000,000 counters in the counters collection
//! (see the module `scale`). A run took 30 minutes on a 2-vCPU machine, 13 of them at
//! 1,000,000 scope values; with `--quick`, under a minute. `--curve NAME` (repeatable; `processes`,
//! `tasks`, `scopes` or `counters`) runs only the curves named, all four by default: the others
//! are left out of the table, empty arrays in the JSON and blank panels in the chart. `--mode
//! NAME` (repeatable; `batch1`, `batch25`, `gapless` or `proxy`) runs only plain inserts and the
//! modes named in the rate curves, so that each mode alternates with plain inserts alone; with
//! more rounds, this is how a ratio near a target is decided. In the processes and tasks
//! curves, the processes of a round warm up once for every mode (one call per task, not
//! measured: connections opened, the sequence's first reservation made), then every task
//! inserts without a pause for at least 4 seconds per mode, each call in the mode of the slice
//! of time it starts in (`A B B A …`, slices of 250 ms, or 8 ms per task if longer): the modes
//! share the machine's drift down to a slice.

mod alloc;
mod measure;
mod plot;
mod render;
mod report;
mod scale;
mod scenarios;

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

use std::path::PathBuf;
use std::time::Duration;

use mongodb::bson::doc;
use sequence_testkit::{unique_db_name, TestServer};

use measure::{calls_per_task, connect, rows, Result, Rounds, Run, ServerTotals, TASKS};
use scenarios::{plain_insert_one, worker, Model, COLL, SCENARIOS, WORKER};

struct Options {
    quick: bool,
    render: bool,
    /// The curves of `--scale` instead of the scenarios.
    scale: bool,
    rounds: usize,
    docs: u64,
    json: bool,
    chart: Option<PathBuf>,
    /// Scenario names to run (all if empty).
    only: Vec<String>,
    /// The curves of `--scale` to run (all four if none is given).
    curves: Vec<scale::Curve>,
    /// The modes of `--scale`'s rate curves to run besides plain (all if none is given).
    modes: Vec<Model>,
}

const USAGE: &str = "\
usage: bench [--quick] [--render] [--rounds N] [--docs N] [--json] [--chart PATH] [--only SCENARIO]...
       bench --scale [--quick] [--rounds N] [--docs N] [--json] [--chart PATH] [--curve NAME]...
                     [--mode NAME]...

  --quick        small counts and one round: a smoke run, not a measurement
  --render       time the rendering of the formatted models' IDs alone (no server) and exit
  --scale        how each mode bends as the work grows, as ratios to plain inserts run side
                 by side: against processes (1 to 16, 8 tasks each), tasks in one process
                 (1 to 1024), scope values (memory held, 10 to 1,000,000) and counters in the
                 collection (1,000 to 1,000,000); --quick stops at 10,000 of the last two
  --curve NAME   with --scale, run only the curve NAME (repeatable): processes, tasks,
                 scopes or counters (default all four); the others stay out of the table,
                 empty in the JSON and blank in the chart
  --mode NAME    with --scale, run only plain inserts and the mode NAME (repeatable) in the
                 rate curves: batch1, batch25, gapless or proxy (default all), so that the
                 runs compared follow each other closely
  --rounds N     rounds of every scenario (with --scale: of every mode at every point); the
                 table shows the median (default 3)
  --docs N       documents per run of the insert_one scenarios at 1 task (default 10000);
                 insert_many runs insert 20N; both 4 times as many at 32 tasks; gapless
                 runs at 1 task insert N/5; next_id runs allocate N x min(batch, 200) IDs;
                 with --scale, documents per run of the counters curve (the
                 processes and tasks curves run for a time)
  --json         print one JSON object on stdout (everything else goes to stderr)
  --chart PATH   write an SVG chart of IDs/s against batch size to PATH (with --scale: a
                 panel per curve, e.g. docs/scale.svg)
  --only NAME    run only the scenario NAME (repeatable), e.g. --only atomic_next --only
                 next_id (a ratio needs its baseline run too); built with --features metrics,
                 also insert_with_id_metrics and next_id_metrics";

fn parse_args() -> Result<Options, lexopt::Error> {
    use lexopt::prelude::*;
    let mut options = Options {
        quick: false,
        render: false,
        scale: false,
        rounds: 3,
        docs: 10_000,
        json: false,
        chart: None,
        only: Vec::new(),
        curves: Vec::new(),
        modes: Vec::new(),
    };
    let (mut rounds, mut docs) = (None, None);
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("quick") => options.quick = true,
            Long("render") => options.render = true,
            Long("scale") => options.scale = true,
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
            Long("curve") => {
                let name = parser.value()?.string()?;
                let Some(curve) = scale::Curve::named(&name) else {
                    let names: Vec<&str> = scale::Curve::ALL.iter().map(|c| c.name()).collect();
                    return Err(
                        format!("unknown curve `{name}`: one of {}", names.join(", ")).into(),
                    );
                };
                if !options.curves.contains(&curve) {
                    options.curves.push(curve);
                }
            }
            Long("mode") => {
                let name = parser.value()?.string()?;
                match Model::named(&name) {
                    Ok(model) if model != Model::Plain => {
                        if !options.modes.contains(&model) {
                            options.modes.push(model);
                        }
                    }
                    _ => {
                        let modes = Model::ALL.into_iter().filter(|&m| m != Model::Plain);
                        let names: Vec<&str> = modes.map(Model::name).collect();
                        return Err(
                            format!("unknown mode `{name}`: one of {}", names.join(", ")).into(),
                        );
                    }
                }
            }
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if options.scale && (options.render || !options.only.is_empty()) {
        return Err(String::from("--scale takes neither --render nor --only").into());
    }
    if !options.scale && !options.curves.is_empty() {
        return Err(String::from("--curve needs --scale").into());
    }
    if !options.scale && !options.modes.is_empty() {
        return Err(String::from("--mode needs --scale").into());
    }
    if options.curves.is_empty() {
        options.curves = scale::Curve::ALL.to_vec();
    }
    if options.quick {
        options.rounds = 1;
        options.docs = 200;
    }
    options.rounds = rounds.unwrap_or(options.rounds).max(1);
    options.docs = docs.unwrap_or(options.docs).max(1);
    Ok(options)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(WORKER) {
        return worker(&args[1..]).await;
    }
    let options = match parse_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("bench: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    if options.render {
        return render::report();
    }
    // In JSON mode stdout carries the JSON object only.
    let say = |line: &str| eprintln!("{line}");

    let server = tokio::task::spawn_blocking(TestServer::shared).await??;
    // 32 tasks should mean 32 operations in flight, plus the background prefetch: the driver's
    // default pool of 10 connections would queue them. A `maxPoolSize` in the URI wins.
    let (client, pool) = connect(server.uri()).await?;
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

    if options.scale {
        let curves = scale::run(&scale::Bench {
            client: client.clone(),
            uri: server.uri().to_owned(),
            pool,
            rounds: options.rounds,
            docs: options.docs,
            quick: options.quick,
            curves: options.curves.clone(),
            modes: options.modes.clone(),
        })
        .await?;
        let table = scale::table(&curves);
        if options.json {
            eprint!("{table}");
            println!("{}", scale::json(&version, &curves));
        } else {
            print!("{table}");
        }
        if let Some(path) = &options.chart {
            scale::chart(path, &version, &curves)?;
            say(&format!("bench: chart written to {}", path.display()));
        }
        return Ok(());
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
            let before = ServerTotals::read(&client).await?;
            let allocations_before = alloc::allocations();
            let mut measured = (scenario.run)(Run {
                db: db.clone(),
                uri: server.uri().to_owned(),
                tasks,
                calls_per_task: calls_per_task(scenario.work, options.docs, tasks),
            })
            .await?;
            measured.allocations = alloc::allocations() - allocations_before;
            // A prefetch may still be on its way: let it land before counting round trips.
            tokio::time::sleep(Duration::from_millis(100)).await;
            let work = ServerTotals::read(&client).await?.since(before);
            db.drop().await?;

            say(&report::progress(
                round,
                options.rounds,
                scenario,
                tasks,
                &measured,
                work,
            ));
            results[s][t].record(&measured, work);
        }
        order.reverse();
    }

    let rows = rows(SCENARIOS, &results);
    let table = report::table(&rows);
    if options.json {
        eprint!("{table}");
        println!("{}", report::json(&version, &rows));
    } else {
        print!("{table}");
    }
    if let Some(path) = &options.chart {
        report::chart(path, &version, &rows)?;
        say(&format!("bench: chart written to {}", path.display()));
    }
    Ok(())
}
