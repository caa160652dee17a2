//! What the cache of a sequence holds under its lock (the range in use, the prefetched next
//! one, the refill in flight, the adaptive size), and the arithmetic of installing, keeping and
//! trimming its ranges.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::error::Error;
use crate::id::{IdRange, Slot};
use crate::observability::CACHE;
use crate::options::Batch;

/// What the cache of a sequence holds, under the lock of its [`ProcessState`](super::ProcessState).
#[derive(Debug, Default)]
pub(super) struct CacheState {
    /// What is left of the range in use.
    pub(super) current: Option<IdRange>,
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
    /// IDs handed out from the cached ranges: counted under the lock the call holds anyway, so
    /// that a cached ID costs no write to the shared statistics.
    pub(super) issued: u64,
    /// The batch of the last refill (`None` until the cache first refills).
    pub(super) batch: Option<Batch>,
}

#[cfg(feature = "metrics")]
impl CacheState {
    /// How many values the cache holds.
    pub(super) fn cached(&self) -> u64 {
        self.current.map_or(0, |r| r.len()) + self.standby.map_or(0, |r| r.len())
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

/// Makes sure there is a range in use, installing the prefetched one if needed; false if the
/// cache is empty.
pub(super) fn ensure_current(st: &mut CacheState, batch: Batch) -> bool {
    if st.current.is_none() {
        match st.standby.take() {
            Some(standby) => install(st, standby, batch),
            None => return false,
        }
    }
    true
}

/// Whether taking the next ID from the range in use should start a prefetch of the next range:
/// none is in flight or waiting, and `prefetch_at` of the range will have been used.
pub(super) fn prefetch_due(st: &CacheState, prefetch_at: f64) -> bool {
    let remaining_after = st.current.map_or(0, |r| r.len() - 1);
    let used = st.current_len.saturating_sub(remaining_after);
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
    st.current = Some(range);
    st.current_len = range.len();
    st.current_since = Some(Instant::now());
}

/// Puts `range` after what is cached, if there is room: false if there is not.
pub(super) fn keep(st: &mut CacheState, range: IdRange, batch: Batch) -> bool {
    if st.current.is_none() {
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
