//! The interop suite: this crate and the libraries whose counters it shares, writing at the same
//! time on one counter of a real server.
//!
//! Each row installs the real foreign package (from the npm registry or PyPI, at the versions
//! `node/*/package-lock.json` and `python/requirements.txt` pin) and runs:
//!
//! 1. **Together.** The foreign writer saves one document alone (its first use, which creates
//!    the counter as the library does), then it and two processes of this crate's derived model
//!    (`batch = 25` and `batch = 1`) save 1,000 documents each at once, from 4 concurrent tasks
//!    each.
//! 2. **Restarted.** The same with new processes on both sides, 250 documents each.
//! 3. **Migration**, in a database of its own: the foreign library writes alone, then this crate
//!    takes over on the shared counter (its `sync_counters` has nothing to move), then the team
//!    moves off the convention to a counter of this crate's own (set by `sync_counters`).
//!
//! After each step: every writer succeeded and saved all its documents, no ID is stored twice,
//! there is exactly one counter document per counter and it is at or above the highest ID
//! stored, this crate never met an ID the other side had stored (`skipped_ahead` is 0), and
//! in the steps that run together the two sides' IDs interleave (they did run at once).
//!
//! Run with `cargo test --test interop` (`.ci/run` does, with `INTEROP_REQUIRED=1`);
//! `INTEROP_ROWS=typegoose,seed001` runs some rows only. It is not part of
//! `cargo test --workspace`. A missing Node.js (20.19 or newer) or Python with pip skips the
//! suite with a message, or fails it with `INTEROP_REQUIRED=1`.

mod install;
mod models;
mod process;
mod row;

use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::Command;
use std::time::Instant;

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::{Client, Database};
use sequence_testkit::{unique_db_name, TestServer};

use process::Writer;
use row::{number, Row, Runtime};

/// Concurrent tasks of every writer.
const TASKS: usize = 4;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if args.first().map(String::as_str) == Some("writer") {
        runtime.block_on(rust_writer(&args[1..]));
    } else {
        runtime.block_on(suite());
    }
}

/// This crate's writer process: `writer <row> <batch> <uri> <database> <count> <tasks> <tag>`,
/// following the protocol of `node/protocol.js`; prints its statistics after `done`.
async fn rust_writer(args: &[String]) {
    let [row, batch, uri, database, count, tasks, tag] = args else {
        panic!("usage: writer <row> <batch> <uri> <database> <count> <tasks> <tag>");
    };
    let row = Row::named(row).expect("a row");
    let (batch, count, tasks) = (
        batch.parse().expect("a batch"),
        count.parse::<usize>().expect("a count"),
        tasks.parse().expect("a number of tasks"),
    );
    let client = Client::with_uri_str(uri).await.expect("connect");
    let db = client.database(database);
    models::write(row, batch, &db, 1, 1, tag)
        .await
        .expect("the first insert");
    println!("ready");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .expect("the start signal");
    let stats = models::write(row, batch, &db, count - 1, tasks, tag)
        .await
        .expect("an insert");
    println!("done {count}");
    println!(
        "stats {}",
        serde_json::to_string(&stats).expect("stats as JSON")
    );
}

async fn suite() {
    let rows: Vec<Row> = match std::env::var("INTEROP_ROWS") {
        Ok(names) if !names.trim().is_empty() => names
            .split(',')
            .map(|n| Row::named(n.trim()).unwrap_or_else(|| panic!("no row named `{n}`")))
            .collect(),
        _ => Row::ALL.to_vec(),
    };
    let mut runtimes: Vec<Runtime> = rows.iter().map(|r| r.writer().0).collect();
    runtimes.dedup();
    let missing: Vec<String> = runtimes
        .iter()
        .filter_map(|r| install::missing(*r))
        .collect();
    if !missing.is_empty() {
        let why = missing.join("; ");
        if std::env::var("INTEROP_REQUIRED").is_ok_and(|v| v == "1") {
            panic!("interop: cannot run the suite: {why}");
        }
        println!("interop: skipped: {why} (INTEROP_REQUIRED=1 makes this a failure)");
        return;
    }
    let started = Instant::now();
    install::install(&runtimes);
    println!("interop: installed in {:.1?}", started.elapsed());
    let server = TestServer::shared_or_panic();
    let client = server.client().await;
    for row in rows {
        let took = Instant::now();
        together(row, server.uri(), &client).await;
        migration(row, server.uri(), &client).await;
        println!("interop: {} passed in {:.1?}", row.name(), took.elapsed());
    }
    println!("interop: all rows passed in {:.1?}", started.elapsed());
}

