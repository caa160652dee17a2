//! The memory curve: what a process holds after taking IDs of a scoped model over more and more
//! scope values. The runtime remembers at most 4,096 scope values per sequence (with a cache
//! for those used twice within 30 s), so past that the memory should stay flat.

use std::time::{Duration, Instant};

use mongodb::Collection;

use crate::alloc::{live_bytes, trim};
use crate::measure::{rss_bytes, BoxError, Result};
use crate::scenarios::models::{Plain, Sample, Scoped};
use crate::scenarios::COLL;

use super::{fresh_db, Bench};

/// The numbers of scope values; `--quick` stops at [`QUICK_MAX`].
const SCOPE_VALUES: &[u64] = &[10, 100, 1_000, 10_000, 100_000, 1_000_000];

/// The most scope values of a `--quick` run.
const QUICK_MAX: u64 = 10_000;

/// The tasks that take the IDs: the first IDs of values called at once share round trips.
const TASKS: u64 = 64;

/// How long to let the last prefetches land before reading the memory.
const SETTLE: Duration = Duration::from_millis(200);

/// One point of the memory curve.
pub struct MemoryRow {
    pub scope_values: u64,
    /// The first pass: one ID for each value, each the value's first.
    pub first_pass: Duration,
    /// The second pass over the same values.
    pub second_pass: Duration,
    /// Counter round trips that reserved values, over both passes (`Stats::reservations`).
    pub reservations: u64,
    /// Live heap bytes after the second pass, above the level before the first point.
    pub heap_held: i64,
    /// Live heap bytes once the sequence has released its caches and the database is dropped,
    /// above the same level: what the point leaves to the next ones.
    pub heap_after: i64,
    /// Resident set after the second pass, above the level before the first point.
    pub rss_held: Option<i64>,
}

/// For each number of scope values, in a fresh database: an ID for each value (the value's
/// first, which waits for a counter round trip, shared with the first values called meanwhile),
/// then a second pass over the values, from [`TASKS`] tasks; then the memory held. One run per
/// point: memory is a level, not a rate to take a median of.
pub async fn curve(bench: &Bench) -> Result<Vec<MemoryRow>> {
    let (heap_before, rss_before) = settled().await;
    eprintln!(
        "scale: scope values: {:.1} MiB of heap and {} resident before the first point",
        mib(heap_before as i64),
        rss_before.map_or("-".to_owned(), |r| format!("{:.1} MiB", mib(r as i64)))
    );
    let mut rows = Vec::new();
    for &values in SCOPE_VALUES {
        if bench.quick && values > QUICK_MAX {
            break;
        }
        let db = fresh_db(&bench.client, "scopes").await?;
        let coll = db.collection::<Scoped>(COLL);
        let started = Instant::now();
        take_each(&coll, values).await?;
        let first_pass = started.elapsed();
        take_each(&coll, values).await?;
        let second_pass = started.elapsed() - first_pass;
        let (heap, rss) = settled().await;
        let sequence = Scoped::sequence(&coll);
        let reservations = sequence.stats().reservations;
        sequence.release().await?;
        db.drop().await?;
        let (heap_after, _) = settled().await;
        let row = MemoryRow {
            scope_values: values,
            first_pass,
            second_pass,
            reservations,
            heap_held: heap as i64 - heap_before as i64,
            heap_after: heap_after as i64 - heap_before as i64,
            rss_held: rss.zip(rss_before).map(|(r, b)| r as i64 - b as i64),
        };
        eprintln!(
            "scale: scope values {values}: first pass {:.2} s, second pass {:.2} s, {} \
             reservations; heap held {:.2} MiB ({:.2} MiB after release), resident {}",
            first_pass.as_secs_f64(),
            second_pass.as_secs_f64(),
            reservations,
            mib(row.heap_held),
            mib(row.heap_after),
            row.rss_held
                .map_or("-".to_owned(), |r| format!("{:.1} MiB", mib(r))),
        );
        rows.push(row);
    }
    Ok(rows)
}

/// The live heap bytes and the resident set, once the last prefetches have landed and the
/// allocator has given its free memory back.
async fn settled() -> (u64, Option<u64>) {
    tokio::time::sleep(SETTLE).await;
    trim();
    (live_bytes(), rss_bytes())
}

/// One ID for each of the scope values `0..values`, taken by [`TASKS`] tasks, each over every
/// `TASKS`-th value.
async fn take_each(coll: &Collection<Scoped>, values: u64) -> Result<()> {
    let handles: Vec<_> = (0..TASKS)
        .map(|task| {
            let coll = coll.clone();
            tokio::spawn(async move {
                for value in (task..values).step_by(TASKS as usize) {
                    let doc = Scoped {
                        number: 0,
                        tenant: value as i64,
                        fields: Plain::sample(value),
                    };
                    doc.next_id_for(&coll).await?;
                }
                Ok::<_, BoxError>(())
            })
        })
        .collect();
    for handle in handles {
        handle.await??;
    }
    Ok(())
}

/// `bytes` in MiB.
pub fn mib(bytes: i64) -> f64 {
    bytes as f64 / 1_048_576.0
}
