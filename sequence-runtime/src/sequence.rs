//! The handle users hold: next ID, bulk reservation, admin operations, statistics.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use mongodb::Database;

use crate::bounds::Bounds;
use crate::cache::{Request, Shared};
use crate::error::{Error, Result};
use crate::key::CounterKey;
use crate::memory::MemoryStore;
use crate::mongo_store::MongoStore;
use crate::options::{Batch, SequenceOptions};
use crate::random;
use crate::range::IdRange;
use crate::registry;
use crate::stats::Stats;
use crate::store::{BoxFuture, CounterStore, Reservation};
use crate::strategy::Kind;

/// A handle on one sequence: cheap to clone, safe to share between tasks and threads.
///
/// Handles of the same counter (same database, counters collection and name) in one process
/// share one cache of reserved values.
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
    key: CounterKey,
    bounds: Bounds,
    options: SequenceOptions,
    kind: Kind,
}

impl Sequence {
    /// The sequence described by `options`, with its counter in `db`.
    ///
    /// Fails with [`Error::InvalidName`] or [`Error::InvalidOptions`] before anything is sent
    /// to the server.
    pub fn new(db: &Database, options: SequenceOptions) -> Result<Self> {
        let bounds = options.validate()?;
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
        Ok(Self::assemble(store, shared, key, bounds, options, kind))
    }

    /// A sequence whose counter lives in process memory (see [`MemoryStore`]): for unit tests.
    pub fn in_memory(options: SequenceOptions) -> Result<Self> {
        Self::with_store(Arc::new(MemoryStore::new()), options)
    }

    /// A sequence whose counter lives in `store`, with a cache of its own.
    pub fn with_store(store: Arc<dyn CounterStore>, options: SequenceOptions) -> Result<Self> {
        let bounds = options.validate()?;
        let key = CounterKey::named(options.name.clone());
        let kind = Kind::new(&options, &store, &key, bounds, None);
        Ok(Self::assemble(
            store,
            Arc::default(),
            key,
            bounds,
            options,
            kind,
        ))
    }

    /// A sequence whose every operation fails with `error`.
    pub(crate) fn failing(error: Error) -> Self {
        let options = SequenceOptions::builder("invalid").build();
        let bounds = Bounds::new(1, i64::MAX).expect("valid bounds");
        Self::assemble(
            Arc::new(FailingStore(error)),
            Arc::default(),
            CounterKey::named("invalid"),
            bounds,
            options,
            Kind::Counter,
        )
    }

