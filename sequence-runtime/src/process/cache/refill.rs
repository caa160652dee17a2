//! The refills of a cache: one reservation at a time (its ticket), made by a caller that waits
//! or in the background (a prefetch), and ended by a guard that installs its range, records a
//! failure for the waiters, or, dropped, clears the refill so that no caller waits forever.

use std::sync::Arc;
use std::time::Instant;

use super::state::{keep, refill_size, trim, CacheState};
use super::{ProcessState, Request};
use crate::error::Result;
use crate::id::Slot;
use crate::observability::{Mode, CACHE};
use crate::options::Batch;
use crate::store::Reservation;
use crate::strategy::Counters;

/// A refill to start once the lock is released. It holds the cache's one refill: dropped
/// unfinished, it ends it (see [`RefillGuard`]), so that no caller waits for it forever.
pub(super) struct Refill {
    pub(super) epoch: u64,
    pub(super) size: u64,
    pub(super) slot: Arc<Slot>,
    guard: RefillGuard,
}

impl Refill {
    /// Reserves the next range in the background; false if there is no runtime to do it on.
    pub(super) fn spawn(self, req: &Request<'_>) -> bool {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false; // dropping it ends the refill; the next caller refills inline
        };
        let counters = req.counters.clone();
        let batch = req.batch;
        self.log_started(true);
        runtime.spawn(async move {
            let result = self.reserve(&counters).await;
            if let Err(e) = &result {
                tracing::warn!(target: CACHE, counter = %self.slot.key, error = %e, "Prefetch failed");
            }
            let _ = self.finish(result, batch);
        });
        true
    }

    /// Reports that the refill starts: in the background (`prefetch`) or while callers wait.
    pub(super) fn log_started(&self, prefetch: bool) {
        tracing::debug!(
            target: CACHE,
            counter = %self.slot.key,
            values = self.size,
            prefetch,
            "Refill started"
        );
    }
}

impl ProcessState {
    /// Starts a refill under the lock: takes its ticket and says what it reserves. The refill
    /// must not be dropped under the lock, which its guard takes.
    pub(super) fn begin_refill(self: &Arc<Self>, st: &mut CacheState, batch: Batch) -> Refill {
        st.last_ticket += 1;
        st.refill = Some(st.last_ticket);
        if let Batch::Adaptive(a) = batch {
            if st.adaptive_size == 0 {
                st.adaptive_size = a.min;
            }
        }
        st.batch = Some(batch);
        let size = refill_size(st, batch);
        Refill {
            guard: RefillGuard::new(self, st.last_ticket),
            epoch: st.epoch,
            size,
            slot: st
                .slot
                .clone()
                .expect("a refill starts after the slot is aligned"),
        }
    }
}

impl Refill {
    /// The next range of the cache, its reservation counted: from the counter (a scope value's
    /// cache in a round with the sequence's other callers), or from one of the shards.
    pub(super) async fn reserve(&self, counters: &Counters) -> Result<Reservation> {
        let cache = &self.guard.shared;
        let origin = counters.origin(&self.slot);
        if cache.scope.is_some() {
            return cache.coalescer.range(origin, self.size).await;
        }
        let r = origin.observed(&cache.stats, Mode::Refill, self.size).await;
        if let Ok(r) = &r {
            cache.stats.reserved(r.range.len(), r.retries);
        }
        r
    }

    /// Ends the refill with `result`: keeps its range if its epoch is still the cache's.
    pub(super) fn finish(self, result: Result<Reservation>, batch: Batch) -> Result<()> {
        self.guard.finish(self.epoch, result, batch)
    }
}

/// Ends a refill: on `finish` with its result, or on drop if the refill was cancelled (so that a
/// dropped task or caller never leaves the cache waiting forever).
struct RefillGuard {
    shared: Arc<ProcessState>,
    ticket: u64,
    started: Instant,
}

impl RefillGuard {
    /// The guard of the refill of `ticket` of `shared`, starting now.
    fn new(shared: &Arc<ProcessState>, ticket: u64) -> Self {
        RefillGuard {
            shared: shared.clone(),
            ticket,
            started: Instant::now(),
        }
    }

    /// Ends the refill with `result`: keeps its range if its epoch is still the cache's.
    fn finish(self, epoch: u64, result: Result<Reservation>, batch: Batch) -> Result<()> {
        let shared = self.shared.clone();
        let outcome = {
            let mut st = shared.lock();
            match result {
                Ok(r) => {
                    st.trip = Some(self.started.elapsed());
                    let live = trim(st.dead, r.range);
                    let kept =
                        live.is_some_and(|live| st.epoch == epoch && keep(&mut st, live, batch));
                    if !kept {
                        shared.stats.wasted(r.range.len());
                    } else if let Some(live) = live {
                        shared.stats.wasted(r.range.len() - live.len());
                    }
                    Ok(())
                }
                Err(e) => {
                    st.failure = Some((self.ticket, e.clone()));
                    Err(e)
                }
            }
        };
        drop(self); // clears the refill and wakes the waiters
        outcome
    }
}

impl Drop for RefillGuard {
    fn drop(&mut self) {
        {
            let mut st = self.shared.lock();
            if st.refill == Some(self.ticket) {
                st.refill = None;
            }
        }
        self.shared.refilled.notify_waiters();
    }
}