/// Starts the foreign writer of `row`.
fn foreign(row: Row, uri: &str, db: &Database, count: usize, tag: &str) -> Writer {
    let (runtime, script) = row.writer();
    let mut command = match runtime {
        Runtime::Node => Command::new("node"),
        Runtime::Python => {
            let mut python = Command::new("python3");
            python.env("PYTHONPATH", install::python_path());
            python
        }
    };
    command
        .arg(install::installed().join(script))
        .args([uri, db.name(), &count.to_string(), &TASKS.to_string(), tag])
        .env("TZ", "UTC");
    Writer::spawn(tag, command)
}

/// Starts this crate's writer of `row` at `batch`.
fn ours(row: Row, batch: u32, uri: &str, db: &Database, count: usize, tag: &str) -> Writer {
    let mut command = Command::new(std::env::current_exe().expect("this executable"));
    command
        .arg("writer")
        .arg(row.name())
        .arg(batch.to_string())
        .args([uri, db.name(), &count.to_string(), &TASKS.to_string(), tag]);
    Writer::spawn(tag, command)
}

/// Steps 1 and 2: both sides at once, then both restarted.
async fn together(row: Row, uri: &str, client: &Client) {
    let db = client.database(&unique_db_name(&format!("interop_{}", row.name())));
    let mut written = Vec::new();
    for (round, count) in [(1, 1000), (2, 250)] {
        let tags = [
            format!("foreign-{round}"),
            format!("rust25-{round}"),
            format!("rust1-{round}"),
        ];
        // The foreign library creates its counter first, as it does on its first save (a
        // find-then-create that another writer's upsert could otherwise race: the docs say).
        let mut foreign = foreign(row, uri, &db, count, &tags[0]);
        foreign.ready();
        let mut writers = vec![
            foreign,
            ours(row, 25, uri, &db, count, &tags[1]),
            ours(row, 1, uri, &db, count, &tags[2]),
        ];
        for writer in &mut writers[1..] {
            writer.ready();
        }
        for writer in &mut writers {
            writer.go();
        }
        let outputs: Vec<Vec<String>> = writers.into_iter().map(|w| w.finish(count)).collect();
        for (output, tag) in outputs[1..].iter().zip(&tags[1..]) {
            let stats = output
                .iter()
                .find_map(|line| line.strip_prefix("stats "))
                .unwrap_or_else(|| panic!("{tag} printed no statistics"));
            let stats: serde_json::Value = serde_json::from_str(stats).expect("stats as JSON");
            assert_eq!(
                stats["skipped_ahead"],
                0,
                "{} round {round}: {tag} met IDs the other side stored: {stats}",
                row.name()
            );
        }
        written.extend(tags.iter().map(|tag| (tag.clone(), count)));
        let ids = check(row, &db, &written).await;
        // Walking the round's IDs in order, how often the side that took them changes: a
        // handful when one side ran before the other, hundreds when they ran at once.
        let mut round_ids: Vec<(&(String, i64), bool)> = ids
            .iter()
            .filter(|(_, by)| tags.contains(by))
            .map(|(id, by)| (id, by.starts_with("foreign")))
            .collect();
        round_ids.sort();
        let changes = round_ids.windows(2).filter(|w| w[0].1 != w[1].1).count();
        let (first, last) = (round_ids[0].0, round_ids[round_ids.len() - 1].0);
        println!(
            "interop: {} round {round}: IDs {first:?} to {last:?}, the side changes {changes} times",
            row.name()
        );
        assert!(
            changes >= 20,
            "{} round {round}: the two sides' IDs do not interleave (the side changes {changes} \
             times): they did not run at once",
            row.name()
        );
    }
}

