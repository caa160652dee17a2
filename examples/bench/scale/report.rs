//! The report of `--scale`: a table per curve with what its columns mean, and the JSON object.

use crate::report::{round1, round3};

use super::counters::CollectionSize;
use super::scopes::{mib, MemoryRow};
use super::{Curve, Curves, RateRow};

/// The tables of the curves that ran, each followed by what it shows, and what the columns of
/// the rate curves mean.
pub fn table(curves: &Curves) -> String {
    let mut out = format!(
        "scale: {} round(s), pool of {} connections; the counters curve inserts {} docs per run\n\n",
        curves.rounds, curves.pool, curves.docs
    );
    for curve in &curves.ran {
        out += &match curve {
            Curve::Processes => processes_section(curves),
            Curve::Tasks => tasks_section(curves),
            Curve::Scopes => memory_table(&curves.scopes),
            Curve::Counters => counters_section(curves),
        };
        out += "\n";
    }
    out += "\
docs: documents a mode inserted in its round (in the processes and tasks curves, the calls
started in its slices; the last round's). docs/s: documents inserted per second, median of
the rounds. p50/p99: latency of one insert. ratio: docs/s over plain's at the same point in
the same round, median of the rounds. srv µs/doc: the server's CPU time (user and system) per
document over the mode's runs or slices (after the warm-up), median of the rounds.
trips/doc: counter round trips per document, the same way.
";
    out
}

/// The processes curve's table and what it shows.
fn processes_section(curves: &Curves) -> String {
    rate_table("processes", &curves.processes)
        + "\
processes: every mode from that many processes at once (this one and the bench started again
as workers), 8 tasks each, all on one counter, the modes alternating in slices of time.
"
}

/// The tasks curve's table and what it shows.
fn tasks_section(curves: &Curves) -> String {
    rate_table("tasks", &curves.tasks)
        + &format!(
            "\
tasks: every mode from that many tasks in this process, the modes alternating in slices of
time. The client's pool has {} connections:
above that many tasks the calls queue for a connection, plain and sequenced inserts alike.
",
            curves.pool
        )
}

/// The counters curve's tables (the rates, then the collection's size) and what they show.
fn counters_section(curves: &Curves) -> String {
    rate_table("counters", &curves.counters)
        + &collection_table(&curves.collections)
        + "\
counters: every mode at 8 tasks with that many other counter documents (shaped like the
runtime's) in the counters collection, filled anew each round; batch1 takes a counter round
trip per document. size: the counters' bytes, uncompressed; on disk: their bytes on disk;
index: the indexes' bytes on disk ($collStats, after a checkpoint).
"
}

/// The table of a rate curve whose x is named `point`; with a column of the tasks in all
/// unless the x is the tasks.
fn rate_table(point: &str, rows: &[RateRow]) -> String {
    let tasks = |t: &dyn std::fmt::Display| {
        if point == "tasks" {
            String::new()
        } else {
            format!(" {t:>6}")
        }
    };
    let mut out = format!(
        "{point:>10}{} {:<8} {:>7} {:>10} {:>10} {:>10} {:>7} {:>10} {:>9}\n",
        tasks(&"tasks"),
        "mode",
        "docs",
        "docs/s",
        "p50 µs",
        "p99 µs",
        "ratio",
        "srv µs/doc",
        "trips/doc"
    );
    for r in rows {
        let server = r
            .server_us_per_doc
            .map_or("-".to_owned(), |us| format!("{us:.0}"));
        let trips = r
            .trips_per_doc
            .map_or("-".to_owned(), |t| format!("{t:.3}"));
        out += &format!(
            "{:>10}{} {:<8} {:>7} {:>10.0} {:>10.1} {:>10.1} {:>7.3} {server:>10} {trips:>9}\n",
            r.point,
            tasks(&r.tasks),
            r.model.name(),
            r.docs,
            r.docs_per_s,
            r.p50_us,
            r.p99_us,
            r.ratio,
        );
    }
    out
}

