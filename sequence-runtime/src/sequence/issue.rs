//! Taking values: the next ID, bulk reservations, and what the model layer asks when an ID
//! meets a stored document (a value above the stored ones, a counter moved up).

use std::sync::Arc;
use std::time::Duration;

use mongodb::ClientSession;

use super::{Engine, Issued, Sequence};
use crate::error::{Error, Result};
use crate::id::{Bounds, IdRange, IdValue, Scope, Slot};
use crate::observability::{reserving, Mode, Timer};
use crate::observability::{CACHE, SKIP_AHEAD};
use crate::options::Batch;
use crate::process::{Later, Look, ProcessState, RangeCopy, Request};
use crate::store::Reservation;
use crate::strategy::{Counters, Maker, Origin};

/// The refusal of `operation` outside a session on a gapless sequence.
fn gapless_refusal(operation: &'static str) -> Error {
    Error::Unsupported {
        operation,
        strategy: "gapless",
        hint: "a number taken outside the insert's transaction would leave a gap if it were \
               not used: use `insert_with_id`, or `.session(..)` on `reserve` or `next_id`",
    }
}

/// Where a scoped insert's value comes from (see [`Sequence::first_call`]).
pub(crate) enum FirstCall {
    /// Its scope value's first value in a while: the caller takes it.
    Takes,
    /// The cache of its scope value.
    Cached(Arc<ProcessState>),
    /// Not a scope value's first value: the sequence gives it as `next_id` would.
    Other,
}

/// The value `value` of the counter of `slot` rendered as `T`, with where it came from.
fn rendered<T: IdValue>(value: i64, slot: Arc<Slot>) -> Result<(T, Issued)> {
    Ok((T::render(value, &slot.rendering)?, Issued { value, slot }))
}

impl Sequence {
    /// The next counter value. With `batch = 1` it comes from a round trip to the counter,
    /// shared with the callers of the same counter in this process that wait at the same time:
    /// one reservation of as many values as callers, handed out in arrival order, nothing kept
    /// (so at most one round trip per value). With larger batches it usually comes from
    /// memory; with the random strategy it is a draw, made without a round trip. For a
    /// formatted ID (prefix, padding) use [`next_id`](Self::next_id).
    pub async fn next(&self) -> Result<i64> {
        Ok(self.issue("next").await?.0)
    }

    /// The next ID, rendered as `T`: `"{prefix}{counter zero-padded to width}"` for `String`,
    /// the same digits as a number for integer types.
    pub async fn next_id<T: IdValue>(&self) -> Result<T> {
        let (value, slot) = self.issue("next_id").await?;
        T::render(value, &slot.rendering)
    }

    /// The next value and the slot it belongs to, for `operation` (`next`, `next_id`).
    ///
    /// Each call consumes a unit of the task's budget of Tokio's cooperative scheduling: a
    /// value from the cache or a draw is ready without a round trip, and a task taking them in
    /// a loop yields once it has spent its budget (see [`NextIdFuture`]).
    ///
    /// [`NextIdFuture`]: crate::action::NextIdFuture
    async fn issue(&self, operation: &'static str) -> Result<(i64, Arc<Slot>)> {
        tokio::task::coop::consume_budget().await;
        let engine = self.scoped_engine()?;
        let options = &self.state.options;
        if options.gapless {
            return Err(gapless_refusal(operation));
        }
        if let Some(value) = engine.maker.draw(engine.bounds)? {
            engine.shared.stats.issued(1);
            return Ok((value, self.slot()?));
        }
        let req = self.request(engine)?;
        let counters = req.counters;
        let cache = match &self.state.scope {
            _ if options.batch == Batch::Fixed(1) => None,
            // A scope value's cache from its second call on (see `process::ScopeCaches`).
            Some(scope) => self.scope_cache(engine, scope),
            None => Some(engine.shared.clone()),
        };
        match cache {
            Some(cache) => cache.next(&req).await,
            None => {
                let slot = self.slot()?;
                let origin = counters.origin(&slot);
                Ok((engine.shared.coalescer.one(origin).await?, slot))
            }
        }
    }

