//! The handle users hold: next ID, bulk reservation, admin operations, statistics.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use jiff::civil::DateTime;
use mongodb::Database;

use crate::bounds::Bounds;
use crate::cache::{Request, Shared};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::key::CounterKey;
use crate::memory::MemoryStore;
use crate::mongo_store::MongoStore;
use crate::options::{Batch, SequenceOptions};
use crate::period::{Format, Slot};
use crate::random;
use crate::range::IdRange;
use crate::registry;
use crate::scope::Scope;
use crate::stats::Stats;
use crate::store::{BoxFuture, CounterStore, Reservation};
use crate::strategy::Kind;

/// A handle on one sequence: cheap to clone, safe to share between tasks and threads.
///
/// Handles of the same sequence (same database, counters collection and name) in one process
/// share one cache of reserved values.
///
/// With a `prefix` that has date tokens, every period has a counter of its own, chosen from the
/// clock at each call; with `scope` fields, every scope value has one (see
/// [`in_scope`](Self::in_scope)). [`next`](Self::next) and [`reserve`](Self::reserve) return
/// counter values; [`next_id`](Self::next_id) and [`reserve_ids`](Self::reserve_ids) return them
/// rendered as IDs (prefix, zero-padding).
///
/// Every [`Strategy`](crate::Strategy) that makes numbers has `next`: the counter and sharded
/// strategies also `reserve` contiguous ranges, and the random strategy draws a value (unique
/// only once inserted: see [`SequentialId`](crate::SequentialId)). Operations a strategy does
/// not have fail with [`Error::Unsupported`].
#[derive(Clone, Debug)]
pub struct Sequence {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Arc<dyn CounterStore>,
    shared: Arc<Shared>,
    /// The key of the sequence without period or scope.
    key: CounterKey,
    bounds: Bounds,
    options: SequenceOptions,
    format: Arc<Format>,
    /// The scope values this handle is bound to.
    scope: Option<Scope>,
    /// Why the options were invalid, for a sequence that fails every operation.
    failure: Option<Error>,
    /// How the values are made.
    kind: Arc<Kind>,
}

impl Sequence {
    /// The sequence described by `options`, with its counter in `db`.
    ///
    /// Fails with [`Error::InvalidName`] or [`Error::InvalidOptions`] before anything is sent
    /// to the server.
    pub fn new(db: &Database, options: SequenceOptions) -> Result<Self> {
        let (bounds, format) = options.checked()?;
        let store = MongoStore::new(
            db,
            &options.counters,
            options.layout.clone(),
            options.write_concern.clone(),
        )?;
        let key = CounterKey::named(options.name.clone());
        let store: Arc<dyn CounterStore> = Arc::new(store);
        let registry = Some((db.name(), options.counters.as_str()));
        let kind = Kind::new(&options, &store, &key, bounds, registry);
        let shared = registry::shared(db.name(), &options.counters, &kind.cache_id(&key, bounds));
        Ok(Self::assemble(
            store, shared, key, bounds, format, options, kind,
        ))
    }

    /// A sequence whose counter lives in process memory (see [`MemoryStore`]): for unit tests.
    pub fn in_memory(options: SequenceOptions) -> Result<Self> {
        Self::with_store(Arc::new(MemoryStore::new()), options)
    }

    /// A sequence whose counter lives in `store`, with a cache of its own.
    pub fn with_store(store: Arc<dyn CounterStore>, options: SequenceOptions) -> Result<Self> {
        let (bounds, format) = options.checked()?;
        let key = CounterKey::named(options.name.clone());
        let kind = Kind::new(&options, &store, &key, bounds, None);
        Ok(Self::assemble(
            store,
            Arc::default(),
            key,
            bounds,
            format,
            options,
            kind,
        ))
    }

    /// A sequence whose every operation fails with `error`.
    pub(crate) fn failing(error: Error) -> Self {
        let options = SequenceOptions::builder("invalid").build();
        let (bounds, format) = options.checked().expect("valid options");
        let mut seq = Self::assemble(
            Arc::new(FailingStore(error.clone())),
            Arc::default(),
            CounterKey::named("invalid"),
            bounds,
            format,
            options,
            Kind::Counter,
        );
        Arc::get_mut(&mut seq.inner)
            .expect("not shared yet")
            .failure = Some(error);
        seq
    }