    fn assemble(
        store: Arc<dyn CounterStore>,
        shared: Arc<Shared>,
        key: CounterKey,
        bounds: Bounds,
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
                kind,
            }),
        }
    }

    /// The options of this sequence.
    pub fn options(&self) -> &SequenceOptions {
        &self.inner.options
    }

    /// The key of the counter document (of a sharded sequence: the name its shards' keys
    /// `{ seq: <name>, shard: i }` are made of).
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

    /// The next ID. With `batch = 1` this is one round trip; with larger batches it usually
    /// comes from memory. With the random strategy it is a draw, made without a round trip.
    pub async fn next(&self) -> Result<i64> {
        let inner = &*self.inner;
        match inner.kind {
            Kind::Counter | Kind::Sharded(_) => {}
            Kind::Random => {
                let value = random::draw(inner.bounds)?;
                inner.shared.stats.issued(1);
                return Ok(value);
            }
            Kind::Generated(_) => return Err(inner.kind.unsupported("next")),
        }
        if inner.options.batch == Batch::Fixed(1) {
            let r = inner.reserve_exact(1).await?;
            inner.shared.stats.reserved(1, r.retries);
            inner.shared.stats.issued(1);
            return Ok(r.range.first());
        }
        let req = Request {
            store: &inner.store,
            key: &inner.key,
            bounds: inner.bounds,
            batch: inner.options.batch,
            prefetch_at: inner.options.prefetch_at,
            shards: match &inner.kind {
                Kind::Sharded(shards) => Some(shards),
                _ => None,
            },
        };
        inner.shared.next(&req).await
    }

    /// Reserves `n` contiguous IDs in one round trip (bypassing the cache), for bulk inserts. A
    /// sharded sequence takes them from one shard (skipping the shards with fewer left).
    pub async fn reserve(&self, n: u64) -> Result<IdRange> {
        if n == 0 {
            return Err(Error::InvalidOptions(
                "cannot reserve 0 IDs; ask for at least 1".into(),
            ));
        }
        let inner = &*self.inner;
        let r = inner.reserve_exact(n).await?;
        inner.shared.stats.reserved(n, r.retries);
        inner.shared.stats.issued(n);
        Ok(r.range)
    }

    /// Reserves `n` contiguous IDs in `session`, bypassing the cache: inside the session's
    /// transaction, if one is started, so that the numbers are consumed only if it commits
    /// (this is how gapless numbering and `insert_with_id_in_session` work); otherwise as a
    /// causally consistent operation of the session.
    pub async fn reserve_in_session(
        &self,
        n: u64,
        session: &mut mongodb::ClientSession,
    ) -> Result<IdRange> {
        if n == 0 {
            return Err(Error::InvalidOptions(
                "cannot reserve 0 IDs; ask for at least 1".into(),
            ));
        }
        let inner = &*self.inner;
        inner.counter_only("reserve_in_session")?;
        let r = inner
            .store
            .reserve_in_session(&inner.key, n, inner.bounds, session)
            .await?;
        inner.shared.stats.reserved(n, r.retries);
        inner.shared.stats.issued(n);
        Ok(r.range)
    }

    /// The last value issued according to the counter document (`None`: no counter yet).
    /// Values cached by processes are counted as issued.
    pub async fn current(&self) -> Result<Option<i64>> {
        let inner = &*self.inner;
        inner.counter_only("current")?;
        inner.store.last_issued(&inner.key, inner.bounds).await
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
        if let Kind::Sharded(shards) = &self.inner.kind {
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
        if let Kind::Sharded(shards) = &inner.kind {
            inner.shared.invalidate().await;
            return shards.delete().await;
        }
        inner.counter_only("delete")?;
        inner.shared.invalidate().await;
        inner.store.delete(&inner.key).await
    }

    /// Gives the unused values cached in this process back to the counter, where nobody has
    /// advanced it since they were reserved (compare-and-set); otherwise they are counted as
    /// wasted. Returns how many values were given back. Call it on graceful shutdown: a process
    /// that stops without it loses at most the ranges it holds (one, plus one prefetched).
    pub async fn release(&self) -> Result<u64> {
        let inner = &*self.inner;
        let (current, standby) = inner.shared.take_all().await;
        let mut given_back = 0;
        // The standby range is the later one: give it back first, then the current one.
        for range in [standby, current].into_iter().flatten() {
            let key = match &inner.kind {
                Kind::Sharded(shards) => shards.key_of(range),
                _ => Some(inner.key.clone()),
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
                if let Kind::Sharded(shards) = &inner.kind {
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

    /// What this sequence did in this process (shared by all handles of the same counter).
    pub fn stats(&self) -> Stats {
        self.inner.shared.stats.snapshot()
    }
}

impl Inner {
    /// Reserves exactly `n` contiguous values: from the counter, or from one shard.
    async fn reserve_exact(&self, n: u64) -> Result<Reservation> {
        match &self.kind {
            Kind::Counter => self.store.reserve(&self.key, n, self.bounds).await,
            Kind::Sharded(shards) => shards.reserve(n, false).await,
            _ => Err(self.kind.unsupported("reserve")),
        }
    }

    /// Fails unless the sequence is one counter.
    fn counter_only(&self, operation: &'static str) -> Result<()> {
        match self.kind {
            Kind::Counter => Ok(()),
            _ => Err(self.kind.unsupported(operation)),
        }
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
            inner.counter_only("set_next")?;
            let bounds = inner.bounds;
            if self.next < bounds.start || self.next > bounds.max {
                return Err(Error::InvalidOptions(format!(
                    "next value {} is outside start..=max ({}..={})",
                    self.next, bounds.start, bounds.max
                )));
            }
            inner.shared.invalidate().await;
            inner
                .store
                .set_last_issued(&inner.key, self.next - 1, self.force, bounds)
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