    /// What a call of the cache of `engine` needs to know about this sequence.
    fn request<'e>(&self, engine: &'e Engine) -> Result<Request<'e>> {
        Ok(self.request_from(engine, engine.maker.counters("next")?))
    }

    /// The request of a call of the cache of `engine` whose ranges come from `counters`.
    fn request_from<'e>(&self, engine: &'e Engine, counters: &'e Counters) -> Request<'e> {
        let options = &self.state.options;
        Request {
            format: &engine.format,
            batch: options.batch,
            prefetch_at: options.prefetch_at,
            counters,
        }
    }

    /// One look at the cache of this handle's counter, shared in this process (the hot path of
    /// models whose sequence is a plain counter with a batch), for a caller that keeps its copy
    /// of the cache's range in use in `copy`: the next value, or the rest of the call for
    /// [`finish_id`](Self::finish_id). `at_mark`: the value the caller took from `copy` if it
    /// was the one at the prefetch mark (see [`ProcessState::look`]). `None` if the options are
    /// invalid.
    pub(crate) fn look(&self, copy: &mut RangeCopy, at_mark: Option<i64>) -> Option<Look> {
        // As `request`, without building a `Result` of the error it cannot meet here.
        let engine = self.state.engine.as_ref().ok()?;
        let Maker::Counters(counters) = &*engine.maker else {
            return None;
        };
        let req = self.request_from(engine, counters);
        Some(engine.shared.look(&req, copy, at_mark))
    }

    /// The ID of the call that [`look`](Self::look) began, rendered as `T`, with the counter it
    /// came from: the cache is not looked at again before the refill, prefetch or wait that
    /// look decided.
    pub(crate) async fn finish_id<T: IdValue>(&self, later: Later) -> Result<(T, Issued)> {
        let engine = self.engine()?;
        let req = self.request(engine)?;
        let (value, slot) = engine.shared.finish(later, &req).await?;
        rendered(value, slot)
    }

    /// The cache of the scope value `scope` of this sequence, if it has one (its second call
    /// within a while); the caches forgotten meanwhile give their values back in the
    /// background.
    fn scope_cache(&self, engine: &Engine, scope: &Scope) -> Option<Arc<ProcessState>> {
        let found = engine.shared.scopes.cache_for(
            scope.canonical(),
            std::time::Instant::now(),
            |come_back| engine.shared.for_scope(scope.clone(), come_back),
        );
        if !found.forgotten.is_empty() {
            let seq = self.clone();
            let give_back = async move {
                if let Err(e) = seq.give_back_caches(found.forgotten).await {
                    tracing::debug!(target: CACHE, error = %e, "Scope caches not given back");
                }
            };
            // Without a runtime to give them back in, their values are left unused.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(give_back);
            }
        }
        found.cache
    }

    /// Where this handle's next value comes from, for the inserts that take a scope value's
    /// first value themselves: [`FirstCall::Takes`] for a scoped handle of one counter (not
    /// gapless) whose scope value has no cache, on its first call within a while or with
    /// `batch = 1`. Asking is that call, as `next` would make it (see `process::ScopeCaches`):
    /// a caller told `Takes` takes the value itself, with [`first_ranges`](Self::first_ranges)
    /// or [`issue_ids`](Self::issue_ids); one told `Cached` takes it with
    /// [`issue_id_from`](Self::issue_id_from), without looking for the cache again.
    pub(crate) fn first_call(&self) -> Result<FirstCall> {
        let engine = self.scoped_engine()?;
        let options = &self.state.options;
        let Some(scope) = &self.state.scope else {
            return Ok(FirstCall::Other);
        };
        if options.gapless || engine.maker.one_counter("first value").is_err() {
            return Ok(FirstCall::Other);
        }
        if options.batch == Batch::Fixed(1) {
            return Ok(FirstCall::Takes);
        }
        Ok(match self.scope_cache(engine, scope) {
            Some(cache) => FirstCall::Cached(cache),
            None => FirstCall::Takes,
        })
    }

    /// The next `n` values of each `(handle, n)` of `each` (handles of this sequence in
    /// distinct scope values), as the callers waiting together for first values take them: one
    /// reservation of all the counters at once (see
    /// [`CounterStore::reserve_many`](crate::store::CounterStore::reserve_many)); near a
    /// counter's end, fewer than asked. One result per handle, in order.
    pub(crate) async fn first_ranges(
        &self,
        each: &[(Sequence, u64)],
    ) -> Vec<Result<(IdRange, Arc<Slot>)>> {
        let engine = match self.engine() {
            Ok(engine) => engine,
            Err(e) => return each.iter().map(|_| Err(e.clone())).collect(),
        };
        let counters = match engine.maker.counters("next") {
            Ok(counters) => counters,
            Err(e) => return each.iter().map(|_| Err(e.clone())).collect(),
        };
        let slots: Vec<Result<Arc<Slot>>> = each.iter().map(|(seq, _)| seq.slot()).collect();
        let wanted: Vec<(Origin, u64)> = (slots.iter().zip(each))
            .filter_map(|(slot, (_, n))| Some((counters.origin(slot.as_ref().ok()?), *n)))
            .collect();
        let stats = &engine.shared.stats;
        let timer = Timer::start();
        let mut reserved = match wanted.as_slice() {
            [] => Vec::new(),
            [(origin, n)] => vec![origin.coalesced(stats, *n).await],
            _ => Origin::observed_together(stats, &wanted).await,
        }
        .into_iter();
        let took = timer.elapsed();
        slots
            .into_iter()
            .map(|slot| {
                let slot = slot?;
                let r = reserved
                    .next()
                    .expect("a reservation per counter asked for")?;
                stats.issued(r.range.len());
                // Each value was a call that waited for a counter round trip.
                (0..r.range.len()).for_each(|_| stats.waited(took));
                Ok((r.range, slot))
            })
            .collect()
    }

    /// `n` values in one round trip, in `session` if given, and the slot they belong to.
    pub(crate) async fn reserve_range(
        &self,
        n: u64,
        session: Option<&mut ClientSession>,
    ) -> Result<(IdRange, Arc<Slot>)> {
        let engine = self.engine()?;
        if n == 0 {
            return Err(Error::InvalidArgument {
                argument: "n",
                reason: "cannot reserve 0 IDs; ask for at least 1".into(),
            });
        }
        let r = match session {
            Some(session) => {
                let engine = self.counter_only("reserve in a session")?;
                let slot = self.slot()?;
                let r = engine
                    .store
                    .reserve(&slot.key, n, engine.bounds, Some(session));
                let stats = &engine.shared.stats;
                let (space, mode) = (Some(engine.bounds), Mode::Session);
                let r = reserving(stats, &slot.key, n, mode, space, r).await?;
                (r, slot)
            }
            None if self.state.options.gapless => return Err(gapless_refusal("reserve")),
            None => {
                let counters = engine.maker.counters("reserve")?;
                let slot = self.slot()?;
                let stats = &engine.shared.stats;
                (counters.reserve(stats, &slot, n).await?, slot)
            }
        };
        self.record(engine, n, r.0);
        Ok((r.0.range, r.1))
    }

    /// `n` IDs (at least 1) for a bulk insert outside a session, rendered as `T`, with the
    /// counter they came from: one contiguous range, the one reserved ahead for this call when
    /// it fits, else one reserved now; from the second call on, the next call's `n` values
    /// are reserved in the background while this one inserts (see `process/bulk.rs`).
    pub(crate) async fn issue_ids_ahead<T: IdValue>(&self, n: u64) -> Result<Vec<(T, Issued)>> {
        let engine = self.engine()?;
        if n == 0 || self.state.options.gapless {
            return self.issue_ids(n, None).await;
        }
        let counters = engine.maker.counters("reserve")?.clone();
        let slot = self.slot()?;
        let stats = engine.shared.stats.clone();
        let taken = engine
            .shared
            .bulk
            .take(n, &slot, move |slot, n| {
                let (counters, stats) = (counters.clone(), stats.clone());
                async move { counters.reserve(&stats, &slot, n).await }
            })
            .await?;
        let stats = &engine.shared.stats;
        let retries = taken.reservation.retries;
        if taken.reserved_ahead > 0 {
            stats.reserved(taken.reserved_ahead, retries);
        }
        if !taken.ahead {
            stats.reserved(n, retries);
        }
        stats.issued(n);
        if taken.unused > 0 {
            stats.wasted(taken.unused);
        }
        taken
            .reservation
            .range
            .iter()
            .map(|value| {
                let id = T::render(value, &slot.rendering)?;
                let slot = slot.clone();
                Ok((id, Issued { value, slot }))
            })
            .collect()
    }

    /// The next ID, rendered as `T`, with the counter it came from, reserved with a counter
    /// update in `session` (bypassing the cache): in its transaction, if one is started.
    pub(crate) async fn issue_id_in<T: IdValue>(
        &self,
        session: &mut ClientSession,
    ) -> Result<(T, Issued)> {
        let mut ids = self.issue_ids::<T>(1, Some(session)).await?;
        Ok(ids.pop().expect("one ID reserved"))
    }

    /// The next ID, rendered as `T`, with the counter it came from.
    pub(crate) async fn issue_id<T: IdValue>(&self) -> Result<(T, Issued)> {
        let (value, slot) = self.issue("next_id").await?;
        rendered(value, slot)
    }

    /// The next ID from `cache`, the cache of this handle's scope value that
    /// [`first_call`](Self::first_call) found, rendered as `T`, with the counter it came from.
    pub(crate) async fn issue_id_from<T: IdValue>(
        &self,
        cache: &Arc<ProcessState>,
    ) -> Result<(T, Issued)> {
        // As `issue`: a value ready at once consumes a unit of the task's budget.
        tokio::task::coop::consume_budget().await;
        let engine = self.scoped_engine()?;
        let (value, slot) = cache.next(&self.request(engine)?).await?;
        rendered(value, slot)
    }

    /// `n` contiguous IDs in one reservation (bypassing the cache), rendered as `T`, each with
    /// the counter it came from; in `session` if given.
    pub(crate) async fn issue_ids<T: IdValue>(
        &self,
        n: u64,
        session: Option<&mut ClientSession>,
    ) -> Result<Vec<(T, Issued)>> {
        let (range, slot) = self.reserve_range(n, session).await?;
        range
            .iter()
            .map(|value| {
                let id = T::render(value, &slot.rendering)?;
                Ok((
                    id,
                    Issued {
                        value,
                        slot: slot.clone(),
                    },
                ))
            })
            .collect()
    }

    /// `value` as an ID of type `I`, rendered for the one counter of a sequence without
    /// periods or scope.
    pub(crate) fn constant_id<I: IdValue>(&self, value: i64) -> Result<I> {
        let engine = self.engine()?;
        let slot = engine
            .format
            .constant()
            .expect("a sequence whose cache serves models has no periods");
        I::render(value, &slot.rendering)
    }

    /// `value` as issued by the counter this handle takes values from now.
    pub(crate) fn issued(&self, value: i64) -> Result<Issued> {
        Ok(Issued {
            value,
            slot: self.slot()?,
        })
    }

    /// What stored documents of the counter `issued` came from may hold: its values (of a
    /// ranges sequence, the slice of its shard), and the largest value to look for, above
    /// which the IDs belong to no counter of this sequence (the widest its rendering shows; of
    /// a shard, the slice's end, since the next shard's values follow).
    pub(crate) fn stored_domain(&self, issued: &Issued) -> Result<(Bounds, i64)> {
        let engine = self.engine()?;
        let counters = engine.maker.counters("skip ahead")?;
        Ok(counters.stored_domain(issued.value, &issued.slot, engine.bounds))
    }

    /// A new value in place of `issued`, which a stored document already uses: above `floor`,
    /// the highest value stored for its counter. From the cache if it still holds values
    /// above `floor`, else from one reservation above it (whose other values the cache
    /// keeps).
    pub(crate) async fn skip_ahead(&self, issued: &Issued, floor: i64) -> Result<Issued> {
        let engine = self.scoped_engine()?;
        let batch = self.state.options.batch;
        if let Some(scope) = &self.state.scope {
            // The scope value's cached values lie below the stored ones too: dropped, and the
            // value's next cache is filled above them.
            if let Some(cache) = engine.shared.scopes.forget(scope.canonical()) {
                cache.invalidate().await;
            }
        }
        let cached = batch != Batch::Fixed(1) && self.state.scope.is_none();
        if cached {
            let lowest = engine.maker.counters("skip ahead")?.lowest_of(issued.value);
            if let Some(value) = engine.shared.skip_past(lowest, floor, batch) {
                self.skipped(issued, floor, 1);
                return self.issued(value);
            }
        }
        let n = if cached {
            engine.shared.batch_size(batch)
        } else {
            1
        };
        let r = self.take_above(issued, n, floor).await?;
        let value = if cached {
            engine.shared.adopt(r, &issued.slot, batch)
        } else {
            self.record(engine, 1, r);
            r.range.first()
        };
        Ok(Issued {
            value,
            slot: issued.slot.clone(),
        })
    }

    /// `n` contiguous values above `floor` in one reservation (bypassing the cache), for the
    /// documents of a bulk insert that met stored IDs; `issued` is the value that collided.
    pub(crate) async fn reserve_above(
        &self,
        issued: &Issued,
        n: u64,
        floor: i64,
    ) -> Result<(IdRange, Arc<Slot>)> {
        let engine = self.scoped_engine()?;
        let r = self.take_above(issued, n, floor).await?;
        self.record(engine, n, r);
        Ok((r.range, issued.slot.clone()))
    }

    /// One reservation of `n` values above `floor` from the counter `issued` came from: the
    /// path of every skip ahead that goes to the counter.
    async fn take_above(&self, issued: &Issued, n: u64, floor: i64) -> Result<Reservation> {
        let engine = self.scoped_engine()?;
        let counters = engine.maker.counters("skip ahead")?;
        self.skipped(issued, floor, n);
        let stats = &engine.shared.stats;
        counters
            .reserve_above(stats, &issued.slot.key, issued.value, n, floor)
            .await
    }

    /// Counts and traces one skip ahead of `issued` past `floor`, for `n` values.
    fn skipped(&self, issued: &Issued, floor: i64, n: u64) {
        if let Ok(engine) = self.engine() {
            engine.shared.stats.skipped_ahead();
        }
        tracing::debug!(
            target: SKIP_AHEAD,
            sequence = %self.state.options.name,
            counter = %issued.slot.key,
            taken = issued.value,
            storedUpTo = floor,
            values = n,
            "Skipped ahead"
        );
    }

    /// Moves the counter `issued` came from up to `last` (never down): where gapless inserts
    /// that met stored IDs go on from.
    pub(crate) async fn raise(&self, issued: &Issued, last: i64) -> Result<()> {
        let engine = self.engine()?;
        let counters = engine.maker.counters("skip ahead")?;
        self.skipped(issued, last, 0);
        counters.raise(&issued.slot.key, issued.value, last).await
    }

    /// Waits, at most `within`, until no transaction of another session holds the counter this
    /// handle takes values from now: the counter update of a transaction met it.
    pub(crate) async fn wait_for_counter(&self, within: Duration) -> Result<()> {
        let engine = self.engine()?;
        let counters = engine.maker.counters("wait for a transaction")?;
        let slot = self.slot()?;
        tokio::time::timeout(within, counters.wait_for_transactions(&slot.key))
            .await
            .unwrap_or(Ok(()))
    }

    /// Counts `n` values that were taken but not used.
    pub(crate) fn record_wasted(&self, n: u64) {
        if let Ok(engine) = self.engine() {
            engine.shared.stats.wasted(n);
        }
    }

    /// Counts a reservation of `n` values, all handed out.
    fn record(&self, engine: &Engine, n: u64, r: Reservation) {
        engine.shared.stats.reserved(n, r.retries);
        engine.shared.stats.issued(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::Scope;
    use crate::options::SequenceOptions;

    fn memory(options: SequenceOptions) -> Sequence {
        Sequence::in_memory(options).unwrap()
    }

    /// Handles of one counter built apart (each thread builds its own handle of a model's
    /// sequence) share the first one's format when they render alike, so that a range one
    /// installed serves the others by address; a handle that renders otherwise keeps its own.
    #[tokio::test]
    async fn handles_built_apart_share_the_format_of_their_counter() {
        let uri = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=10";
        let db = mongodb::Client::with_uri_str(uri)
            .await
            .unwrap()
            .database("handles_share_formats");
        let format = |width: Option<u8>| {
            let mut options = SequenceOptions::builder("shared");
            if let Some(width) = width {
                options = options.width(width);
            }
            let seq = Sequence::new(&db, options.build()).unwrap();
            let format = seq.engine().unwrap().format.clone();
            format
        };
        let first = format(None);
        assert!(Arc::ptr_eq(&first, &format(None)));
        let wide = format(Some(6));
        assert!(!Arc::ptr_eq(&first, &wide));
        let slot = first.constant().unwrap();
        assert!(!wide.serves(slot, || unreachable!("no periods")));
        // The first stays the one shared.
        assert!(Arc::ptr_eq(&first, &format(None)));
    }

    #[tokio::test]
    async fn values_follow_each_other_from_start() {
        let seq = memory(SequenceOptions::builder("a").start(5).batch(3).build());
        let mut got = Vec::new();
        for _ in 0..7 {
            got.push(seq.next().await.unwrap());
        }
        assert_eq!(got, (5..12).collect::<Vec<_>>());
        let range = seq.reserve(4).await.unwrap();
        assert!(
            range.first() > 11,
            "a reservation bypasses the cache: {range:?}"
        );
        let stats = seq.stats();
        assert_eq!(stats.issued, 7 + 4);
        assert_eq!(
            stats.reserved % 3,
            4 % 3,
            "batches of 3 and one range of 4: {stats:?}"
        );
    }

    #[tokio::test]
    async fn ids_render_with_the_prefix_and_width() {
        let seq = memory(SequenceOptions::builder("t").prefix("T-").width(3).build());
        assert_eq!(seq.next_id::<String>().await.unwrap(), "T-001");
        let ids: Vec<String> = seq.reserve_ids(2).await.unwrap();
        assert_eq!(ids, ["T-002", "T-003"]);
        assert!(matches!(
            seq.next_id::<i64>().await,
            Err(Error::InvalidConfig { key: "prefix", .. })
        ));
    }

    #[tokio::test]
    async fn bad_calls_are_refused_with_what_to_do() {
        let seq = memory(SequenceOptions::builder("a").build());
        assert!(matches!(
            seq.reserve(0).await,
            Err(Error::InvalidArgument { argument: "n", .. })
        ));
        let gapless = memory(SequenceOptions::builder("g").gapless(true).build());
        match gapless.next().await {
            Err(e @ Error::Unsupported { .. }) => {
                assert!(e.to_string().contains("`.session(..)`"), "{e}")
            }
            other => panic!("a gapless sequence takes numbers in a session only: {other:?}"),
        }
        // The refusal names the call made, and its parts read as sentences.
        match gapless.next_id::<i64>().await {
            Err(e @ Error::Unsupported { hint, .. }) => {
                assert!(
                    e.to_string().starts_with(
                        "`next_id` is not available for `gapless` sequences; a number taken"
                    ),
                    "{e}"
                );
                assert!(hint.starts_with("a number taken"), "{hint}");
            }
            other => panic!("a gapless sequence takes numbers in a session only: {other:?}"),
        }
        let scoped = memory(SequenceOptions::builder("s").scope(["tenant"]).build());
        assert!(matches!(
            scoped.next().await,
            Err(Error::ScopeRequired { .. })
        ));
        let acme = scoped
            .in_scope(Scope::new().with("tenant", "acme"))
            .unwrap();
        assert_eq!(acme.next().await.unwrap(), 1);
    }

    #[tokio::test]
    async fn skipping_ahead_takes_a_value_above_the_stored_ones() {
        for batch in [1, 10] {
            let seq = memory(SequenceOptions::builder("k").batch(batch).build());
            let (first, issued) = seq.issue_id::<i64>().await.unwrap();
            assert_eq!(first, 1);
            let above = seq.skip_ahead(&issued, 40).await.unwrap();
            assert_eq!(above.value, 41, "batch {batch}");
            assert_eq!(
                seq.next().await.unwrap(),
                42,
                "batch {batch}: the counter moved past"
            );
            let (range, _) = seq.reserve_above(&above, 3, 100).await.unwrap();
            assert_eq!((range.first(), range.last()), (101, 103), "batch {batch}");
            assert_eq!(seq.stats().skipped_ahead, 2);
        }
    }
}