/// Step 3: the foreign library alone, then this crate on the shared counter, then on its own.
async fn migration(row: Row, uri: &str, client: &Client) {
    let db = client.database(&unique_db_name(&format!("interop_{}_move", row.name())));
    let mut foreign = foreign(row, uri, &db, 300, "foreign");
    foreign.ready();
    foreign.go();
    foreign.finish(300);
    let ids = check(row, &db, &[("foreign".into(), 300)]).await;
    let highest = |ids: &[((String, i64), String)]| ids.iter().map(|(id, _)| id.clone()).max();
    let theirs = highest(&ids).expect("the foreign IDs");

    let done = models::migrate(row, &db, 300, TASKS).await;
    let name = row.name();
    assert!(
        !done.shared_sync_moved,
        "{name}: sync_counters would move the counter the foreign library kept"
    );
    assert_eq!(
        done.shared_sync_skipped, 0,
        "{name}: sync_counters did not read every foreign ID as its own"
    );
    assert_eq!(done.shared_stats.skipped_ahead, 0, "{name}: met stored IDs");
    let ids = check(
        row,
        &db,
        &[
            ("foreign".into(), 300),
            ("rust".into(), 300),
            ("moved".into(), 10),
        ],
    )
    .await;
    let of = |tag: &str| -> Vec<(String, i64)> {
        let mut ids: Vec<_> = ids
            .iter()
            .filter(|(_, by)| by == tag)
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort();
        ids
    };
    let next = |(period, n): &(String, i64)| (period.clone(), n + 1);
    let (rust, moved) = (of("rust"), of("moved"));
    assert_eq!(
        rust.first(),
        Some(&next(&theirs)),
        "{name}: this crate continues the foreign numbers"
    );
    let before_move = rust.last().expect("this crate's IDs");
    assert_eq!(
        moved.first(),
        Some(&next(before_move)),
        "{name}: the moved model continues after sync_counters"
    );
}

/// Checks `db` after writers: each tag in `written` has its documents, nothing else is stored,
/// no ID is stored twice, each counter has one document, at or above the highest stored ID.
/// Returns every stored ID (as [`number`] reads it) with its writer's tag.
async fn check(
    row: Row,
    db: &Database,
    written: &[(String, usize)],
) -> Vec<((String, i64), String)> {
    let docs: Vec<Document> = db
        .collection::<Document>(models::collection(row))
        .find(doc! {})
        .projection(doc! { "_id": 1, "by": 1 })
        .await
        .expect("find")
        .try_collect()
        .await
        .expect("read the documents");
    let name = row.name();
    let ids: Vec<((String, i64), String)> = docs
        .iter()
        .map(|d| {
            let id = number(d.get("_id").expect("an _id"));
            (id, d.get_str("by").unwrap_or_default().to_owned())
        })
        .collect();
    let mut per_tag: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, by) in &ids {
        *per_tag.entry(by.as_str()).or_default() += 1;
    }
    let want: BTreeMap<&str, usize> = written.iter().map(|(t, n)| (t.as_str(), *n)).collect();
    assert_eq!(per_tag, want, "{name}: the documents each writer stored");
    let mut seen: BTreeMap<&(String, i64), &str> = BTreeMap::new();
    for (id, by) in &ids {
        if let Some(first) = seen.insert(id, by) {
            panic!("{name}: the ID {id:?} is stored twice (by {first} and by {by})");
        }
    }
    let mut highest: BTreeMap<&str, i64> = BTreeMap::new();
    for ((period, n), _) in &ids {
        let top = highest.entry(period.as_str()).or_insert(*n);
        *top = (*top).max(*n);
    }
    for (period, top) in highest {
        let (collection, filter, field) = row.counter(period);
        let counters: Vec<Document> = db
            .collection::<Document>(collection)
            .find(filter.clone())
            .await
            .expect("find the counter")
            .try_collect()
            .await
            .expect("read the counter");
        assert_eq!(
            counters.len(),
            1,
            "{name}: one counter document for {filter}: {counters:?}"
        );
        let value = row::counter_value(counters[0].get(field));
        assert!(
            value >= top,
            "{name}: the counter {filter} is at {value}, below the highest stored ID {top}"
        );
    }
    ids
}