    fn assemble(
        store: Arc<dyn CounterStore>,
        shared: Arc<Shared>,
        key: CounterKey,
        bounds: Bounds,
        format: Format,
        options: SequenceOptions,
        kind: Kind,
    ) -> Self {
        Sequence {
            inner: Arc::new(Inner {
                store,
                shared,
                key,
                bounds,
                options,
                format: Arc::new(format),
                scope: None,
                failure: None,
                kind: Arc::new(kind),
            }),
        }
    }

    /// The options of this sequence.
    pub fn options(&self) -> &SequenceOptions {
        &self.inner.options
    }

    /// The key of the sequence's counter without period or scope (`_id: "<name>"`); see
    /// [`current_key`](Self::current_key) for the counter in use now. Of a sharded sequence:
    /// the name its shards' keys `{ seq: <name>, shard: i }` are made of.
    pub fn key(&self) -> &CounterKey {
        &self.inner.key
    }

    /// The values this sequence issues: `start..=max`, or the `digits` range.
    pub(crate) fn space(&self) -> Bounds {
        self.inner.bounds
    }

    /// Counts `n` random draws that collided with existing IDs.
    pub(crate) fn record_collisions(&self, n: u64) {
        self.inner.shared.stats.collided(n);
    }

    /// The key of the counter in use now: the current period's, in this handle's scope.
    pub fn current_key(&self) -> Result<CounterKey> {
        Ok(self.inner.slot()?.key.clone())
    }

    /// This sequence in the scope `scope`: a handle whose operations (`next`, `reserve`,
    /// `current`, `set_next`, `reset`, `delete`) use the counter of those values.
    ///
    /// The scope must have exactly the sequence's `scope` fields. Scoped counters are not
    /// cached (one round trip per [`next`](Self::next); [`reserve`](Self::reserve) takes any
    /// number in one), so that a process does not hold ranges for every scope value it has
    /// seen; statistics are shared with the unscoped handle.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use mongo_sequence_runtime::{Scope, Sequence, SequenceOptions};
    /// let seq = Sequence::in_memory(SequenceOptions::builder("order").scope(["tenant"]).build())?;
    /// let acme = seq.in_scope(Scope::new().with("tenant", "acme"))?;
    /// let globex = seq.in_scope(Scope::new().with("tenant", "globex"))?;
    /// assert_eq!(acme.next().await?, 1);
    /// assert_eq!(acme.next().await?, 2);
    /// assert_eq!(globex.next().await?, 1);
    /// # Ok::<(), mongo_sequence_runtime::Error>(()) }).unwrap();
    /// ```
    pub fn in_scope(&self, scope: Scope) -> Result<Sequence> {
        let inner = &*self.inner;
        if let Some(e) = &inner.failure {
            return Err(e.clone());
        }
        scope.check(&inner.options.name, &inner.options.scope)?;
        Ok(Sequence {
            inner: Arc::new(Inner {
                store: inner.store.clone(),
                shared: inner.shared.clone(),
                key: inner.key.clone(),
                bounds: inner.bounds,
                options: inner.options.clone(),
                format: inner.format.clone(),
                scope: Some(scope),
                failure: None,
                kind: inner.kind.clone(),
            }),
        })
    }

    /// The scope this handle is bound to.
    pub fn scope(&self) -> Option<&Scope> {
        self.inner.scope.as_ref()
    }

    /// The next counter value. With `batch = 1` this is one round trip; with larger batches it
    /// usually comes from memory; with the random strategy it is a draw, made without a round
    /// trip. For a formatted ID (prefix, padding) use [`next_id`](Self::next_id).
    pub async fn next(&self) -> Result<i64> {
        Ok(self.inner.issue().await?.0)
    }

    /// The next ID, rendered as `T`: `"{prefix}{counter zero-padded to width}"` for `String`,
    /// the same digits as a number for integer types.
    pub async fn next_id<T: IdValue>(&self) -> Result<T> {
        let (value, slot) = self.inner.issue().await?;
        T::render(value, &slot.rendering)
    }

    /// Reserves `n` contiguous IDs in one round trip (bypassing the cache), for bulk inserts. A
    /// sharded sequence takes them from one shard (skipping the shards with fewer left).
    pub async fn reserve(&self, n: u64) -> Result<IdRange> {
        Ok(self.inner.reserve(n).await?.0)
    }

    /// Reserves `n` contiguous IDs in `session`, bypassing the cache: inside the session's
    /// transaction, if one is started, so that the numbers are consumed only if it commits
    /// (this is how gapless numbering and `insert_with_id_in_session` work); otherwise as a
    /// causally consistent operation of the session. Counter strategy only.
    pub async fn reserve_in_session(
        &self,
        n: u64,
        session: &mut mongodb::ClientSession,
    ) -> Result<IdRange> {
        Ok(self.inner.reserve_in_session(n, session).await?.0)
    }