fn memory_table(rows: &[MemoryRow]) -> String {
    let mut out = format!(
        "{:>12} {:>9} {:>9} {:>12} {:>12} {:>12} {:>12}\n",
        "scope values", "1st s", "2nd s", "reservations", "heap MiB", "after MiB", "rss MiB"
    );
    for r in rows {
        out += &format!(
            "{:>12} {:>9.2} {:>9.2} {:>12} {:>12.2} {:>12.2} {:>12}\n",
            r.scope_values,
            r.first_pass.as_secs_f64(),
            r.second_pass.as_secs_f64(),
            r.reservations,
            mib(r.heap_held),
            mib(r.heap_after),
            r.rss_held
                .map_or("-".to_owned(), |b| format!("{:.1}", mib(b)))
        );
    }
    out += "\
scope values: a scoped model (batch 25) takes an ID for each value from 64 tasks (1st: every
call a value's first, which waits for a counter round trip, shared with the first values
called meanwhile), then again for each (2nd), in a fresh database; one run per point.
reservations: counter round trips that reserved values, both passes. heap: live heap bytes
after the second pass, above the level before the first point (rss: the same of the resident
set, the allocator's free memory given back first); after: once the sequence released its
caches and the database was dropped, what the point leaves to the next ones. The runtime
remembers at most 4,096 scope values per sequence.
";
    out
}

fn collection_table(sizes: &[CollectionSize]) -> String {
    let mut out = format!(
        "{:>10} {:>12} {:>12} {:>12}\n",
        "counters", "size MiB", "on disk MiB", "index MiB"
    );
    for s in sizes {
        out += &format!(
            "{:>10} {:>12.2} {:>12.2} {:>12.2}\n",
            s.counters,
            mib(s.size as i64),
            mib(s.storage_size as i64),
            mib(s.total_index_size as i64)
        );
    }
    out
}

/// The curves as one JSON object, every row an object of named values.
pub fn json(server: &str, curves: &Curves) -> serde_json::Value {
    serde_json::json!({
        "server": server,
        "rounds": curves.rounds,
        "docs": curves.docs,
        "pool": curves.pool,
        "processes": rate_rows("processes", &curves.processes),
        "tasks": rate_rows("tasks", &curves.tasks),
        "scope_values": curves.scopes.iter().map(|r| serde_json::json!({
            "scope_values": r.scope_values,
            "first_pass_s": round3(r.first_pass.as_secs_f64()),
            "second_pass_s": round3(r.second_pass.as_secs_f64()),
            "reservations": r.reservations,
            "heap_held_bytes": r.heap_held,
            "heap_after_release_bytes": r.heap_after,
            "rss_held_bytes": r.rss_held,
        })).collect::<Vec<_>>(),
        "counters": rate_rows("counters", &curves.counters),
        "counters_collection": curves.collections.iter().map(|s| serde_json::json!({
            "counters": s.counters,
            "size_bytes": s.size,
            "storage_size_bytes": s.storage_size,
            "total_index_size_bytes": s.total_index_size,
        })).collect::<Vec<_>>(),
    })
}

/// The rows of a rate curve whose x is named `point`, that first.
fn rate_rows(point: &str, rows: &[RateRow]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            let mut row = serde_json::Map::new();
            row.insert(point.to_owned(), r.point.into());
            row.insert("tasks".to_owned(), r.tasks.into());
            row.insert("mode".to_owned(), r.model.name().into());
            row.insert("docs".to_owned(), r.docs.into());
            row.insert("docs_per_s".to_owned(), round1(r.docs_per_s).into());
            row.insert("p50_us".to_owned(), round1(r.p50_us).into());
            row.insert("p99_us".to_owned(), round1(r.p99_us).into());
            row.insert("ratio".to_owned(), round3(r.ratio).into());
            row.insert(
                "server_us_per_doc".to_owned(),
                r.server_us_per_doc.map(round1).into(),
            );
            row.insert(
                "trips_per_doc".to_owned(),
                r.trips_per_doc.map(round3).into(),
            );
            serde_json::Value::Object(row)
        })
        .collect()
}
