//! The in-process cache of reserved ranges, with a background prefetch of the next range
//! (Meituan Leaf's double buffer) and an optional adaptive reservation size. With a fixed batch
//! of [`Batch::AHEAD_FROM`] or more, a refill takes as many batches in its one round trip as
//! the rate of use needs for callers not to wait (see [`Batch::MAX_AHEAD`]).
//!
//! One cache exists per sequence per process (see the registry) and is shared by every caller of
//! that sequence. A caller takes a value of the range in use without the lock (one atomic add on
//! its thread's copy of the range, see [`segment`] and [`copies`]); the lock is taken at the
//! range's end, at its prefetch mark and when the period changes. It is never held across an `.await`; a refill is one reservation from the
//! [`CounterStore`], at most one in flight per sequence.
//!
//! For a sequence with periods, the cache remembers which period's counter (the [`Slot`]) its
//! ranges belong to. The clock is read on every call, before the value is taken, and a new
//! period's first caller retires the range in use under the lock, so IDs are handed out in the
//! order of the clock readings: once a caller got an ID of a new period, no later caller gets one
//! of the previous period. When the period changes, the cached ranges of the old one are dropped
//! (counted as wasted) and the next ID comes from the new period's counter.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use jiff::Timestamp;
use tokio::sync::futures::OwnedNotified;
use tokio::sync::Notify;

mod adjust;
mod copies;
mod refill;
mod segment;
mod state;

use super::bulk::BulkAhead;
use super::coalesce::Coalescer;
use super::scope_caches::ScopeCaches;
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::id::{Format, Scope, Slot};
use crate::observability::{
    CacheSnapshot, Labels, Reported, Stats, StatsCell, Timer, CACHE, PERIOD,
};
use crate::options::Batch;
use crate::strategy::Counters;
pub(crate) use copies::RangeCopy;
use refill::Refill;
use segment::Segment;
pub(crate) use segment::Taken;
use state::{ensure_current, prefetch_due, refill_size, CacheState};

/// What one call of the cache needs to know about its sequence.
pub(crate) struct Request<'a> {
    pub(crate) format: &'a Format,
    pub(crate) batch: Batch,
    pub(crate) prefetch_at: f64,
    /// Where the cache's ranges come from: the counter of its slot, or a ranges sequence's
    /// shards.
    pub(crate) counters: &'a Counters,
}

/// What the handles of one sequence share in this process: its cache of reserved values, the
/// callers waiting for a coalesced reservation, the reservation made ahead for the next bulk
/// call, its statistics and its clock override.
#[derive(Debug)]
pub(crate) struct ProcessState {
    pub(crate) stats: Arc<StatsCell>,
    /// The callers served by coalesced reservations.
    pub(crate) coalescer: Arc<Coalescer>,
    /// The values reserved ahead for the next `insert_many_with_ids`.
    pub(crate) bulk: BulkAhead,
    state: Mutex<CacheState>,
    /// The number of this cache in the process, by which threads keep their copies of its
    /// range in use (see [`copies`]).
    id: u64,
    refilled: Arc<Notify>,
    /// The scope value of a scope's cache (see [`ScopeCaches`]): its ranges come from that
    /// value's counter. `None` for a sequence's own state.
    scope: Option<Scope>,
    /// The caches of the scope values in use, for a scoped sequence with a batch.
    pub(crate) scopes: ScopeCaches<ProcessState>,
    /// Whether a scope's cache prefetches from its first range on (at half of it at the
    /// earliest, see [`prefetch_share`](Self::prefetch_share)), rather than once it used a
    /// whole range (always for a sequence's own state).
    prefetch_first: bool,
    /// The format of the first handle of the sequence, which the handles that render the same
    /// way share (see [`shared_format`](Self::shared_format)).
    format: OnceLock<Arc<Format>>,
}

impl ProcessState {
    /// The state of the sequence `labels` names, with nothing cached yet.
    pub(crate) fn new(labels: Labels) -> Self {
        let stats = Arc::new(StatsCell::new(labels));
        let coalescer = Arc::new(Coalescer::new(stats.clone()));
        Self::with_parts(stats, coalescer, None)
    }

    fn with_parts(stats: Arc<StatsCell>, coalescer: Arc<Coalescer>, scope: Option<Scope>) -> Self {
        ProcessState {
            coalescer,
            bulk: BulkAhead::default(),
            stats,
            state: Mutex::default(),
            id: NEXT_CACHE.fetch_add(1, Relaxed),
            refilled: Arc::default(),
            prefetch_first: scope.is_none(),
            scope,
            scopes: ScopeCaches::default(),
            format: OnceLock::new(),
        }
    }

    /// `format` as the handles of this sequence share it: the first handle's if `format`
    /// renders the same way. A value's counter is then recognised by its address
    /// ([`Format::serves`]) on every thread, whichever handle installed the range in use
    /// (each thread builds its own handle of a model's sequence).
    pub(crate) fn shared_format(&self, format: Format) -> Arc<Format> {
        let mine = Arc::new(format);
        let first = self.format.get_or_init(|| mine.clone());
        if first.same_as(&mine) {
            first.clone()
        } else {
            mine
        }
    }

    /// A cache of this sequence's counter of the scope value `scope`, with this state's
    /// statistics and clock, nothing cached yet; made while the sequence's scope values come
    /// back (`come_back`, see `ScopeCaches`), it prefetches from its first range on, once half of
    /// it is used.
    pub(crate) fn for_scope(&self, scope: Scope, come_back: bool) -> Arc<ProcessState> {
        // Its refills join the rounds of the sequence's first calls and other caches' refills.
        let coalescer = self.coalescer.clone();
        let mut state = Self::with_parts(self.stats.clone(), coalescer, Some(scope));
        state.prefetch_first = come_back;
        state.set_clock(self.lock().clock.clone());
        Arc::new(state)
    }
}