    /// Like [`reserve_in_session`](Self::reserve_in_session), with the values rendered as `T`
    /// (see [`next_id`](Self::next_id)).
    pub async fn reserve_ids_in_session<T: IdValue>(
        &self,
        n: u64,
        session: &mut mongodb::ClientSession,
    ) -> Result<Vec<T>> {
        let (range, slot) = self.inner.reserve_in_session(n, session).await?;
        range
            .iter()
            .map(|value| T::render(value, &slot.rendering))
            .collect()
    }

    /// Reserves `n` contiguous IDs in one round trip and renders them as `T` (see
    /// [`next_id`](Self::next_id)).
    pub async fn reserve_ids<T: IdValue>(&self, n: u64) -> Result<Vec<T>> {
        let (range, slot) = self.inner.reserve(n).await?;
        range
            .iter()
            .map(|value| T::render(value, &slot.rendering))
            .collect()
    }

    /// The last value issued according to the counter document (`None`: no counter yet).
    /// Values cached by processes are counted as issued.
    pub async fn current(&self) -> Result<Option<i64>> {
        let inner = &*self.inner;
        inner.counter_only("current")?;
        let slot = inner.slot()?;
        inner.store.last_issued(&slot.key, inner.bounds).await
    }

    /// Makes `next` the next value issued. Refuses to move the counter backwards unless
    /// [`force`](SetNext::force)d, since that could reissue IDs. Invalidates the values cached
    /// in this process.
    ///
    /// ```no_run
    /// # async fn f(seq: mongo_sequence_runtime::Sequence) -> mongo_sequence_runtime::Result<()> {
    /// seq.set_next(10_000).await?;            // after importing documents 1..9_999
    /// seq.set_next(1).force(true).await?;     // back to the start, knowingly
    /// # Ok(()) }
    /// ```
    pub fn set_next(&self, next: i64) -> SetNext<'_> {
        SetNext {
            seq: self,
            next,
            force: false,
        }
    }

    /// Puts the counter back so that the next value is `start` (of a sharded sequence: every
    /// shard back to the start of its slice, one round trip per shard). Invalidates cached
    /// values.
    pub async fn reset(&self) -> Result<()> {
        if let Kind::Sharded(shards) = &*self.inner.kind {
            self.inner.shared.invalidate().await;
            return shards.reset().await;
        }
        self.set_next(self.inner.bounds.start).force(true).await
    }

    /// Deletes the counter document (of a sharded sequence: those of all its shards, one round
    /// trip per shard); the next use starts again at `start`. Returns whether it existed.
    /// Invalidates cached values.
    pub async fn delete(&self) -> Result<bool> {
        let inner = &*self.inner;
        if let Kind::Sharded(shards) = &*inner.kind {
            inner.shared.invalidate().await;
            return shards.delete().await;
        }
        inner.counter_only("delete")?;
        let slot = inner.slot()?;
        inner.shared.invalidate().await;
        inner.store.delete(&slot.key).await
    }

    /// Gives the unused values cached in this process back to the counter, where nobody has
    /// advanced it since they were reserved (compare-and-set); otherwise they are counted as
    /// wasted. Returns how many values were given back. Call it on graceful shutdown: a process
    /// that stops without it loses at most the ranges it holds (one, plus one prefetched).
    pub async fn release(&self) -> Result<u64> {
        let inner = &*self.inner;
        let (current, standby, slot) = inner.shared.take_all().await;
        let Some(slot) = slot else {
            return Ok(0);
        };
        let mut given_back = 0;
        // The standby range is the later one: give it back first, then the current one.
        for range in [standby, current].into_iter().flatten() {
            let key = match &*inner.kind {
                Kind::Sharded(shards) => shards.key_of(range),
                _ => Some(slot.key.clone()),
            };
            let Some(key) = key else {
                inner.shared.stats.wasted(range.len());
                continue;
            };
            let back = inner
                .store
                .compare_and_set(&key, range.last(), range.first() - 1)
                .await?;
            if back {
                if let Kind::Sharded(shards) = &*inner.kind {
                    shards.gave_back(range.first());
                }
                given_back += range.len();
                inner.shared.stats.released(range.len());
            } else {
                inner.shared.stats.wasted(range.len());
            }
        }
        Ok(given_back)
    }

    /// Deletes the counters of the periods before the one that `before` falls in (in every
    /// scope) and returns how many it deleted: housekeeping for sequences with a date prefix,
    /// whose counters accumulate one per period.
    ///
    /// `before` is a civil date or date-time in the sequence's time zone, truncated to the
    /// period's resolution (`2025-11-01` for a monthly prefix means November 2025). Counters of
    /// other sequences and of `before`'s period and later are never touched. A `before` in a
    /// period after the current one is refused with [`Error::InvalidOptions`], since that would
    /// delete the current period's counter and make its IDs start over.
    ///
    /// Purge only periods the clock will not return to: a deleted period's counter would start
    /// again at `start`.
    pub async fn purge_periods_before(&self, before: impl Into<DateTime>) -> Result<u64> {
        let inner = &*self.inner;
        let name = &inner.options.name;
        let format = &inner.format;
        let before = before.into();
        let (Some(given), Some(current)) = (
            format.period_of(before),
            format.period_at(inner.shared.now(&inner.options.clock)),
        ) else {
            return Err(Error::InvalidOptions(format!(
                "sequence `{name}` has no date tokens in its `prefix`, so it has no periods to purge"
            )));
        };
        if given > current {
            return Err(Error::InvalidOptions(format!(
                "refusing to purge the periods of `{name}` before {}: that is after the current \
                 period {}; give a date in the current period or earlier",
                format.canonical(given),
                format.canonical(current)
            )));
        }
        inner
            .store
            .delete_periods_before(name, &format.canonical(given))
            .await
    }

    /// Makes every handle of this sequence in this process (same database, counters collection
    /// and name; for [`with_store`](Self::with_store) handles, this handle and its clones) read
    /// the time from `clock` instead of their own. This is how tests move the clock of a model,
    /// whose insert methods build their handles from the model's configuration:
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use mongo_sequence_runtime::{ManualClock, Sequence};
    /// # fn f(seq: Sequence) {
    /// // seq = Invoice::sequence(&invoices)
    /// let clock = Arc::new(ManualClock::new("2025-11-22T22:59:00Z".parse().unwrap()));
    /// seq.override_clock(clock.clone());
    /// // … insert, move the clock past midnight, insert again …
    /// seq.clear_clock_override();
    /// # }
    /// ```
    pub fn override_clock(&self, clock: Arc<dyn Clock>) {
        self.inner.shared.set_clock(Some(clock));
    }

    /// Removes the clock set by [`override_clock`](Self::override_clock).
    pub fn clear_clock_override(&self) {
        self.inner.shared.set_clock(None);
    }

    /// What this sequence did in this process (shared by all handles of the same sequence).
    pub fn stats(&self) -> Stats {
        self.inner.shared.stats.snapshot()
    }
}

