//! The handle users hold: next ID, bulk reservation, admin operations, statistics.

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use jiff::civil::DateTime;
use mongodb::bson::Document;
use mongodb::{ClientSession, Collection, Database};

use crate::engine::{
    self, Kind, Origin, Request, Shared, Source, Stats, SyncReport, SyncedCounter, Target,
};
use crate::error::{Error, Result};
use crate::options::{Batch, SequenceConfig, SequenceOptions};
use crate::store::{CounterStore, Deployment, MemoryStore, MongoStore, Reservation};
use crate::values::{Bounds, Clock, CounterKey, Format, IdRange, IdValue, Scope, Slot};
use mongo_sequence_rules::limits::pow10;

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
///
/// A handle built from an invalid [`SequenceConfig`] (see [`SequenceConfig::sequence`]) holds
/// the configuration's error: every operation that can fail returns it, and nothing is sent to
/// the server.
#[derive(Clone, Debug)]
pub struct Sequence {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: SequenceOptions,
    /// The key of the sequence without period or scope.
    key: CounterKey,
    /// The scope values this handle is bound to.
    scope: Option<Scope>,
    /// What makes the values, or why the options cannot make any.
    engine: std::result::Result<Engine, Error>,
}

/// What a sequence with valid options makes its values with.
#[derive(Clone, Debug)]
struct Engine {
    store: Arc<dyn CounterStore>,
    /// The cache and statistics, shared with the other handles of the sequence.
    shared: Arc<Shared>,
    bounds: Bounds,
    format: Arc<Format>,
    kind: Arc<Kind>,
}

/// A value handed out, with the counter it came from: what a collision with a stored document
/// needs to skip that counter ahead.
#[derive(Clone, Debug)]
pub(crate) struct Issued {
    /// The counter value.
    pub(crate) value: i64,
    /// The counter (period and scope) and how its values render.
    pub(crate) slot: Arc<Slot>,
}

/// The refusal of `operation` outside a session on a gapless sequence.
fn gapless_refusal(operation: &'static str) -> Error {
    Error::Unsupported {
        operation,
        strategy: "gapless",
        hint: "; a number taken outside the insert's transaction would leave a gap if it \
               were not used: use `insert_with_id`, or `.session(..)` on `reserve` or `next_id`",
    }
}

impl Sequence {
    /// The sequence described by `options`, with its counter in `db`.
    ///
    /// Fails with [`Error::InvalidName`] or [`Error::InvalidConfig`] before anything is sent
    /// to the server.
    ///
    /// ```no_run
    /// # async fn f(client: mongodb::Client) -> mongo_sequence_runtime::Result<()> {
    /// use mongo_sequence_runtime::{Sequence, SequenceOptions};
    ///
    /// let db = client.database("shop");
    /// let orders = Sequence::new(&db, SequenceOptions::builder("order").batch(25).build())?;
    /// let id: i64 = orders.next().await?;
    /// let ticket: String = Sequence::new(
    ///     &db,
    ///     SequenceOptions::builder("ticket").prefix("T-YYMM-").width(4).build(),
    /// )?
    /// .next_id()
    /// .await?; // "T-2511-0001"
    /// # let _ = (id, ticket);
    /// # Ok(()) }
    /// ```
    pub fn new(db: &Database, options: SequenceOptions) -> Result<Self> {
        let seq = Self::build(db, options);
        seq.engine()?;
        Ok(seq)
    }

    /// The sequence of `options` in `db`: one that holds the error if they are invalid.
    fn build(db: &Database, options: SequenceOptions) -> Self {
        Self::build_in(db, Deployment::of_database(db), options)
    }