/// The share of its range after which a scope value's cache made while the values come back
/// prefetches the next range, until it has handed out a whole range (or at `prefetch_at`, if
/// later): a tenant whose few inserts fit in half a batch takes no second range, and one with
/// more still has half a batch of values left when its prefetch starts.
const UNPROVEN_PREFETCH_AT: f64 = 0.5;

/// The number of the next cache made in this process (see [`ProcessState::id`]).
static NEXT_CACHE: AtomicU64 = AtomicU64::new(1);

/// The state of a cache under its lock. With the feature `metrics`, releasing it records the
/// change in the values the cache holds (the gauge `mongo_sequence_cached_ids`), unless the
/// holder records it itself (see [`ProcessState::lock_hot`]).
struct Locked<'a> {
    st: MutexGuard<'a, CacheState>,
    /// The cache's [`gauge_basis`](CacheState::gauge_basis) when the lock was taken (`None`:
    /// the holder records its changes).
    #[cfg(feature = "metrics")]
    before: Option<u64>,
    #[cfg(feature = "metrics")]
    stats: &'a StatsCell,
}

impl std::ops::Deref for Locked<'_> {
    type Target = CacheState;

    fn deref(&self) -> &CacheState {
        &self.st
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut CacheState {
        &mut self.st
    }
}

#[cfg(feature = "metrics")]
impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Some(before) = self.before {
            self.stats.series.cached(before, self.st.gauge_basis());
        }
    }
}

/// What a caller of the cache does after its one look under the lock.
enum Step {
    /// An ID, and a prefetch to start if one is due.
    Got(i64, Arc<Slot>, Option<Refill>),
    /// The cache is empty and nobody refills it: this caller does.
    Refill(Refill),
    /// The cache is empty and the refill of this ticket is in flight; registered under the
    /// lock, so its wake-up cannot be missed.
    Wait(u64, OwnedNotified),
}

/// What a look at the cache by [`ProcessState::look`] found.
pub(crate) enum Look {
    /// An ID, with nothing else to do.
    Ready(i64),
    /// The rest of the call, decided in the same look: a prefetch to start with the ID taken,
    /// a refill to make, or one to wait for. [`ProcessState::finish`] does it.
    Later(Later),
}

/// The rest of a call of the cache (see [`Look::Later`]); to be finished at once by the
/// caller, since a refill it holds keeps the other callers waiting. Boxed, so that a look
/// that finds an ID ready returns and moves two words.
pub(crate) struct Later(Box<Step>);