impl Inner {
    /// Fails for a scoped sequence without scope values.
    fn check_scope(&self) -> Result<()> {
        if let Some(e) = &self.failure {
            return Err(e.clone());
        }
        if self.scope.is_none() && !self.options.scope.is_empty() {
            return Err(Error::ScopeRequired {
                counter: self.options.name.clone(),
                fields: self
                    .options
                    .scope
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(())
    }

    /// The slot in use now, for the calls that bypass the cache.
    fn slot(&self) -> Result<Arc<Slot>> {
        self.check_scope()?;
        let slot = self.shared.direct_slot(&self.format, &self.options.clock);
        Ok(match &self.scope {
            Some(scope) => self.format.scoped(&slot, scope),
            None => slot,
        })
    }

    /// Fails unless the sequence is one counter (per period and scope).
    fn counter_only(&self, operation: &'static str) -> Result<()> {
        match *self.kind {
            Kind::Counter => Ok(()),
            _ => Err(self.kind.unsupported(operation)),
        }
    }

    /// Reserves exactly `n` contiguous values of `slot`: from its counter, or from one shard.
    async fn reserve_exact(&self, slot: &Slot, n: u64) -> Result<Reservation> {
        match &*self.kind {
            Kind::Counter => self.store.reserve(&slot.key, n, self.bounds).await,
            Kind::Sharded(shards) => shards.reserve(n, false).await,
            other => Err(other.unsupported("reserve")),
        }
    }

    /// The next value and the slot it belongs to.
    async fn issue(&self) -> Result<(i64, Arc<Slot>)> {
        self.check_scope()?;
        match &*self.kind {
            Kind::Counter | Kind::Sharded(_) => {}
            Kind::Random => {
                let value = random::draw(self.bounds)?;
                self.shared.stats.issued(1);
                return Ok((value, self.slot()?));
            }
            other => return Err(other.unsupported("next")),
        }
        if self.options.batch == Batch::Fixed(1) || self.scope.is_some() {
            let slot = self.slot()?;
            let r = self.reserve_exact(&slot, 1).await?;
            self.shared.stats.reserved(1, r.retries);
            self.shared.stats.issued(1);
            self.shared.stats.waited();
            return Ok((r.range.first(), slot));
        }
        let req = Request {
            store: &self.store,
            format: &self.format,
            clock: &self.options.clock,
            bounds: self.bounds,
            batch: self.options.batch,
            prefetch_at: self.options.prefetch_at,
            shards: match &*self.kind {
                Kind::Sharded(shards) => Some(shards),
                _ => None,
            },
        };
        self.shared.next(&req).await
    }

    /// `n` values in one round trip and the slot they belong to.
    async fn reserve(&self, n: u64) -> Result<(IdRange, Arc<Slot>)> {
        if n == 0 {
            return Err(Error::InvalidOptions(
                "cannot reserve 0 IDs; ask for at least 1".into(),
            ));
        }
        let slot = self.slot()?;
        let r = self.reserve_exact(&slot, n).await?;
        self.shared.stats.reserved(n, r.retries);
        self.shared.stats.issued(n);
        Ok((r.range, slot))
    }

    /// `n` values reserved in `session` and the slot they belong to.
    async fn reserve_in_session(
        &self,
        n: u64,
        session: &mut mongodb::ClientSession,
    ) -> Result<(IdRange, Arc<Slot>)> {
        if n == 0 {
            return Err(Error::InvalidOptions(
                "cannot reserve 0 IDs; ask for at least 1".into(),
            ));
        }
        self.counter_only("reserve_in_session")?;
        let slot = self.slot()?;
        let r = self
            .store
            .reserve_in_session(&slot.key, n, self.bounds, session)
            .await?;
        self.shared.stats.reserved(n, r.retries);
        self.shared.stats.issued(n);
        Ok((r.range, slot))
    }
}

/// The action returned by [`Sequence::set_next`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct SetNext<'a> {
    seq: &'a Sequence,
    next: i64,
    force: bool,
}

impl SetNext<'_> {
    /// Allows moving the counter backwards.
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
}

impl<'a> IntoFuture for SetNext<'a> {
    type Output = Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let inner = &*self.seq.inner;
            let bounds = inner.bounds;
            if self.next < bounds.start || self.next > bounds.max {
                return Err(Error::InvalidOptions(format!(
                    "next value {} is outside start..=max ({}..={})",
                    self.next, bounds.start, bounds.max
                )));
            }
            inner.counter_only("set_next")?;
            let slot = inner.slot()?;
            inner.shared.invalidate().await;
            inner
                .store
                .set_last_issued(&slot.key, self.next - 1, self.force, bounds)
                .await
        })
    }
}