    /// The sequence of `options` in `db` of `deployment`.
    pub(crate) fn build_in(
        db: &Database,
        deployment: Deployment,
        options: SequenceOptions,
    ) -> Self {
        let checked = options.checked().and_then(|(bounds, format)| {
            let store = MongoStore::in_deployment(
                db,
                deployment,
                &options.counters,
                options.layout.clone(),
                options.write_concern.clone(),
            )?;
            Ok((bounds, format, store))
        });
        let (bounds, format, store) = match checked {
            Ok(parts) => parts,
            Err(e) => return Self::invalid(options, e),
        };
        let store: Arc<dyn CounterStore> = Arc::new(store);
        let key = CounterKey::named(options.name.clone());
        let place = engine::place(deployment, db.name(), &options.counters);
        let kind = Kind::new(&options, &store, &key, bounds, Some(&place));
        let shared = engine::shared(&place, &kind.cache_id(&key));
        Self::assemble(options, key, store, shared, bounds, format, kind)
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
            options,
            key,
            store,
            Arc::default(),
            bounds,
            format,
            kind,
        ))
    }

    fn assemble(
        options: SequenceOptions,
        key: CounterKey,
        store: Arc<dyn CounterStore>,
        shared: Arc<Shared>,
        bounds: Bounds,
        format: Format,
        kind: Kind,
    ) -> Self {
        let engine = Engine {
            store,
            shared,
            bounds,
            format: Arc::new(format),
            kind: Arc::new(kind),
        };
        Sequence {
            inner: Arc::new(Inner {
                options,
                key,
                scope: None,
                engine: Ok(engine),
            }),
        }
    }

    /// The sequence of `options`, which `error` says are invalid: every fallible operation
    /// returns `error`.
    fn invalid(options: SequenceOptions, error: Error) -> Self {
        Sequence {
            inner: Arc::new(Inner {
                key: CounterKey::named(options.name.clone()),
                options,
                scope: None,
                engine: Err(error),
            }),
        }
    }

    /// The engine, or the error of invalid options.
    fn engine(&self) -> Result<&Engine> {
        self.inner.engine.as_ref().map_err(Clone::clone)
    }

    /// The first value of the sequence's counters.
    pub(crate) fn start(&self) -> Result<i64> {
        Ok(self.engine()?.bounds.start)
    }

    /// The options of this sequence.
    pub fn options(&self) -> &SequenceOptions {
        &self.inner.options
    }

    /// The key of the sequence's counter without period or scope (`_id: "<name>"`); see
    /// [`current_key`](Self::current_key) for the counter in use now. Of a ranges sequence:
    /// the name its shards' keys `{ seq: <name>, shard: i }` are made of.
    pub fn key(&self) -> &CounterKey {
        &self.inner.key
    }

    /// The values this sequence issues: `start..=max`, or the `digits` range.
    pub(crate) fn space(&self) -> Result<Bounds> {
        Ok(self.engine()?.bounds)
    }

    /// Counts `n` random draws that collided with existing IDs.
    pub(crate) fn record_collisions(&self, n: u64) {
        if let Ok(engine) = self.engine() {
            engine.shared.stats.collided(n);
        }
    }

    /// The key of the counter in use now: the current period's, in this handle's scope.
    pub fn current_key(&self) -> Result<CounterKey> {
        Ok(self.slot()?.key.clone())
    }

    /// This sequence in the scope `scope`: a handle whose operations (`next`, `reserve`,
    /// `current`, `set_next`, `reset`, `delete`) use the counter of those values.
    ///
    /// The scope must have exactly the sequence's `scope` fields. Scoped counters are not
    /// cached (at most one round trip per [`next`](Self::next), shared by the callers of the
    /// same scope waiting together; [`reserve`](Self::reserve) takes any number in one), so
    /// that a process does not hold ranges for every scope value it has seen; statistics are
    /// shared with the unscoped handle.
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
        let engine = self.engine()?;
        let options = &self.inner.options;
        scope.check(&options.name, &options.scope)?;
        Ok(Sequence {
            inner: Arc::new(Inner {
                options: options.clone(),
                key: self.inner.key.clone(),
                scope: Some(scope),
                engine: Ok(engine.clone()),
            }),
        })
    }

    /// The scope this handle is bound to.
    pub fn scope(&self) -> Option<&Scope> {
        self.inner.scope.as_ref()
    }

    /// The next counter value. With `batch = 1` it comes from a round trip to the counter,
    /// shared with the callers of the same counter in this process that wait at the same time:
    /// one reservation of as many values as callers, handed out in arrival order, nothing kept
    /// (so at most one round trip per value). With larger batches it usually comes from
    /// memory; with the random strategy it is a draw, made without a round trip. For a
    /// formatted ID (prefix, padding) use [`next_id`](Self::next_id).
    pub async fn next(&self) -> Result<i64> {
        Ok(self.issue().await?.0)
    }

    /// The next ID, rendered as `T`: `"{prefix}{counter zero-padded to width}"` for `String`,
    /// the same digits as a number for integer types.
    pub async fn next_id<T: IdValue>(&self) -> Result<T> {
        let (value, slot) = self.issue().await?;
        T::render(value, &slot.rendering)
    }

    /// Reserves `n` contiguous IDs in one round trip (bypassing the cache), for bulk inserts. A
    /// ranges sequence takes them from one shard (skipping the shards with fewer left).
    ///
    /// In a session ([`Reserve::session`], counter strategy): inside the session's
    /// transaction, if one is started, so that the numbers are consumed only if it commits
    /// (this is how gapless numbering and inserts in a session work); otherwise as a causally
    /// consistent operation of the session.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use mongo_sequence_runtime::{Sequence, SequenceOptions};
    /// let seq = Sequence::in_memory(SequenceOptions::builder("order").build())?;
    /// let range = seq.reserve(10).await?;
    /// assert_eq!((range.first(), range.last()), (1, 10));
    /// # Ok::<(), mongo_sequence_runtime::Error>(()) }).unwrap();
    /// ```
    pub fn reserve(&self, n: u64) -> Reserve<'_> {
        Reserve {
            seq: self,
            n,
            session: None,
        }
    }

    /// Reserves `n` contiguous IDs in one round trip and renders them as `T` (see
    /// [`next_id`](Self::next_id)); takes a session as [`reserve`](Self::reserve) does.
    pub fn reserve_ids<T: IdValue>(&self, n: u64) -> ReserveIds<'_, T> {
        ReserveIds {
            reserve: self.reserve(n),
            ids: PhantomData,
        }
    }

    /// The last value issued according to the counter document (`None`: no counter yet).
    /// Values cached by processes are counted as issued.
    pub async fn current(&self) -> Result<Option<i64>> {
        let engine = self.counter_only("current")?;
        let slot = self.slot()?;
        engine.store.last_issued(&slot.key, engine.bounds).await
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

    /// Puts the counter back so that the next value is `start` (of a ranges sequence: every
    /// shard back to the start of its slice, one round trip per shard). Invalidates cached
    /// values.
    pub async fn reset(&self) -> Result<()> {
        let engine = self.engine()?;
        if let Kind::Sharded(shards) = &*engine.kind {
            engine.shared.invalidate().await;
            return shards.reset().await;
        }
        self.set_next(engine.bounds.start).force(true).await
    }

    /// Deletes the counter document (of a ranges sequence: those of all its shards, one round
    /// trip per shard); the next use starts again at `start`. Returns whether it existed.
    /// Invalidates cached values.
    pub async fn delete(&self) -> Result<bool> {
        let engine = self.engine()?;
        if let Kind::Sharded(shards) = &*engine.kind {
            engine.shared.invalidate().await;
            return shards.delete().await;
        }
        self.counter_only("delete")?;
        let slot = self.slot()?;
        engine.shared.invalidate().await;
        engine.store.delete(&slot.key).await
    }

    /// Gives the unused values cached in this process back to the counter, where nobody has
    /// advanced it since they were reserved (compare-and-set); otherwise they are counted as
    /// wasted. Returns how many values were given back. Call it on graceful shutdown: a process
    /// that stops without it loses at most the ranges it holds (one, plus one prefetched; from
    /// a batch of [`Batch::AHEAD_FROM`] on, each up to [`Batch::MAX_AHEAD`] batches).
    pub async fn release(&self) -> Result<u64> {
        let engine = self.engine()?;
        let (current, standby, slot) = engine.shared.take_all().await;
        let Some(slot) = slot else {
            return Ok(0);
        };
        let mut given_back = 0;
        // The standby range is the later one: give it back first, then the current one.
        for range in [standby, current].into_iter().flatten() {
            let key = match &*engine.kind {
                Kind::Sharded(shards) => shards.key_of(range),
                _ => Some(slot.key.clone()),
            };
            let Some(key) = key else {
                engine.shared.stats.wasted(range.len());
                continue;
            };
            let back = engine
                .store
                .compare_and_set(&key, range.last(), range.first() - 1)
                .await?;
            if back {
                if let Kind::Sharded(shards) = &*engine.kind {
                    shards.gave_back(range.first());
                }
                given_back += range.len();
                engine.shared.stats.released(range.len());
            } else {
                engine.shared.stats.wasted(range.len());
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
    /// period after the current one is refused with [`Error::InvalidArgument`], since that would
    /// delete the current period's counter and make its IDs start over.
    ///
    /// Purge only periods the clock will not return to: a deleted period's counter would start
    /// again at `start`.
    pub async fn purge_periods_before(&self, before: impl Into<DateTime>) -> Result<u64> {
        let period = self.period_before(before.into())?;
        let engine = self.engine()?;
        let name = &self.inner.options.name;
        engine.store.delete_periods_before(name, &period).await
    }

    /// How many counters [`purge_periods_before`](Self::purge_periods_before) would delete;
    /// nothing is deleted.
    pub async fn count_periods_before(&self, before: impl Into<DateTime>) -> Result<u64> {
        let period = self.period_before(before.into())?;
        let engine = self.engine()?;
        let name = &self.inner.options.name;
        engine.store.count_periods_before(name, &period).await
    }

    /// The canonical period `before` falls in, for purging the periods before it: refused
    /// after the current period, and for a sequence without periods.
    fn period_before(&self, before: DateTime) -> Result<String> {
        let engine = self.engine()?;
        let name = &self.inner.options.name;
        let format = &engine.format;
        let (Some(given), Some(current)) = (
            format.period_of(before),
            format.period_at(engine.shared.now(&self.inner.options.clock)),
        ) else {
            return Err(Error::InvalidArgument {
                argument: "before",
                reason: format!(
                    "sequence `{name}` has no date tokens in its `prefix`, so it has no periods \
                     to purge"
                ),
            });
        };
        if given > current {
            return Err(Error::InvalidArgument {
                argument: "before",
                reason: format!(
                    "refusing to purge the periods of `{name}` before {}: that is after the \
                     current period {}; give a date in the current period or earlier",
                    format.canonical(given),
                    format.canonical(current)
                ),
            });
        }
        Ok(format.canonical(given))
    }

    /// Moves every counter of this sequence up to the highest ID stored for it in `coll`, whose
    /// documents hold their IDs in `id_field`: after an import, a restore, a migration, or
    /// documents written by another program. One counter per period for prefixed IDs (parsed
    /// back with the pattern and width that render them), one per scope value, one per shard.
    /// A counter never moves down, and a missing one is created. Returns what it found and
    /// did; IDs that belong to no counter (another BSON type, text that does not match the
    /// pattern, values below `start`) are counted as skipped.
    ///
    /// The IDs are read with one aggregation over the documents that have `id_field`. Set the
    /// names the documents store the scope fields under with
    /// [`scope_fields`](SyncCounters::scope_fields) if they differ from the `scope` names,
    /// and say whether the IDs are text with [`text`](SyncCounters::text) (default: numbers).
    /// A derived model has `sync_counters(&coll)`, which sets both.
    ///
    /// A stored value beyond `max` is [`Error::StoredBeyondMax`], and nothing is written.
    /// Counter and ranges strategies only.
    ///
    /// ```no_run
    /// # async fn f(seq: mongo_sequence_runtime::Sequence, orders: mongodb::Collection<mongodb::bson::Document>) -> mongo_sequence_runtime::Result<()> {
    /// let report = seq.sync_counters(&orders, "number").await?;
    /// for counter in &report.counters {
    ///     println!("{}: {:?} -> {}", counter.key, counter.old, counter.new);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn sync_counters<'a>(
        &'a self,
        coll: &'a Collection<Document>,
        id_field: &'a str,
    ) -> SyncCounters<'a> {
        SyncCounters {
            seq: self,
            coll,
            id_field,
            scope_fields: None,
            text: false,
            dry_run: false,
        }
    }

    /// Makes every handle of this sequence in this process (same database, counters collection
    /// and name; for [`with_store`](Self::with_store) handles, this handle and its clones) read
    /// the time from `clock` instead of their own. This is how tests move the clock of a model,
    /// whose insert methods build their handles from the model's configuration:
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use mongo_sequence_runtime::{clock::ManualClock, Sequence};
    /// # fn f(seq: Sequence) {
    /// // seq = Invoice::sequence(&invoices)
    /// let clock = Arc::new(ManualClock::new("2025-11-22T22:59:00Z".parse().unwrap()));
    /// seq.override_clock(clock.clone());
    /// // … insert, move the clock past midnight, insert again …
    /// seq.clear_clock_override();
    /// # }
    /// ```
    ///
    /// A sequence with invalid options reads no clock: this does nothing.
    pub fn override_clock(&self, clock: Arc<dyn Clock>) {
        if let Ok(engine) = self.engine() {
            engine.shared.set_clock(Some(clock));
        }
    }

    /// Removes the clock set by [`override_clock`](Self::override_clock).
    pub fn clear_clock_override(&self) {
        if let Ok(engine) = self.engine() {
            engine.shared.set_clock(None);
        }
    }

    /// What this sequence did in this process (shared by all handles of the same sequence).
    /// A sequence with invalid options did nothing: all zeros.
    pub fn stats(&self) -> Stats {
        self.engine()
            .map(|engine| engine.shared.snapshot())
            .unwrap_or_default()
    }

    /// The engine, for a handle that may take values: not a scoped sequence without scope
    /// values.
    fn scoped_engine(&self) -> Result<&Engine> {
        let engine = self.engine()?;
        let options = &self.inner.options;
        if self.inner.scope.is_none() && !options.scope.is_empty() {
            return Err(Error::ScopeRequired {
                counter: options.name.clone(),
                fields: options
                    .scope
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(engine)
    }

    /// The slot in use now, for the calls that bypass the cache.
    fn slot(&self) -> Result<Arc<Slot>> {
        let engine = self.scoped_engine()?;
        let slot = engine
            .shared
            .direct_slot(&engine.format, &self.inner.options.clock);
        Ok(match &self.inner.scope {
            Some(scope) => engine.format.scoped(&slot, scope),
            None => slot,
        })
    }

    /// The engine, unless the sequence is something else than one counter (per period and
    /// scope).
    fn counter_only(&self, operation: &'static str) -> Result<&Engine> {
        let engine = self.engine()?;
        match *engine.kind {
            Kind::Counter => Ok(engine),
            _ => Err(engine.kind.unsupported(operation)),
        }
    }

    /// The next value and the slot it belongs to.
    async fn issue(&self) -> Result<(i64, Arc<Slot>)> {
        let engine = self.scoped_engine()?;
        let options = &self.inner.options;
        if options.gapless {
            return Err(gapless_refusal("next"));
        }
        match &*engine.kind {
            Kind::Counter | Kind::Sharded(_) => {}
            Kind::Random => {
                let value = engine::draw(engine.bounds)?;
                engine.shared.stats.issued(1);
                return Ok((value, self.slot()?));
            }
            other => return Err(other.unsupported("next")),
        }
        if options.batch == Batch::Fixed(1) || self.inner.scope.is_some() {
            let slot = self.slot()?;
            let origin = match &*engine.kind {
                Kind::Sharded(shards) => Origin::sharded(shards),
                _ => Origin::counter(&engine.store, &slot, engine.bounds),
            };
            return Ok((engine.shared.coalescer.one(origin).await?, slot));
        }
        let req = Request {
            store: &engine.store,
            format: &engine.format,
            clock: &options.clock,
            bounds: engine.bounds,
            batch: options.batch,
            prefetch_at: options.prefetch_at,
            shards: match &*engine.kind {
                Kind::Sharded(shards) => Some(shards),
                _ => None,
            },
        };
        engine.shared.next(&req).await
    }

    /// Reserves exactly `n` contiguous values of `slot`: from its counter, or from one shard.
    async fn reserve_exact(&self, engine: &Engine, slot: &Slot, n: u64) -> Result<Reservation> {
        match &*engine.kind {
            Kind::Counter => engine.store.reserve(&slot.key, n, engine.bounds).await,
            Kind::Sharded(shards) => shards.reserve(n, false).await,
            other => Err(other.unsupported("reserve")),
        }
    }

    /// `n` values in one round trip, in `session` if given, and the slot they belong to.
    async fn reserve_range(
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
                    .reserve_in_session(&slot.key, n, engine.bounds, session)
                    .await?;
                (r, slot)
            }
            None if self.inner.options.gapless => return Err(gapless_refusal("reserve")),
            None => {
                let slot = self.slot()?;
                (self.reserve_exact(engine, &slot, n).await?, slot)
            }
        };
        self.record(engine, n, r.0);
        Ok((r.0.range, r.1))
    }

    /// The next ID, rendered as `T`, with the counter it came from.
    pub(crate) async fn issue_id<T: IdValue>(&self) -> Result<(T, Issued)> {
        let (value, slot) = self.issue().await?;
        Ok((T::render(value, &slot.rendering)?, Issued { value, slot }))
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
        Ok(match &*engine.kind {
            Kind::Sharded(shards) => {
                let slice = shards.slice_of(issued.value).unwrap_or(engine.bounds);
                (slice, slice.max)
            }
            _ => {
                let widest = issued.slot.rendering.width().map(|w| pow10(w) - 1);
                (engine.bounds, widest.unwrap_or(i64::MAX))
            }
        })
    }

    /// A new value in place of `issued`, which a stored document already uses: above `floor`,
    /// the highest value stored for its counter. From the cache if it still holds values
    /// above `floor`, else from one reservation above it (whose other values the cache
    /// keeps).
    pub(crate) async fn skip_ahead(&self, issued: &Issued, floor: i64) -> Result<Issued> {
        let engine = self.scoped_engine()?;
        let options = &self.inner.options;
        let cached = options.batch != Batch::Fixed(1) && self.inner.scope.is_none();
        engine.shared.stats.skipped_ahead();
        tracing::info!(
            counter = %issued.slot.key, taken = issued.value, stored_up_to = floor,
            "skipping ahead of IDs already stored"
        );
        let (lo, shards) = match &*engine.kind {
            Kind::Counter => (i64::MIN, None),
            Kind::Sharded(shards) => {
                let lo = shards.slice_of(issued.value).map_or(i64::MIN, |s| s.start);
                (lo, Some(shards))
            }
            other => return Err(other.unsupported("skip ahead")),
        };
        if cached {
            if let Some(value) = engine.shared.skip_past(lo, floor, options.batch) {
                return self.issued(value);
            }
        }
        let n = if cached {
            engine.shared.batch_size(options.batch)
        } else {
            1
        };
        let r = match shards {
            Some(shards) => shards.reserve_above(issued.value, n, floor).await?,
            None => {
                let key = &issued.slot.key;
                engine
                    .store
                    .reserve_above(key, n, engine.bounds, floor)
                    .await?
            }
        };
        let value = if cached {
            engine.shared.adopt(r, &issued.slot, options.batch)
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
        engine.shared.stats.skipped_ahead();
        tracing::info!(
            counter = %issued.slot.key, taken = issued.value, stored_up_to = floor, n,
            "skipping ahead of IDs already stored"
        );
        let r = match &*engine.kind {
            Kind::Sharded(shards) => shards.reserve_above(issued.value, n, floor).await?,
            Kind::Counter => {
                let key = &issued.slot.key;
                engine
                    .store
                    .reserve_above(key, n, engine.bounds, floor)
                    .await?
            }
            other => return Err(other.unsupported("skip ahead")),
        };
        self.record(engine, n, r);
        Ok((r.range, issued.slot.clone()))
    }

    /// Moves the counter `issued` came from up to `last` (never down): where gapless inserts
    /// that met stored IDs go on from.
    pub(crate) async fn raise(&self, issued: &Issued, last: i64) -> Result<()> {
        let engine = self.engine()?;
        engine.shared.stats.skipped_ahead();
        tracing::info!(
            counter = %issued.slot.key, taken = issued.value, stored_up_to = last,
            "moving the counter past IDs already stored"
        );
        match &*engine.kind {
            Kind::Sharded(shards) => shards.raise(issued.value, last).await,
            _ => {
                let key = &issued.slot.key;
                engine.store.raise(key, last, engine.bounds).await.map(drop)
            }
        }
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

/// The values of `range`, rendered as the IDs of `slot`.
fn render_all<T: IdValue>(range: IdRange, slot: &Slot) -> Result<Vec<T>> {
    range
        .iter()
        .map(|value| T::render(value, &slot.rendering))
        .collect()
}

impl SequenceConfig {
    /// The sequence of this configuration in `db`. An invalid configuration (which the derive
    /// rules out at compile time) yields a sequence whose every fallible operation returns the
    /// configuration's error.
    pub fn sequence(&self, db: &Database) -> Sequence {
        Sequence::build(db, self.options())
    }

    /// The sequence of this configuration for `coll`: its counters live in `coll`'s database.
    pub(crate) fn sequence_for<T: Send + Sync + 'static>(&self, coll: &Collection<T>) -> Sequence {
        let db = coll.client().database(coll.namespace().db.as_str());
        Sequence::build_in(&db, Deployment::of_collection(coll), self.options())
    }
}

/// The action returned by [`Sequence::sync_counters`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct SyncCounters<'a> {
    seq: &'a Sequence,
    coll: &'a Collection<Document>,
    id_field: &'a str,
    scope_fields: Option<&'a [&'a str]>,
    text: bool,
    dry_run: bool,
}

impl<'a> SyncCounters<'a> {
    /// The names the documents store the `scope` fields under, in `scope` order (default: the
    /// `scope` names).
    pub fn scope_fields(mut self, fields: &'a [&'a str]) -> Self {
        self.scope_fields = Some(fields);
        self
    }

    /// Whether the IDs are stored as text (`String` IDs); by default they are numbers.
    pub fn text(mut self, text: bool) -> Self {
        self.text = text;
        self
    }

    /// Finds what would move, and moves nothing.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }
}

impl<'a> IntoFuture for SyncCounters<'a> {
    type Output = Result<SyncReport>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<SyncReport>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let seq = self.seq;
            let engine = seq.engine()?;
            let options = &seq.inner.options;
            let shards = match &*engine.kind {
                Kind::Counter => None,
                Kind::Sharded(shards) => Some(&**shards),
                other => return Err(other.unsupported("sync_counters")),
            };
            let scope_names: Vec<&str> = options.scope.iter().map(String::as_str).collect();
            let stored = self.scope_fields.unwrap_or(&scope_names);
            if stored.len() != scope_names.len() {
                return Err(Error::InvalidArgument {
                    argument: "scope_fields",
                    reason: format!(
                        "sequence `{}` is scoped by {} field(s), but {} stored name(s) were given",
                        options.name,
                        scope_names.len(),
                        stored.len()
                    ),
                });
            }
            let source = Source {
                coll: self.coll,
                field: self.id_field,
                scope: scope_names
                    .iter()
                    .copied()
                    .zip(stored.iter().copied())
                    .collect(),
                text: self.text,
            };
            let target = Target {
                name: &options.name,
                store: &engine.store,
                bounds: engine.bounds,
                format: &engine.format,
                pattern: engine.format.pattern(),
                width: engine.format.width(),
                shards,
                now: engine.shared.now(&options.clock),
            };
            let report = engine::sync(&source, &target, self.dry_run).await?;
            if report.counters.iter().any(SyncedCounter::moved) && !self.dry_run {
                // Values cached below a counter's new value are taken by stored documents.
                engine.shared.invalidate().await;
            }
            tracing::info!(
                sequence = %options.name,
                counters = report.counters.len(),
                moved = report.counters.iter().filter(|c| c.moved()).count(),
                skipped = report.skipped,
                dry_run = self.dry_run,
                "synced counters with stored IDs"
            );
            Ok(report)
        })
    }
}

