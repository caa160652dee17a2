//! What the paths besides taking values do to a cache: skip the values that stored documents
//! use, adopt a reservation made above them, size a reservation, and take every cached range
//! out (an admin operation, a scope value's cache forgotten).

use std::sync::Arc;

use super::state::{install, keep, trim};
use super::ProcessState;
use crate::id::{IdRange, Slot};
use crate::options::Batch;
use crate::store::Reservation;

impl ProcessState {
    /// Drops the cached values in `lo..=hi`, which stored documents already use (counted as
    /// wasted), remembers them for refills still in flight, and takes the next cached value if
    /// one is left. `None` sends the caller to reserve above `hi`.
    pub(crate) fn skip_past(&self, lo: i64, hi: i64, batch: Batch) -> Option<i64> {
        let mut st = self.lock();
        st.dead = Some((lo, hi));
        let current = st.take_current();
        let standby = st.standby.take();
        for (cached, in_use) in [(current, true), (standby, false)] {
            let Some(cached) = cached else { continue };
            let live = trim(st.dead, cached);
            self.stats
                .wasted(cached.len() - live.map_or(0, |r| r.len()));
            match live {
                // What is left of the range in use stays in use.
                Some(live) if in_use => st.put_current(live),
                // The prefetched range waits its turn, or becomes the range in use (installed
                // as one, so that its length and start time are its own).
                Some(live) if st.has_current() => st.standby = Some(live),
                Some(live) => install(&mut st, live, batch),
                None => {}
            }
        }
        let (id, at_mark) = self.take_locked(&mut st, batch)?;
        if at_mark {
            // Its prefetch is checked by the next value's taker.
            let prefetch_at = st.prefetch_at;
            st.rearm(prefetch_at);
        }
        Some(id)
    }

    /// Hands out the first value of `r`, a reservation above stored IDs for the counter of
    /// `slot`, and caches the rest after what is cached, if there is room and that counter is
    /// still the one in use.
    pub(crate) fn adopt(&self, r: Reservation, slot: &Arc<Slot>, batch: Batch) -> i64 {
        let mut st = self.lock();
        self.stats.reserved(r.range.len(), r.retries);
        self.stats.issued(1);
        let (head, rest) = r.range.split_first(1);
        if let Some(rest) = rest {
            let same_slot = st.slot.as_ref().is_some_and(|s| s.key == slot.key);
            if !(same_slot && keep(&mut st, rest, batch)) {
                self.stats.wasted(rest.len());
            }
        }
        head.first()
    }

    /// The size of the next reservation of the cache.
    pub(crate) fn batch_size(&self, batch: Batch) -> u64 {
        match batch {
            Batch::Fixed(n) => n,
            Batch::Adaptive(a) => self.lock().adaptive_size.max(a.min),
        }
    }

    /// Drops every cached range and the values reserved ahead for a bulk insert (after an
    /// admin operation); they count as wasted.
    pub(crate) async fn invalidate(&self) {
        for cache in self.scopes.take_all() {
            Box::pin(cache.invalidate()).await;
        }
        if let Some((ahead, _)) = self.bulk.take_all().await {
            self.stats.reserved(ahead.len(), 0);
            self.stats.wasted(ahead.len());
        }
        let (current, standby, _) = self.take_all().await;
        let wasted = current.map_or(0, |r| r.len()) + standby.map_or(0, |r| r.len());
        self.stats.wasted(wasted);
    }

    /// Waits for the refill in flight, if any, then removes and returns the cached ranges
    /// (current, standby) and the slot they belong to. A refill that starts later belongs to the
    /// new epoch.
    pub(crate) async fn take_all(&self) -> (Option<IdRange>, Option<IdRange>, Option<Arc<Slot>>) {
        loop {
            let refilled = {
                let mut st = self.lock();
                if st.refill.is_none() {
                    st.epoch += 1;
                    st.current_since = None;
                    let current = st.take_current();
                    if self.scope.is_some() {
                        // A scope value's cache is taken out when it is forgotten: what it
                        // handed out is counted with the sequence's statistics.
                        self.stats.issued(st.take_issued());
                    }
                    return (current, st.standby.take(), st.slot.clone());
                }
                self.refilled.notified()
            };
            refilled.await;
        }
    }
}