/// The store of a sequence whose options were invalid: every operation returns the error.
#[derive(Debug)]
struct FailingStore(Error);

impl FailingStore {
    fn fail<'a, T: Send + 'a>(&self) -> BoxFuture<'a, Result<T>> {
        let e = self.0.clone();
        Box::pin(async move { Err(e) })
    }
}

impl CounterStore for FailingStore {
    fn reserve<'a>(
        &'a self,
        _: &'a CounterKey,
        _: u64,
        _: Bounds,
    ) -> BoxFuture<'a, Result<Reservation>> {
        self.fail()
    }

    fn last_issued<'a>(
        &'a self,
        _: &'a CounterKey,
        _: Bounds,
    ) -> BoxFuture<'a, Result<Option<i64>>> {
        self.fail()
    }

    fn set_last_issued<'a>(
        &'a self,
        _: &'a CounterKey,
        _: i64,
        _: bool,
        _: Bounds,
    ) -> BoxFuture<'a, Result<()>> {
        self.fail()
    }

    fn compare_and_set<'a>(
        &'a self,
        _: &'a CounterKey,
        _: i64,
        _: i64,
    ) -> BoxFuture<'a, Result<bool>> {
        self.fail()
    }

    fn delete<'a>(&'a self, _: &'a CounterKey) -> BoxFuture<'a, Result<bool>> {
        self.fail()
    }

    fn location(&self) -> String {
        "nowhere (invalid options)".to_owned()
    }
}