/// The action returned by [`Sequence::reserve`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Reserve<'a> {
    seq: &'a Sequence,
    n: u64,
    session: Option<&'a mut ClientSession>,
}

impl<'a> Reserve<'a> {
    /// Reserves with a counter update in `session` (counter strategy only).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The values reserved, and the counter they belong to.
    async fn run(self) -> Result<(IdRange, Arc<Slot>)> {
        self.seq.reserve_range(self.n, self.session).await
    }
}

impl<'a> IntoFuture for Reserve<'a> {
    type Output = Result<IdRange>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<IdRange>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { Ok(self.run().await?.0) })
    }
}

/// The action returned by [`Sequence::reserve_ids`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct ReserveIds<'a, T> {
    reserve: Reserve<'a>,
    ids: PhantomData<fn() -> T>,
}

impl<'a, T> ReserveIds<'a, T> {
    /// Reserves with a counter update in `session` (counter strategy only).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.reserve = self.reserve.session(session);
        self
    }
}

impl<'a, T: IdValue> IntoFuture for ReserveIds<'a, T> {
    type Output = Result<Vec<T>>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Vec<T>>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let (range, slot) = self.reserve.run().await?;
            render_all(range, &slot)
        })
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
            let seq = self.seq;
            let engine = seq.engine()?;
            let bounds = engine.bounds;
            if self.next < bounds.start || self.next > bounds.max {
                return Err(Error::InvalidArgument {
                    argument: "next",
                    reason: format!(
                        "{} is outside start..=max ({}..={}); give a value in that range",
                        self.next, bounds.start, bounds.max
                    ),
                });
            }
            seq.counter_only("set_next")?;
            let slot = seq.slot()?;
            engine.shared.invalidate().await;
            engine
                .store
                .set_last_issued(&slot.key, self.next - 1, self.force, bounds)
                .await
        })
    }
}