impl ProcessState {
    fn lock(&self) -> Locked<'_> {
        self.lock_with(true)
    }

    /// The lock of the paths that every cached ID takes, which record what they change in the
    /// values held themselves (an ID taken, ranges of another period dropped) rather than
    /// having the lock count them twice: that would cost a cached ID about 10% more.
    fn lock_hot(&self) -> Locked<'_> {
        self.lock_with(false)
    }

    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    fn lock_with(&self, count: bool) -> Locked<'_> {
        let st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Locked {
            #[cfg(feature = "metrics")]
            before: count.then(|| st.gauge_basis()),
            #[cfg(feature = "metrics")]
            stats: &self.stats,
            st,
        }
    }

    /// The next ID from the cache and the slot it belongs to, refilling the cache from the
    /// store when it is empty.
    pub(crate) async fn next(self: &Arc<Self>, req: &Request<'_>) -> Result<(i64, Arc<Slot>)> {
        let step = match self.take_unlocked(req, None, |s, _| s.slot.clone()) {
            Some((id, false, slot)) => return Ok((id, slot)),
            Some((id, true, slot)) => self.at_mark(id, slot, req),
            None => self.step(req, None),
        };
        match step {
            Step::Got(id, slot, None) => Ok((id, slot)),
            // Kept out of this future, which every cached ID builds and runs: the state of a
            // prefetch or a wait (a timer, a refill) would make each call pay for it.
            step => Box::pin(self.slow_path(step, req)).await,
        }
    }

    /// One look at the cache, for a caller that keeps its copy of the range in use in `copy`
    /// (the hot path of models): the next ID, or what the call does next, which
    /// [`finish`](Self::finish) does without looking again. `at_mark` is the value the caller
    /// took from `copy` with [`RangeCopy::take`] if it was the one at the prefetch mark.
    pub(crate) fn look(
        self: &Arc<Self>,
        req: &Request<'_>,
        copy: &mut RangeCopy,
        at_mark: Option<i64>,
    ) -> Look {
        let taken = match (at_mark, copy.of(self.id)) {
            (Some(id), Some(segment)) => Some((id, true, Some(segment.slot.clone()))),
            (Some(_), None) => unreachable!("a value taken from a copy of another cache"),
            // The slot is only read for the call that goes on (the value at the prefetch mark).
            (None, _) => self.take_unlocked(req, Some(copy), |s, at_mark| {
                at_mark.then(|| s.slot.clone())
            }),
        };
        let step = match taken {
            Some((id, _, None)) => return Look::Ready(id),
            Some((id, _, Some(slot))) => self.at_mark(id, slot, req),
            None => self.step(req, Some(copy)),
        };
        match step {
            Step::Got(id, _, None) => Look::Ready(id),
            step => Look::Later(Later(Box::new(step))),
        }
    }

    /// A value of the range in use, taken without the lock from the caller's copy (`copy`, or
    /// else this thread's) if that range serves the current period, whether it is the range's
    /// prefetch mark, and what `with` reads of the range (told whether the value is at the
    /// mark).
    #[inline]
    fn take_unlocked<W>(
        &self,
        req: &Request<'_>,
        copy: Option<&RangeCopy>,
        with: impl FnOnce(&Segment, bool) -> W,
    ) -> Option<(i64, bool, W)> {
        let take = |segment: &Arc<Segment>| {
            if !segment.serves(req.format) {
                return None;
            }
            let taken = segment.take()?;
            let w = with(segment, taken.at_mark);
            Some((taken, w))
        };
        let (taken, w) = match copy {
            Some(copy) => take(copy.of(self.id)?),
            None => copies::with_copy(self.id, take)?,
        }?;
        self.handed_out_one();
        Some((taken.value, taken.at_mark, w))
    }

    /// Records a value handed out from the cache (with `metrics`, its series; the count itself
    /// is the range's).
    #[inline]
    fn handed_out_one(&self) {
        self.stats.series.issued(1);
        self.stats.series.left_cache(1);
    }

    /// What the caller that took `id`, the value at the prefetch mark of a range of `slot`,
    /// does: starts the prefetch if it is due.
    fn at_mark(self: &Arc<Self>, id: i64, slot: Arc<Slot>, req: &Request<'_>) -> Step {
        let mut st = self.lock_hot();
        let prefetch = self.prefetch_at_mark(&mut st, req);
        Step::Got(id, slot, prefetch)
    }

    /// The prefetch to start, if due, for a caller that took the value at the prefetch mark;
    /// if it is not due only because the mark was set from another share (`prefetch_at`), the
    /// mark moves to where it is due.
    fn prefetch_at_mark(
        self: &Arc<Self>,
        st: &mut CacheState,
        req: &Request<'_>,
    ) -> Option<Refill> {
        let share = self.prefetch_share(st, req);
        st.prefetch_at = share.unwrap_or(req.prefetch_at);
        let share = share?;
        if st.refill.is_some() || st.standby.is_some() {
            return None;
        }
        if prefetch_due(st, share) {
            return Some(self.begin_refill(st, req.batch));
        }
        st.rearm(share);
        None
    }

    /// The share of the range in use whose use makes the prefetch of the next one due:
    /// `prefetch_at`, but for a scope value's cache that has not yet handed out a whole range.
    /// Such a cache prefetches at [`UNPROVEN_PREFETCH_AT`] of its range at the earliest if it
    /// was made while the values come back, and not at all otherwise (`None`): a tenant with a
    /// few inserts in a while takes one range, not two.
    fn prefetch_share(&self, st: &CacheState, req: &Request<'_>) -> Option<f64> {
        if self.scope.is_none() || st.issued() >= refill_size(st, req.batch) {
            return Some(req.prefetch_at);
        }
        self.prefetch_first
            .then(|| req.prefetch_at.max(UNPROVEN_PREFETCH_AT))
    }

    /// Finishes the call `later` that [`look`](Self::look) began.
    pub(crate) async fn finish(
        self: &Arc<Self>,
        later: Later,
        req: &Request<'_>,
    ) -> Result<(i64, Arc<Slot>)> {
        self.slow_path(*later.0, req).await
    }

    /// Starts the prefetch `job`, if any, in the background.
    async fn prefetch(self: &Arc<Self>, job: Option<Refill>, req: &Request<'_>) {
        if let Some(job) = job {
            if job.spawn(req) {
                // A task spawned from this one may wait until this one yields (tokio runs it
                // next on this thread), which a caller taking cached IDs in a loop does only
                // once the cache is empty: the prefetch would then overlap nothing. Let it
                // send its command now.
                tokio::task::yield_now().await;
            }
        }
    }

    /// `next` for a caller that has to start a prefetch or found the cache empty: refills it,
    /// or waits for the refill in flight, until it has an ID; `step` is what it found.
    async fn slow_path(
        self: &Arc<Self>,
        mut step: Step,
        req: &Request<'_>,
    ) -> Result<(i64, Arc<Slot>)> {
        let waited = (!matches!(step, Step::Got(..))).then(Timer::start);
        loop {
            match step {
                Step::Got(id, slot, prefetch) => {
                    if let Some(waited) = waited {
                        self.stats.waited(waited.elapsed());
                    }
                    self.prefetch(prefetch, req).await;
                    return Ok((id, slot));
                }
                Step::Refill(job) => {
                    job.log_started(false);
                    let result = job.reserve(req.counters).await;
                    job.finish(result, req.batch)?;
                }
                Step::Wait(ticket, refilled) => {
                    refilled.await;
                    if let Some(e) = self.failure_of(ticket) {
                        return Err(e);
                    }
                }
            }
            step = self.step(req, None);
        }
    }

    /// What the caller of `next` does now, decided under the lock; the caller's copy of the
    /// range in use (`copy`, or else this thread's) is brought up to date.
    fn step(self: &Arc<Self>, req: &Request<'_>, copy: Option<&mut RangeCopy>) -> Step {
        let mut st = self.lock_hot();
        st.prefetch_at = self.prefetch_share(&st, req).unwrap_or(req.prefetch_at);
        let slot = self.align(&mut st, req);
        let taken = self.take(&mut st, req);
        // The range in use now, which the caller's next calls take from without the lock.
        let in_use = st.segment().cloned();
        match copy {
            Some(copy) => copy.set(self.id, in_use, req.format),
            None => copies::remember(self.id, in_use),
        }
        if let Some((id, prefetch)) = taken {
            return Step::Got(id, slot, prefetch);
        }
        match st.refill {
            // Registered under the lock, so the refill's wake-up cannot be missed.
            Some(ticket) => Step::Wait(ticket, self.refilled.clone().notified_owned()),
            None => Step::Refill(self.begin_refill(&mut st, req.batch)),
        }
    }

    /// Reads the clock and makes the cache serve the slot of the current period: the ranges of
    /// another period are dropped (counted as wasted) and refills still in flight for it are
    /// discarded when they land.
    fn align(&self, st: &mut CacheState, req: &Request<'_>) -> Arc<Slot> {
        let slot = slot_now(req.format, st.clock.as_ref(), st.slot.as_ref());
        if st.slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, &slot)) {
            return slot;
        }
        // A scope's cache serves its value's counter of the period.
        let slot = match &self.scope {
            Some(scope) => req.format.scoped(&slot, scope),
            None => slot,
        };
        let dropped =
            st.take_current().map_or(0, |r| r.len()) + st.standby.take().map_or(0, |r| r.len());
        if dropped > 0 {
            self.stats.wasted(dropped);
            self.stats.series.left_cache(dropped);
            tracing::debug!(target: CACHE, counter = %slot.key, dropped, "Period changed");
        }
        st.epoch += 1;
        st.current_since = None;
        st.slot = Some(slot.clone());
        slot
    }

    /// The slot in use now, for calls that bypass the cache.
    pub(crate) fn direct_slot(&self, format: &Format) -> Arc<Slot> {
        if let Some(constant) = format.constant() {
            return constant.clone();
        }
        let mut st = self.lock();
        let slot = slot_now(format, st.clock.as_ref(), st.direct.as_ref());
        st.direct = Some(slot.clone());
        slot
    }

    /// The current instant, from the sequence's clock.
    pub(crate) fn now(&self) -> Timestamp {
        now(self.lock().clock.as_ref())
    }

    /// Sets the clock of the sequence (`None`: the system's).
    pub(crate) fn set_clock(&self, clock: Option<Arc<dyn Clock>>) {
        for cache in self.scopes.caches() {
            cache.set_clock(clock.clone());
        }
        let mut st = self.lock();
        st.clock = clock;
        // The range in use tells its period by the new clock from now on.
        if let Some(left) = st.take_current() {
            st.put_current(left);
        }
    }

    fn failure_of(&self, ticket: u64) -> Option<Error> {
        match &self.lock().failure {
            Some((t, e)) if *t == ticket => Some(e.clone()),
            _ => None,
        }
    }

    /// Takes one ID if the cache has one; says whether a prefetch should start.
    fn take(
        self: &Arc<Self>,
        st: &mut CacheState,
        req: &Request<'_>,
    ) -> Option<(i64, Option<Refill>)> {
        let (id, at_mark) = self.take_locked(st, req.batch)?;
        let prefetch = if at_mark {
            self.prefetch_at_mark(st, req)
        } else {
            None
        };
        Some((id, prefetch))
    }

    /// Takes one ID under the lock, if the cache has one, and whether it is at the prefetch mark
    /// of its range: from the range in use, or the prefetched one installed when that is spent
    /// (by the callers that take values without the lock, too).
    fn take_locked(&self, st: &mut CacheState, batch: Batch) -> Option<(i64, bool)> {
        loop {
            if !ensure_current(st, batch) {
                return None;
            }
            // Spent meanwhile by the callers that take values without the lock: install the
            // next range.
            let Some(taken) = st.segment().expect("a range in use").take() else {
                continue;
            };
            self.handed_out_one();
            return Some((taken.value, taken.at_mark));
        }
    }

    /// What the sequence did in this process: the shared statistics with the IDs handed out
    /// from the cache and from the caches of its scope values.
    pub(crate) fn snapshot(&self) -> Stats {
        let issued = self.lock().issued();
        self.stats_with(issued)
    }

    /// The shared statistics with `issued`, the IDs this cache handed out (read under its
    /// lock), and those the caches of its scope values handed out. The one count of issued IDs
    /// that [`snapshot`](Self::snapshot) and the process's snapshot share.
    fn stats_with(&self, issued: u64) -> Stats {
        let mut stats = self.stats.snapshot();
        stats.issued += issued;
        for cache in self.scopes.caches() {
            stats.issued += cache.lock().issued();
        }
        stats
    }
}

