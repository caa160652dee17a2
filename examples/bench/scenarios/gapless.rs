//! Gapless inserts, which take their number inside their transaction: from one process, and
//! from two at once (this one and the bench started again as a worker).

use std::time::Duration;

use mongodb::bson::doc;

use super::inserts::insert_one_each;
use super::models::Gapless;
use super::COLL;
use crate::measure::{connect, BoxFuture, Measured, Result, Run};

/// The first argument that makes the bench the second process of
/// `insert_with_id_gapless_2p`.
pub const WORKER: &str = "--gapless-worker";

/// Gapless inserts take their number inside their transaction, from no cache: no waits to count.
pub fn insert_gapless(run: Run) -> BoxFuture<Result<Measured>> {
    let coll = run.db.collection::<Gapless>(COLL);
    insert_one_each(coll, run.tasks, run.calls_per_task, 0)
}

/// Gapless inserts from two processes at once, half the tasks each: this one, and the bench
/// started again as a worker. Both connect first, then start together; the run lasts until the
/// later one is done.
pub fn insert_gapless_two_processes(run: Run) -> BoxFuture<Result<Measured>> {
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
        let ours = insert_one_each(coll, half, run.calls_per_task, 0).await?;
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
            rss_bytes: None,
        })
    })
}

/// The second process of `insert_with_id_gapless_2p`: `URI DB TASKS CALLS`. Says `ready` once
/// connected, waits for a line, runs its tasks, then writes `done IDS NANOS` and the latency of
/// every call in nanoseconds, one per line.
pub async fn worker(args: &[String]) -> Result<()> {
    use std::io::{BufRead, Write};
    let [uri, db, tasks, calls] = args else {
        return Err(format!("{WORKER} takes URI DB TASKS CALLS").into());
    };
    let (client, _) = connect(uri).await?;
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
    let measured = insert_one_each(coll, tasks.parse()?, calls, 1 << 40).await?;
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
