//! Counts of what a sequence did in this process.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;

use super::metrics::{Labels, Series};

/// What a sequence did in this process since it was first used.
///
/// It serializes (with `serde`) as an object of these fields, named as here.
///
/// ```
/// use sequence_runtime::{Sequence, SequenceOptions};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let seq = Sequence::in_memory(SequenceOptions::builder("ticket").batch(10).build())?;
/// for _ in 0..3 {
///     seq.next().await?;
/// }
/// let stats = seq.stats();
/// assert_eq!(stats.issued, 3);
/// // The first range of 10, and the next one, reserved ahead once a tenth of the first was used.
/// assert_eq!((stats.reserved, stats.reservations), (20, 2));
/// // Only the first call waited for a round trip: more waits than `issued / batch` would say
/// // that the batch is too small for the load.
/// assert_eq!(stats.waits, 1);
/// # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// IDs handed out.
    pub issued: u64,
    /// Values reserved from the counter.
    pub reserved: u64,
    /// Round trips to the counter that reserved values, whatever for: a value for the callers
    /// waiting together (`batch = 1`, scopes), a range for the cache, a bulk insert's range, a
    /// reservation above stored IDs. A reservation of the first values of several scope values
    /// at once counts once. (The random, UUID and ObjectId strategies make none.)
    pub reservations: u64,
    /// Reserved values dropped unused (invalidated, or not given back by `release`).
    pub wasted: u64,
    /// Reservations sent again after a duplicate key from a concurrent first upsert of the same
    /// counter (the counters strategies; each is one more round trip).
    pub retries: u64,
    /// Random draws that met an existing ID and were drawn again (the random strategy).
    pub collisions: u64,
    /// Values given back to the counter by `release`.
    pub released: u64,
    /// Calls for one ID that waited for a counter round trip: every call with `batch = 1` (or
    /// a scope), and with a batch the calls that found the cache empty. With a batch, a share
    /// of waits well above `1 / batch` means ranges run out before the prefetched one arrives:
    /// a larger batch, or `batch = "auto"`, removes those waits.
    pub waits: u64,
    /// Inserts that met an ID already stored (an imported document, another writer) and
    /// skipped ahead of the stored IDs: each is one search for the highest stored ID and one
    /// reservation above it.
    pub skipped_ahead: u64,
    /// Gapless transactions (of one insert or a group) run again after a transient error.
    pub transaction_retries: u64,
}

#[derive(Debug, Default)]
pub(crate) struct StatsCell {
    /// The sequence these statistics are about.
    pub(crate) labels: Labels,
    /// The same quantities, recorded through the `metrics` facade.
    pub(crate) series: Series,
    /// The counters whose end is near, already warned about (see
    /// [`near_end`](super::telemetry::near_end)): one entry per counter past the threshold.
    warned: Mutex<HashSet<String>>,
    issued: AtomicU64,
    reserved: AtomicU64,
    reservations: AtomicU64,
    wasted: AtomicU64,
    retries: AtomicU64,
    collisions: AtomicU64,
    released: AtomicU64,
    waits: AtomicU64,
    skipped_ahead: AtomicU64,
    transaction_retries: AtomicU64,
}

impl StatsCell {
    /// The statistics of the sequence `labels` names, all zero.
    pub(crate) fn new(labels: Labels) -> Self {
        StatsCell {
            series: Series::new(&labels),
            labels,
            ..StatsCell::default()
        }
    }

    /// Notes that the counter `id` was warned about; false if it already was.
    pub(crate) fn first_warning(&self, id: String) -> bool {
        self.warned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id)
    }

    pub(crate) fn issued(&self, n: u64) {
        self.issued.fetch_add(n, Relaxed);
        self.series.issued(n);
    }

    pub(crate) fn reserved(&self, n: u64, retries: u32) {
        self.reserved.fetch_add(n, Relaxed);
        self.reservations.fetch_add(1, Relaxed);
        self.retries.fetch_add(u64::from(retries), Relaxed);
        self.series.reserved(n, retries);
    }

    pub(crate) fn collided(&self, n: u64) {
        self.collisions.fetch_add(n, Relaxed);
        self.series.collided(n);
    }

    pub(crate) fn wasted(&self, n: u64) {
        self.wasted.fetch_add(n, Relaxed);
        self.series.abandoned(n);
    }

    pub(crate) fn released(&self, n: u64) {
        self.released.fetch_add(n, Relaxed);
        self.series.released(n);
    }

    /// Counts a call that waited `took` for a round trip.
    pub(crate) fn waited(&self, took: Duration) {
        self.waits.fetch_add(1, Relaxed);
        self.series.waited(took);
    }

    pub(crate) fn skipped_ahead(&self) {
        self.skipped_ahead.fetch_add(1, Relaxed);
        self.series.skipped_ahead();
    }

    pub(crate) fn transaction_retried(&self) {
        self.transaction_retries.fetch_add(1, Relaxed);
        self.series.transaction_retried();
    }

    pub(crate) fn snapshot(&self) -> Stats {
        Stats {
            issued: self.issued.load(Relaxed),
            reserved: self.reserved.load(Relaxed),
            reservations: self.reservations.load(Relaxed),
            wasted: self.wasted.load(Relaxed),
            retries: self.retries.load(Relaxed),
            collisions: self.collisions.load(Relaxed),
            released: self.released.load(Relaxed),
            waits: self.waits.load(Relaxed),
            skipped_ahead: self.skipped_ahead.load(Relaxed),
            transaction_retries: self.transaction_retries.load(Relaxed),
        }
    }
}