impl Reported for ProcessState {
    fn labels(&self) -> &Labels {
        &self.stats.labels
    }

    fn report(&self) -> (Stats, CacheSnapshot) {
        let (issued, cache) = {
            let st = self.lock();
            let current = st.current_left();
            let values_left = current.map_or(0, |r| r.len());
            let cache = CacheSnapshot {
                counter: st.slot.as_ref().map(|s| s.key.to_string()),
                current,
                values_left,
                next: st.standby,
                refilling: st.refill.is_some(),
                cached: values_left.saturating_add(st.standby.map_or(0, |r| r.len())),
                batch: st.batch.map(|batch| refill_size(&st, batch)),
            };
            (st.issued(), cache)
        };
        // The caches of the scope values are read after this one's lock is released.
        (self.stats_with(issued), cache)
    }
}

/// The current instant, from `clock`, or the system's.
fn now(clock: Option<&Arc<dyn Clock>>) -> Timestamp {
    clock.map_or_else(|| SystemClock.now(), |clock| clock.now())
}

/// The slot of `format` now, by `clock` (`None`: the system's): `prev` while its period lasts.
/// The counter of a new period is reported.
fn slot_now(
    format: &Format,
    clock: Option<&Arc<dyn Clock>>,
    prev: Option<&Arc<Slot>>,
) -> Arc<Slot> {
    let slot = format.slot(|| now(clock), prev);
    if slot.has_period() && !prev.is_some_and(|p| Arc::ptr_eq(p, &slot)) {
        tracing::debug!(
            target: PERIOD,
            sequence = %format.name(),
            counter = %slot.key,
            "Period counter selected"
        );
    }
    slot
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use jiff::SignedDuration;
    use mongodb::ClientSession;
    use tokio::sync::Semaphore;

    use super::state::install;
    use super::*;
    use crate::clock::ManualClock;
    use crate::id::Bounds;
    use crate::id::CounterKey;
    use crate::id::IdRange;
    use crate::options::{AdaptiveBatch, SequenceOptions};
    use crate::store::Reservation;
    use crate::store::{BoxFuture, CounterStore, MemoryStore};
    use crate::Sequence;

    /// What the scopes guide states of the memory held: a scope value's cache takes under
    /// 1 KiB besides its scope value and counter key.
    #[test]
    fn a_scope_cache_takes_under_a_kibibyte() {
        let size = std::mem::size_of::<ProcessState>();
        assert!(size < 1024, "{size} bytes");
    }

    /// A memory store that records the counter and size of every reservation when it is sent;
    /// each reservation then takes `delay`, and with a `gate` waits for a permit of it.
    #[derive(Debug, Default)]
    struct Recorder {
        inner: MemoryStore,
        reserved: Mutex<Vec<(String, u64)>>,
        delay: Option<Duration>,
        gate: Option<Arc<Semaphore>>,
    }

    impl Recorder {
        fn reserved(&self) -> Vec<(String, u64)> {
            self.reserved
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        }

        fn sizes(&self) -> Vec<u64> {
            self.reserved().into_iter().map(|(_, n)| n).collect()
        }

        fn counters(&self) -> Vec<String> {
            self.reserved().into_iter().map(|(key, _)| key).collect()
        }
    }

    impl CounterStore for Recorder {
        fn reserve<'a>(
            &'a self,
            key: &'a CounterKey,
            n: u64,
            bounds: Bounds,
            session: Option<&'a mut ClientSession>,
        ) -> BoxFuture<'a, Result<Reservation>> {
            self.reserved
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((key.canonical().to_owned(), n));
            Box::pin(async move {
                if let Some(gate) = &self.gate {
                    gate.acquire()
                        .await
                        .expect("the gate is never closed")
                        .forget();
                }
                if let Some(delay) = self.delay {
                    tokio::time::sleep(delay).await;
                }
                self.inner.reserve(key, n, bounds, session).await
            })
        }

        fn last_issued<'a>(
            &'a self,
            key: &'a CounterKey,
            bounds: Bounds,
            session: Option<&'a mut ClientSession>,
        ) -> BoxFuture<'a, Result<Option<i64>>> {
            self.inner.last_issued(key, bounds, session)
        }

        fn set_last_issued<'a>(
            &'a self,
            key: &'a CounterKey,
            last: i64,
            force: bool,
            bounds: Bounds,
            session: Option<&'a mut ClientSession>,
        ) -> BoxFuture<'a, Result<()>> {
            self.inner
                .set_last_issued(key, last, force, bounds, session)
        }

        fn compare_and_set<'a>(
            &'a self,
            key: &'a CounterKey,
            expected: i64,
            new: i64,
            session: Option<&'a mut ClientSession>,
        ) -> BoxFuture<'a, Result<bool>> {
            self.inner.compare_and_set(key, expected, new, session)
        }

        fn delete<'a>(
            &'a self,
            key: &'a CounterKey,
            session: Option<&'a mut ClientSession>,
        ) -> BoxFuture<'a, Result<bool>> {
            self.inner.delete(key, session)
        }

        fn location(&self) -> String {
            self.inner.location()
        }
    }

    async fn take(seq: &Sequence, n: usize) -> Vec<i64> {
        let mut got = Vec::with_capacity(n);
        for _ in 0..n {
            got.push(seq.next().await.unwrap());
        }
        got
    }

    /// The one slot of a sequence without periods.
    fn slot() -> Arc<Slot> {
        let format = Format::new("s", None, None, None);
        format.constant().expect("no periods").clone()
    }

    fn range(first: i64, last: i64) -> IdRange {
        IdRange::new(first, last).unwrap()
    }

    /// The instant `d` before now on the monotonic clock.
    fn ago(d: Duration) -> Instant {
        Instant::now()
            .checked_sub(d)
            .expect("the monotonic clock has run that long")
    }

    /// A day sequence.
    fn daily() -> SequenceOptions {
        SequenceOptions::builder("daily")
            .prefix("YYMMDD")
            .batch(10)
            .build()
    }

    /// `seq`, reading the time from `clock`.
    fn clocked(seq: Sequence, clock: &Arc<ManualClock>) -> Sequence {
        seq.set_clock(clock.clone());
        seq
    }

    fn before_midnight() -> Arc<ManualClock> {
        Arc::new(ManualClock::new("2025-11-22T23:59:59Z".parse().unwrap()))
    }

    /// Callers after the first never wait: the next range is reserved in the background as
    /// soon as `prefetch_at` of the range in use is taken, and not before. (A batch below
    /// `Batch::AHEAD_FROM`: one batch per refill, however fast the ranges go.)
    #[tokio::test]
    async fn the_next_range_is_prefetched_once_prefetch_at_of_the_current_one_is_used() {
        let store = Arc::new(Recorder::default());
        let options = SequenceOptions::builder("p")
            .batch(8)
            .prefetch_at(0.5)
            .build();
        let seq = Sequence::with_store(store.clone(), options).unwrap();
        assert_eq!(take(&seq, 3).await, [1, 2, 3]);
        assert_eq!(
            store.sizes(),
            [8],
            "no prefetch before half the range is used"
        );
        assert_eq!(take(&seq, 1).await, [4]);
        assert_eq!(
            store.sizes(),
            [8, 8],
            "the fourth value starts the prefetch"
        );
        assert_eq!(take(&seq, 8).await, (5..=12).collect::<Vec<_>>());
        assert_eq!(
            store.sizes(),
            [8, 8, 8],
            "the prefetched range, once in use, starts the next prefetch"
        );
        let stats = seq.stats();
        assert_eq!(
            (
                stats.reservations,
                stats.reserved,
                stats.issued,
                stats.waits
            ),
            (3, 24, 12, 1),
            "only the first caller waited: {stats:?}"
        );
    }

    /// With a batch of `AHEAD_FROM`, ranges that run out within a round trip make the cache
    /// take several batches per round trip, a whole number of batches, at most `MAX_AHEAD`.
    #[tokio::test]
    async fn a_busy_cache_reserves_several_batches_per_round_trip() {
        let store = Arc::new(Recorder {
            delay: Some(Duration::from_millis(5)),
            ..Recorder::default()
        });
        let batch = Batch::AHEAD_FROM;
        let options = SequenceOptions::builder("busy").batch(batch).build();
        let seq = Sequence::with_store(store.clone(), options).unwrap();
        let mut expected = 1;
        while store.sizes().len() < 4 {
            assert_eq!(seq.next().await.unwrap(), expected);
            expected += 1;
        }
        let sizes = store.sizes();
        assert_eq!(
            sizes[..2],
            [batch, batch],
            "one batch until a range has been used up"
        );
        assert!(
            sizes[2..]
                .iter()
                .all(|&n| n > batch && n % batch == 0 && n <= Batch::MAX_AHEAD * batch),
            "{sizes:?}"
        );
    }

    #[test]
    fn reservations_ahead_stop_at_max_ahead() {
        // The last range lasted no time at all, against a round trip of 10 s.
        let mut st = CacheState::default();
        st.slot = Some(slot());
        st.current_len = 100;
        st.current_since = Some(Instant::now());
        st.trip = Some(Duration::from_secs(10));
        install(&mut st, range(101, 200), Batch::Fixed(100));
        assert_eq!(st.ahead, Batch::MAX_AHEAD);
        let refill =
            Arc::new(ProcessState::new(Labels::default())).begin_refill(&mut st, Batch::Fixed(100));
        assert_eq!(refill.size, 100 * Batch::MAX_AHEAD);
    }

    #[test]
    fn a_batch_below_ahead_from_is_never_multiplied() {
        let batch = Batch::Fixed(Batch::AHEAD_FROM - 1);
        let mut st = CacheState::default();
        st.slot = Some(slot());
        st.current_len = 99;
        st.current_since = Some(Instant::now());
        st.trip = Some(Duration::from_secs(10));
        install(&mut st, range(100, 198), batch);
        assert_eq!(st.ahead, 0);
        let refill = Arc::new(ProcessState::new(Labels::default())).begin_refill(&mut st, batch);
        assert_eq!(refill.size, Batch::AHEAD_FROM - 1);
    }

    /// After a pause, the batches reserved ahead halve range by range rather than all at once.
    #[test]
    fn a_quiet_cache_halves_its_batches_ahead_one_range_at_a_time() {
        let shared = Arc::new(ProcessState::new(Labels::default()));
        let mut st = CacheState::default();
        st.slot = Some(slot());
        st.ahead = Batch::MAX_AHEAD;
        st.current_len = 100 * Batch::MAX_AHEAD;
        st.trip = Some(Duration::from_millis(1));
        let mut sizes = Vec::new();
        for _ in 0..5 {
            st.current_since = Some(ago(Duration::from_secs(2)));
            let len = 100 * st.ahead.max(1);
            install(&mut st, range(1, len as i64), Batch::Fixed(100));
            sizes.push(shared.begin_refill(&mut st, Batch::Fixed(100)).size);
            st.refill = None;
        }
        let halved: Vec<u64> = (1..=5)
            .map(|n| 100 * (Batch::MAX_AHEAD >> n).max(1))
            .collect();
        assert_eq!(sizes, halved);
    }

    /// Every range lasts less than `grow_below` (an hour): each one doubles the next, from
    /// `min` up to `max`.
    #[tokio::test]
    async fn a_range_used_up_quickly_doubles_the_next() {
        let store = Arc::new(Recorder::default());
        let adaptive = AdaptiveBatch::new(4, 32)
            .grow_below(Duration::from_secs(3600))
            .shrink_above(Duration::from_secs(7200));
        let options = SequenceOptions::builder("auto").batch(adaptive).build();
        let seq = Sequence::with_store(store.clone(), options).unwrap();
        assert_eq!(take(&seq, 100).await, (1..=100).collect::<Vec<_>>());
        // The first range and the one prefetched while it is in use hold `min`; each range
        // installed after a quick one reserves twice as many.
        assert_eq!(store.sizes()[..6], [4, 4, 8, 16, 32, 32]);
    }

    /// Skipping ahead past a whole range in use installs the prefetched one, however much
    /// longer it is: the next values come from it, and the prefetch rule reads its own length
    /// (this overflowed in debug builds when the prefetched range had grown).
    #[tokio::test]
    async fn skipping_past_the_range_in_use_installs_the_prefetched_one() {
        let store = Arc::new(Recorder::default());
        let adaptive = AdaptiveBatch::new(4, 32).grow_below(Duration::from_secs(3600));
        let options = SequenceOptions::builder("auto").batch(adaptive).build();
        let seq = Sequence::with_store(store.clone(), options).unwrap();
        assert_eq!(take(&seq, 8).await, (1..=8).collect::<Vec<_>>());
        let issued = seq.issued(8).unwrap();
        let skipped = seq.skip_ahead(&issued, 8).await.unwrap();
        assert!(skipped.value > 8, "{}", skipped.value);
        let next = seq.next().await.unwrap();
        assert_eq!(next, skipped.value + 1);
        let more = take(&seq, 40).await;
        assert!(more.windows(2).all(|w| w[0] < w[1]), "{more:?}");
        assert!(more[0] > next);
    }

    /// Tasks on two threads take values from one cache, without its lock but at a range's end
    /// and mark: every value once, each task's in increasing order, all from the ranges the
    /// store reserved, and the statistics count every value handed out, none wasted.
    #[test]
    fn tasks_on_two_threads_share_the_cache_without_its_lock() {
        const TASKS: usize = 16;
        const EACH: usize = 2_000;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        runtime.block_on(async {
            let store = Arc::new(Recorder::default());
            let options = SequenceOptions::builder("shared").batch(100).build();
            let seq = Sequence::with_store(store.clone(), options).unwrap();
            let tasks: Vec<_> = (0..TASKS)
                .map(|_| {
                    let seq = seq.clone();
                    tokio::spawn(async move { take(&seq, EACH).await })
                })
                .collect();
            let mut all = Vec::new();
            for task in tasks {
                let mine = task.await.unwrap();
                assert!(mine.windows(2).all(|w| w[0] < w[1]), "{mine:?}");
                all.extend(mine);
            }
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), TASKS * EACH, "a value was handed out twice");
            let reserved: u64 = store.sizes().iter().sum();
            assert!(
                *all.last().unwrap() <= reserved as i64,
                "a value never reserved"
            );
            let stats = seq.stats();
            assert_eq!(stats.issued, (TASKS * EACH) as u64);
            assert_eq!(stats.reserved, reserved);
            assert_eq!(stats.wasted, 0);
        });
    }

    /// A task taking cached values in a loop yields once it has spent its budget of Tokio's
    /// cooperative scheduling: a task spawned after it, on the same thread, runs before the
    /// loop of 1,000 values ends, and soon (the budget is 128 per poll).
    #[test]
    fn a_loop_of_cached_values_lets_other_tasks_run() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let options = SequenceOptions::builder("coop").batch(100_000).build();
            let seq = Sequence::with_store(Arc::new(MemoryStore::new()), options).unwrap();
            seq.next().await.unwrap();
            let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let looping = {
                let (seq, ran) = (seq.clone(), ran.clone());
                tokio::spawn(async move {
                    for i in 0..1_000 {
                        seq.next().await.unwrap();
                        if ran.load(std::sync::atomic::Ordering::SeqCst) {
                            return Some(i);
                        }
                    }
                    None
                })
            };
            let other = {
                let ran = ran.clone();
                tokio::spawn(async move { ran.store(true, std::sync::atomic::Ordering::SeqCst) })
            };
            let seen_at = looping.await.unwrap();
            other.await.unwrap();
            let at = seen_at.expect("the other task ran before the loop of 1,000 values ended");
            assert!(at <= 200, "the loop yielded after {at} values");
        });
    }

    /// The hot path's one look: on an empty cache it takes the refill on itself, so a second
    /// look meanwhile waits for that refill rather than starting one, and neither looks again
    /// before its call is finished; both values come from the one refill.
    #[tokio::test]
    async fn a_look_at_an_empty_cache_decides_the_rest_of_the_call() {
        let store = Arc::new(Recorder::default());
        let options = SequenceOptions::builder("looked").batch(10).build();
        let seq = Sequence::with_store(store.clone(), options).unwrap();
        let mut copy = RangeCopy::new();
        let Some(Look::Later(first)) = seq.look(&mut copy, None) else {
            panic!("an empty cache has no value ready")
        };
        let Some(Look::Later(second)) = seq.look(&mut copy, None) else {
            panic!("the refill in flight is the first look's")
        };
        assert!(
            store.sizes().is_empty(),
            "nothing reserved before a call is finished"
        );
        let (a, b) = tokio::join!(seq.finish_id::<i64>(second), seq.finish_id::<i64>(first));
        let mut got = [a.unwrap().0, b.unwrap().0];
        got.sort_unstable();
        // Both from the first range (a second refill would have started at 11; the second
        // range reserved is the prefetch of the first range's user).
        assert_eq!(got, [1, 2]);
        assert_eq!(store.sizes()[0], 10);
        assert!(matches!(seq.look(&mut copy, None), Some(Look::Ready(3))));
        // That look took its value under the lock and left the caller its copy of the range,
        // which the next value comes from without the cache.
        if !cfg!(feature = "metrics") {
            let taken = copy.take();
            assert_eq!(
                taken,
                Some(Taken {
                    value: 4,
                    at_mark: false
                })
            );
        }
    }

    #[test]
    fn a_range_that_lasts_long_halves_the_next() {
        let adaptive = AdaptiveBatch::new(4, 64)
            .grow_below(Duration::from_millis(1))
            .shrink_above(Duration::from_secs(1));
        let batch = Batch::Adaptive(adaptive);
        let mut st = CacheState::default();
        st.slot = Some(slot());
        st.adaptive_size = 32;
        st.current_len = 32;
        st.current_since = Some(ago(Duration::from_secs(2)));
        install(&mut st, range(33, 64), batch);
        assert_eq!(st.adaptive_size, 16);
        assert_eq!(
            Arc::new(ProcessState::new(Labels::default()))
                .begin_refill(&mut st, batch)
                .size,
            16
        );
    }

    #[test]
    fn an_adaptive_size_holds_between_the_thresholds_and_never_falls_below_min() {
        let steady = AdaptiveBatch::new(4, 64)
            .grow_below(Duration::from_millis(1))
            .shrink_above(Duration::from_secs(3600));
        let mut st = CacheState::default();
        st.slot = Some(slot());
        st.adaptive_size = 32;
        st.current_since = Some(ago(Duration::from_secs(2)));
        install(&mut st, range(1, 32), Batch::Adaptive(steady));
        assert_eq!(st.adaptive_size, 32, "2 s is neither quick nor slow");

        let slow = steady.shrink_above(Duration::from_secs(1));
        st.adaptive_size = 4;
        st.current_since = Some(ago(Duration::from_secs(2)));
        install(&mut st, range(33, 36), Batch::Adaptive(slow));
        assert_eq!(st.adaptive_size, 4, "already at `min`");
    }

    #[tokio::test]
    async fn crossing_midnight_starts_the_new_days_counter_at_start() {
        let clock = before_midnight();
        let options = SequenceOptions {
            start: 100,
            ..daily()
        };
        let seq = clocked(Sequence::in_memory(options).unwrap(), &clock);
        assert_eq!(seq.next_id::<String>().await.unwrap(), "251122000100");
        assert_eq!(seq.next_id::<String>().await.unwrap(), "251122000101");
        clock.advance(SignedDuration::from_secs(1));
        assert_eq!(seq.next_id::<String>().await.unwrap(), "251123000100");
        assert_eq!(seq.next_id::<String>().await.unwrap(), "251123000101");
        assert_eq!(
            seq.current_key().unwrap(),
            CounterKey::of("daily", Some("20251123"), None)
        );
    }

    #[tokio::test]
    async fn values_cached_for_the_old_day_are_dropped_at_midnight() {
        let clock = before_midnight();
        let store = Arc::new(Recorder::default());
        let seq = clocked(
            Sequence::with_store(store.clone(), daily()).unwrap(),
            &clock,
        );
        assert_eq!(take(&seq, 2).await, [1, 2]);
        // 3..=10 in use and 11..=20 prefetched, all of the 22nd.
        clock.advance(SignedDuration::from_secs(1));
        assert_eq!(take(&seq, 10).await, (1..=10).collect::<Vec<_>>());
        let counters = store.counters();
        assert_eq!(
            counters
                .iter()
                .map(|c| c.contains("20251122"))
                .collect::<Vec<_>>(),
            [true, true, false, false],
            "{counters:?}"
        );
        assert_eq!(seq.stats().wasted, 8 + 10);
    }

    /// A refill of the old day still in flight at midnight is waited for, dropped when it
    /// lands, and the new day's first value comes from the new day's counter.
    #[tokio::test]
    async fn a_prefetch_of_the_old_day_landing_after_midnight_is_dropped() {
        let gate = Arc::new(Semaphore::new(1));
        let store = Arc::new(Recorder {
            gate: Some(gate.clone()),
            ..Recorder::default()
        });
        let clock = before_midnight();
        let seq = clocked(
            Sequence::with_store(store.clone(), daily()).unwrap(),
            &clock,
        );
        assert_eq!(seq.next_id::<String>().await.unwrap(), "251122000001");
        assert_eq!(store.sizes().len(), 2, "the prefetch waits at the gate");
        clock.advance(SignedDuration::from_secs(1));
        let (first, ()) = tokio::join!(seq.next_id::<String>(), async {
            // Opened once the caller waits for the refill in flight.
            tokio::task::yield_now().await;
            gate.add_permits(3);
        });
        assert_eq!(first.unwrap(), "251123000001");
        assert_eq!(seq.next_id::<String>().await.unwrap(), "251123000002");
        let counters = store.counters();
        assert!(
            counters[..2].iter().all(|c| c.contains("20251122")),
            "{counters:?}"
        );
        assert!(
            counters[2..].iter().all(|c| c.contains("20251123")),
            "{counters:?}"
        );
        let stats = seq.stats();
        assert_eq!(
            stats.wasted,
            9 + 10,
            "the rest of the old range and all of the prefetched one: {stats:?}"
        );
    }

    #[tokio::test]
    async fn the_clock_set_decides_the_period_until_the_system_clock_is_used_again() {
        let seq = Sequence::in_memory(daily()).unwrap();
        let today: String = seq.next_id().await.unwrap();
        let later = Arc::new(ManualClock::new("2126-01-05T08:00:00Z".parse().unwrap()));
        let seq = clocked(seq, &later);
        assert_eq!(seq.next_id::<String>().await.unwrap(), "260105000001");
        seq.use_system_clock();
        // Today again, after the two ranges of it that were dropped (unless the day changed
        // meanwhile).
        let again: String = seq.next_id().await.unwrap();
        if again[..6] == today[..6] {
            assert_eq!(again[6..], *"000021", "{today} then {again}");
        }
    }
}
