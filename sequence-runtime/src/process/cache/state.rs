//! What the cache of a sequence holds under its lock (the range in use, the prefetched next
//! one, the refill in flight, the adaptive size), and the arithmetic of installing, keeping and
//! trimming its ranges. The range in use is a [`Segment`], which callers take values from
//! without the lock; the lock's holder puts ranges in use and retires them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::segment::{prefetch_mark, Segment};
use crate::clock::Clock;
use crate::error::Error;
use crate::id::{IdRange, Slot};
use crate::observability::CACHE;
use crate::options::Batch;

/// What the cache of a sequence holds, under the lock of its [`ProcessState`](super::ProcessState).
#[derive(Debug, Default)]
pub(super) struct CacheState {
    /// The range in use (published to the callers that take values without the lock when the
    /// lock is released); `None` or spent when the cache has to install another.
    current: Option<Arc<Segment>>,
    /// Size of the range in use when it was installed.
    pub(super) current_len: u64,
    /// When the range in use was installed (for the adaptive size).
    pub(super) current_since: Option<Instant>,
    /// The prefetched next range.
    pub(super) standby: Option<IdRange>,
    /// Ticket of the refill in flight.
    pub(super) refill: Option<u64>,
    pub(super) last_ticket: u64,
    /// The error of the last failed refill, for the callers that waited for it.
    pub(super) failure: Option<(u64, Error)>,
    /// Bumped when cached ranges are invalidated; refills of an older epoch are dropped.
    pub(super) epoch: u64,
    /// Current adaptive reservation size (0 until the first refill).
    pub(super) adaptive_size: u64,
    /// With a fixed batch of [`Batch::AHEAD_FROM`] or more: how many batches the next refill
    /// reserves (0 until the rate is known: one).
    pub(super) ahead: u64,
    /// How long the last refill's round trip took.
    pub(super) trip: Option<Duration>,
    /// The counter (period) that the cached ranges belong to.
    pub(super) slot: Option<Arc<Slot>>,
    /// The slot last used by the calls that bypass the cache (one ID per round trip, bulk
    /// reservations), kept so that it is only rebuilt when the period changes.
    pub(super) direct: Option<Arc<Slot>>,
    /// The clock of the sequence (`None`: the system's), set by `Sequence::set_clock`.
    pub(super) clock: Option<Arc<dyn Clock>>,
    /// Values known to be taken by stored documents (the last skip-ahead): a refill that lands
    /// with values in it keeps only those above.
    pub(super) dead: Option<(i64, i64)>,
    /// IDs handed out by the ranges retired from use, ever; those of the range in use are its
    /// own count (see [`issued`](Self::issued)), so that a cached ID costs no write to the
    /// shared statistics.
    retired_issued: u64,
    /// The part of `retired_issued` taken out by [`take_issued`](Self::take_issued).
    issued_taken: u64,
    /// The batch of the last refill (`None` until the cache first refills).
    pub(super) batch: Option<Batch>,
    /// The share of a range used when its prefetch is due, as the last call said (0 until one
    /// did: the first value of a range checks).
    pub(super) prefetch_at: f64,
}

impl CacheState {
    /// What the gauge of the values the cache holds (`mongo_sequence_cached_ids`) is kept by
    /// under the lock: its change across a hold of the lock is the change in the values held,
    /// less the values taken meanwhile without the lock, which their takers count themselves
    /// (the range in use counts whole; the values it handed out count once it is retired).
    #[cfg(feature = "metrics")]
    pub(super) fn gauge_basis(&self) -> u64 {
        self.current.as_ref().map_or(0, |s| s.len())
            + self.standby.map_or(0, |r| r.len())
            + self.retired_issued
    }

    /// The IDs the cache handed out.
    pub(super) fn issued(&self) -> u64 {
        self.retired_issued - self.issued_taken
            + self.current.as_ref().map_or(0, |s| s.handed_out())
    }

    /// The IDs handed out, taken out of the cache's count, once the range in use is taken out
    /// (a scope value's cache adds them to the sequence's statistics when it is forgotten).
    pub(super) fn take_issued(&mut self) -> u64 {
        debug_assert!(self.current.is_none(), "the range in use was taken out");
        let issued = self.retired_issued - self.issued_taken;
        self.issued_taken = self.retired_issued;
        issued
    }

    /// The range in use, if there is one (it may be spent).
    pub(super) fn segment(&self) -> Option<&Arc<Segment>> {
        self.current.as_ref()
    }

    /// What is left of the range in use, as seen now.
    pub(super) fn current_left(&self) -> Option<IdRange> {
        self.current.as_ref().and_then(|s| s.left())
    }

