//! The report: a line per run as the runs go, the table of the medians, the JSON object, and the
//! chart of IDs per second against batch size.

use crate::measure::{Measured, Result, Row, Scenario, ServerTotals};
use crate::plot;

/// The line of one run, on stderr as the rounds go.
pub fn progress(
    round: usize,
    rounds: usize,
    scenario: &Scenario,
    tasks: usize,
    measured: &Measured,
    work: ServerTotals,
) -> String {
    let server_us = measured
        .per_id(work.cpu_us)
        .map_or("-".to_owned(), |us| format!("{us:.0}"));
    format!(
        "round {}/{}: {:<25} batch {:>4} tasks {:>2}: {:>9.0} ops/s, latency µs p50 {:.1} \
         p99 {:.1} p99.9 {:.1} max {:.1}; {} IDs, {} round trips, {} waits, {} allocations, \
         server µs/ID {server_us}, {:.2} s{}",
        round + 1,
        rounds,
        scenario.name,
        scenario.batch.label(),
        tasks,
        measured.ops_per_s(),
        measured.latency_us(0.50),
        measured.latency_us(0.99),
        measured.latency_us(0.999),
        measured.latency.max() as f64 / 1000.0,
        measured.ids,
        work.counter_commands,
        measured.waits.map_or("-".to_owned(), |w| w.to_string()),
        measured.allocations,
        measured.elapsed.as_secs_f64(),
        measured.rss_bytes.map_or(String::new(), |b| format!(
            ", {:.1} MiB held",
            b as f64 / 1048576.0
        )),
    )
}

/// What the columns of the table mean.
const NOTE: &str = "\
ops/s: documents inserted (next_id, atomic_next: IDs allocated) per second. p50/p99: latency of one call
(insert_many: of 1000 documents). trips/ID: counter round trips (findAndModify, update,
find, insert into counters) per ID. waits/ID: calls that waited for a counter round trip
(Stats::waits), per ID; with a batch, above 1/batch means callers outran the prefetch.
allocs/ID: allocations of this process per ID (per document inserted), the bench's own timing
included. srv µs/ID: the server's CPU time (user and system) per ID over the run, median of the
rounds.
ratio: ops/s over plain_insert_one's at the same task count in the same round, median of the
rounds; for insert_many_with_ids and plain_insert_many, over plain_insert_many's; for the
next_id rows, over atomic_next's (an atomic add in the same call shape: the floor).
";

pub fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<26} {:>6} {:>6} {:>12} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
        "scenario",
        "batch",
        "tasks",
        "ops/s",
        "p50 µs",
        "p99 µs",
        "trips/ID",
        "waits/ID",
        "allocs/ID",
        "srv µs/ID",
        "ratio"
    );
    for r in rows {
        let batch = r.batch.label();
        let ratio = r.ratio.map_or("-".to_owned(), |x| format!("{x:.3}"));
        let waits = r.waits_per_id.map_or("-".to_owned(), |x| format!("{x:.3}"));
        let server = r
            .server_us_per_id
            .map_or("-".to_owned(), |x| format!("{x:.1}"));
        out += &format!(
            "{:<26} {:>6} {:>6} {:>12.0} {:>10.1} {:>10.1} {:>9.3} {:>9} {:>9.1} {server:>9} {:>7}\n",
            r.scenario,
            batch,
            r.tasks,
            r.ops_per_s,
            r.p50_us,
            r.p99_us,
            r.trips_per_id,
            waits,
            r.allocations_per_id,
            ratio
        );
    }
    out += NOTE;
    for r in rows {
        if let Some(rss) = r.rss_bytes {
            out += &format!(
                "memory held at the end: {} at {} tasks: {:.1} MiB\n",
                r.scenario,
                r.tasks,
                rss as f64 / 1048576.0
            );
        }
    }
    out
}

pub fn json(server: &str, rows: &[Row]) -> serde_json::Value {
    serde_json::json!({
        "server": server,
        "rows": rows.iter().map(|r| serde_json::json!({
            "scenario": r.scenario,
            "batch": r.batch.number(),
            "tasks": r.tasks,
            "ops_per_s": round1(r.ops_per_s),
            "p50_us": round1(r.p50_us),
            "p99_us": round1(r.p99_us),
            "trips_per_id": round3(r.trips_per_id),
            // Its name before, for the scripts that compare with older runs.
            "round_trips_per_id": round3(r.trips_per_id),
            "waits_per_id": r.waits_per_id.map(round3),
            "ratio": r.ratio.map(round3),
            "rss_bytes": r.rss_bytes,
            "allocations_per_id": round1(r.allocations_per_id),
            "server_us_per_id": r.server_us_per_id.map(round1),
        })).collect::<Vec<_>>(),
    })
}

/// `x` to one decimal.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `x` to three decimals.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// IDs/s against batch size: `next_id` and `insert_with_id`, at each task count, with
/// `plain_insert_one` for reference.
pub fn chart(path: &std::path::Path, server: &str, rows: &[Row]) -> Result<()> {
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
    plot::mesh(
        &mut chart,
        "batch size (IDs reserved per counter round trip)",
        "IDs per second",
    )
    .y_label_formatter(&|y| format_rate(*y))
    .draw()?;

    let lines = [
        ("next_id", 32, RGBColor(0xd6, 0x27, 0x28)),
        ("next_id", 1, RGBColor(0xff, 0x98, 0x96)),
        ("insert_with_id", 32, RGBColor(0x1f, 0x77, 0xb4)),
        ("insert_with_id", 1, RGBColor(0x9e, 0xc7, 0xe9)),
    ];
    for (scenario, tasks, color) in lines {
        let label = format!("{scenario}, {}", tasks_label(tasks));
        plot::line(&mut chart, &label, series(scenario, tasks), color, 4)?;
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
        let label = format!("plain_insert_one (ObjectId), {}", tasks_label(tasks));
        plot::level(&mut chart, plain.ops_per_s, &label, color)?;
    }
    plot::labels(&mut chart)?;
    root.present()?;
    Ok(())
}

/// `1 task`, `32 tasks`.
fn tasks_label(tasks: usize) -> String {
    format!("{tasks} task{}", if tasks == 1 { "" } else { "s" })
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