    /// Retires the range in use and returns what is left of it: no value is taken from it
    /// after this.
    pub(super) fn take_current(&mut self) -> Option<IdRange> {
        let current = self.current.take()?;
        self.close(&current)
    }

    fn close(&mut self, segment: &Segment) -> Option<IdRange> {
        let (handed_out, left) = segment.close();
        self.retired_issued += handed_out;
        left
    }

    /// Puts `range` in use as the rest of the range installed (after a trim or a clock change):
    /// the range in use must have been taken out.
    pub(super) fn put_current(&mut self, range: IdRange) {
        debug_assert!(self.current.is_none(), "the range in use was taken out");
        let slot = self
            .slot
            .clone()
            .expect("a range is cached for the counter of a slot");
        let mark = prefetch_mark(
            self.current_len.max(range.len()),
            range.len(),
            self.prefetch_at,
        );
        self.current = Some(Arc::new(Segment::new(
            range,
            mark,
            slot,
            self.clock.clone(),
        )));
    }

    /// Whether the range in use has values left.
    pub(super) fn has_current(&self) -> bool {
        self.current.as_ref().is_some_and(|s| s.left().is_some())
    }

    /// Moves the prefetch mark of the range in use to where `prefetch_at` of it is used.
    pub(super) fn rearm(&self, prefetch_at: f64) {
        if let Some(current) = &self.current {
            let left = current.left().map_or(0, |r| r.len());
            current.rearm(prefetch_mark(self.current_len, left, prefetch_at));
        }
    }
}

/// How many values the next refill of a cache of `batch` reserves: the batch, several of them
/// for a busy cache of a large batch, or the adaptive size reached.
pub(super) fn refill_size(st: &CacheState, batch: Batch) -> u64 {
    match batch {
        Batch::Fixed(n) if n >= Batch::AHEAD_FROM => n.saturating_mul(st.ahead.max(1)),
        Batch::Fixed(n) => n,
        Batch::Adaptive(a) => st.adaptive_size.max(a.min),
    }
}

/// Makes sure there is a range in use with values left, installing the prefetched one if
/// needed (a spent range is retired); false if the cache is empty.
pub(super) fn ensure_current(st: &mut CacheState, batch: Batch) -> bool {
    if !st.has_current() {
        st.take_current();
        match st.standby.take() {
            Some(standby) => install(st, standby, batch),
            None => return false,
        }
    }
    true
}

/// Whether the prefetch of the next range is due, for the caller that took the value at the
/// range's mark: none is in flight or waiting, and `prefetch_at` of the range has been used.
pub(super) fn prefetch_due(st: &CacheState, prefetch_at: f64) -> bool {
    let remaining = st.current_left().map_or(0, |r| r.len());
    let used = st.current_len.saturating_sub(remaining);
    st.refill.is_none()
        && st.standby.is_none()
        && used as f64 >= prefetch_at * st.current_len as f64
}

/// Installs `range` as the range in use, updating the adaptive size (or the batches reserved
/// ahead) from how long the previous range lasted.
pub(super) fn install(st: &mut CacheState, range: IdRange, batch: Batch) {
    match (batch, st.current_since) {
        (Batch::Adaptive(a), Some(since)) => {
            st.adaptive_size = a.next_size(st.adaptive_size.max(a.min), since.elapsed());
        }
        (Batch::Fixed(n), Some(since)) if n >= Batch::AHEAD_FROM => {
            if let Some(trip) = st.trip {
                let ahead = Batch::ahead(n, st.ahead.max(1), st.current_len, since.elapsed(), trip);
                if ahead != st.ahead.max(1) {
                    let counter = st.slot.as_ref().map(|s| s.key.to_string());
                    tracing::debug!(
                        target: CACHE,
                        counter,
                        batch = n,
                        ahead,
                        "Batches ahead changed"
                    );
                }
                st.ahead = ahead;
            }
        }
        _ => {}
    }
    st.take_current();
    st.current_len = range.len();
    st.current_since = Some(Instant::now());
    st.put_current(range);
}

/// Puts `range` after what is cached, if there is room: false if there is not.
pub(super) fn keep(st: &mut CacheState, range: IdRange, batch: Batch) -> bool {
    if !st.has_current() {
        install(st, range, batch);
    } else if st.standby.is_none() {
        st.standby = Some(range);
    } else {
        return false;
    }
    true
}

/// What is left of `range` once the values of `dead` (`lo..=hi`) are taken out: the values
/// above `hi` if it overlaps `dead` (a range never reaches below the `lo` of its counter).
pub(super) fn trim(dead: Option<(i64, i64)>, range: IdRange) -> Option<IdRange> {
    match dead {
        Some((lo, hi)) if range.first() <= hi && range.last() >= lo => range.above(hi),
        _ => Some(range),
    }
}
