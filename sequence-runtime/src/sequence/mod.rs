//! The handle users hold, by concern: `mod.rs` builds it and holds its state, `issue.rs` takes
//! values, `admin.rs` holds the operator's operations (their actions are in `action/`);
//! `round_trip.rs` tests that every ID it writes reads back as its value.

mod admin;
mod issue;
pub(crate) use issue::FirstCall;
#[cfg(test)]
mod round_trip;

use std::sync::Arc;

use mongodb::{Collection, Database};

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey, Format, Scope, Slot};
use crate::observability::{Labels, Place, Stats};
use crate::options::{SequenceConfig, SequenceOptions};
use crate::process::{self, CounterAt, ProcessState};
use crate::store::layout::CounterLayout;
use crate::store::{CounterStore, Deployment, MemoryStore, MongoStore, SequenceRecord};
use crate::strategy::Maker;

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
/// Every [`Strategy`](crate::Strategy) that makes numbers has `next`: the `counter` and `ranges`
/// strategies also `reserve` contiguous ranges, and the random strategy draws a value (unique
/// only once inserted: see [`SequentialId`](crate::SequentialId)). Operations a strategy does
/// not have fail with [`Error::Unsupported`].
///
/// A handle built from an invalid [`SequenceConfig`] (see [`SequenceConfig::sequence`]) holds
/// the configuration's error: every operation that can fail returns it, and nothing is sent to
/// the server.
///
/// ```
/// use sequence_runtime::{Sequence, SequenceOptions};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // `Sequence::new(&db, options)` keeps the counter in MongoDB; in memory for this example.
/// let orders = Sequence::in_memory(SequenceOptions::builder("order").batch(25).build())?;
/// assert_eq!(orders.next().await?, 1);
/// let range = orders.reserve(10).await?; // ten contiguous values, after the cached ones
/// assert_eq!(range.len(), 10);
/// let ids: Vec<String> = orders.reserve_ids(2).await?;
/// assert_eq!(ids.len(), 2);
/// assert_eq!(orders.stats().issued, 13);
/// orders.release().await?; // at shutdown: give back what this process holds
/// # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Sequence {
    state: Arc<HandleState>,
}

#[derive(Debug)]
/// What a handle holds: its options, its key, the scope it is bound to, and its engine.
struct HandleState {
    /// Shared by the handles of the sequence in its scope values.
    options: Arc<SequenceOptions>,
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
    shared: Arc<ProcessState>,
    bounds: Bounds,
    format: Arc<Format>,
    maker: Arc<Maker>,
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

impl Sequence {
    /// The sequence described by `options`, with its counter in `db`.
    ///
    /// Fails with [`Error::InvalidName`] or [`Error::InvalidConfig`] before anything is sent
    /// to the server.
    ///
    /// ```no_run
    /// # async fn f(client: mongodb::Client) -> sequence_runtime::Result<()> {
    /// use sequence_runtime::{Sequence, SequenceOptions};
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
    fn build_in(db: &Database, deployment: Deployment, options: SequenceOptions) -> Self {
        let checked = options.checked().and_then(|(bounds, format)| {
            let store = MongoStore::in_deployment(db, deployment, &options)?
                .recording(SequenceRecord::new(&options, bounds));
            Ok((bounds, format, store))
        });
        let (bounds, format, store) = match checked {
            Ok(parts) => parts,
            Err(e) => return Self::invalid(options, e),
        };
        let store: Arc<dyn CounterStore> = Arc::new(store);
        let key = CounterKey::named(options.name.clone());
        let place = Place::collection(deployment, db.name(), &options.counters);
        let maker = Maker::new(&options, &store, bounds, |shards| {
            let at = CounterAt {
                place: place.clone(),
                counter: format!("{}\0{shards}", key.canonical()),
            };
            Some(process::full_shards(&at, options.shards))
        });
        let labels = || Labels::new(&options.name, options.strategy.name());
        let shared = process::shared(&place, &maker.cache_id(&key), labels);
        Self::assemble(options, key, store, shared, bounds, format, maker)
    }

    /// A sequence whose counter lives in process memory (see [`MemoryStore`]): for unit tests.
    pub fn in_memory(options: SequenceOptions) -> Result<Self> {
        Self::with_store(Arc::new(MemoryStore::new()), options)
    }

    /// A sequence whose counter lives in `store`, with a cache of its own. It is listed in
    /// [`observability::snapshot`](crate::observability::snapshot) as long as one of its handles lives.
    pub fn with_store(store: Arc<dyn CounterStore>, options: SequenceOptions) -> Result<Self> {
        let (bounds, format) = options.checked()?;
        let key = CounterKey::named(options.name.clone());
        let maker = Maker::new(&options, &store, bounds, |_| None);
        let labels = Labels::new(&options.name, options.strategy.name());
        let shared = process::watched(Place::store(store.location()), labels);
        Ok(Self::assemble(
            options, key, store, shared, bounds, format, maker,
        ))
    }

    fn assemble(
        options: SequenceOptions,
        key: CounterKey,
        store: Arc<dyn CounterStore>,
        shared: Arc<ProcessState>,
        bounds: Bounds,
        format: Format,
        maker: Maker,
    ) -> Self {
        let engine = Engine {
            store,
            format: shared.shared_format(format),
            shared,
            bounds,
            maker: Arc::new(maker),
        };
        Sequence {
            state: Arc::new(HandleState {
                options: Arc::new(options),
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
            state: Arc::new(HandleState {
                key: CounterKey::named(options.name.clone()),
                options: Arc::new(options),
                scope: None,
                engine: Err(error),
            }),
        }
    }

    /// How many counters (periods, scope values) have callers queued for a coalesced
    /// reservation now.
    pub(crate) fn coalescer_queues(&self) -> usize {
        self.engine().map_or(0, |e| e.shared.coalescer.queues())
    }

    /// The engine, or the error of invalid options.
    fn engine(&self) -> Result<&Engine> {
        self.state.engine.as_ref().map_err(Clone::clone)
    }

    /// The first value of the sequence's counters.
    pub(crate) fn start(&self) -> Result<i64> {
        Ok(self.engine()?.bounds.start)
    }

    /// The options of this sequence.
    pub fn options(&self) -> &SequenceOptions {
        &self.state.options
    }

    /// The key of the sequence's counter without period or scope, which names the sequence in
    /// events ([`current_key`](Self::current_key) is the counter in use now).
    pub(crate) fn base_key(&self) -> &CounterKey {
        &self.state.key
    }

    /// Equal for the handles that take numbers from the same counters: the same store (see
    /// [`CounterStore::identity`](crate::store::CounterStore::identity)), sequence and scope
    /// values.
    pub(crate) fn counter_identity(&self) -> Result<String> {
        Ok(format!(
            "{}\0{}\0{}",
            self.engine()?.store.identity(),
            self.base_key().canonical(),
            self.scope().map(|s| s.canonical()).unwrap_or_default(),
        ))
    }

    /// The values this sequence issues: `start..=max`, or the `digits` range.
    pub(crate) fn space(&self) -> Result<Bounds> {
        Ok(self.engine()?.bounds)
    }

    /// Counts a gapless transaction run again after a transient error.
    pub(crate) fn record_transaction_retry(&self) {
        if let Ok(engine) = self.engine() {
            engine.shared.stats.transaction_retried();
        }
    }

    /// Records a gapless group of `inserts` committed in one transaction.
    pub(crate) fn record_group(&self, inserts: usize) {
        if let Ok(engine) = self.engine() {
            engine.shared.stats.series.group_committed(inserts);
        }
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

    /// The counter value (and period) of `id`, an ID of this sequence written as text (an
    /// integer ID as its digits): the way back from [`next_id`](Self::next_id). Reads the
    /// prefix (a period's, a two-digit year in the century closest to this year), the number
    /// in the sequence's encoding (Crockford base 32 ignoring case and the look-alikes `O`,
    /// `I`, `L`), the text after it and the check digits; nothing is sent to the server.
    ///
    /// Fails with [`Error::InvalidId`](crate::Error::InvalidId), whose
    /// [`IdProblem`](crate::id::IdProblem) says what is wrong (a check digit that does not
    /// match, another prefix or period, a character outside the encoding, a number of another
    /// width).
    ///
    /// ```
    /// use sequence_runtime::options::CheckDigit;
    /// use sequence_runtime::{Error, Sequence, SequenceOptions};
    ///
    /// let options = SequenceOptions::builder("account")
    ///     .format("ACC-{n:08}-{check}")
    ///     .check_digit(CheckDigit::Luhn)
    ///     .build();
    /// let seq = Sequence::in_memory(options)?;
    /// assert_eq!(seq.parse_id("ACC-00012345-5")?.value, 12_345);
    /// let typo = seq.parse_id("ACC-00012354-5").unwrap_err();
    /// assert!(matches!(typo, Error::InvalidId { .. }));
    /// assert_eq!(
    ///     typo.to_string(),
    ///     "`ACC-00012354-5` is not an ID of sequence `account`: check digit `5` does not \
    ///      match, expected `7` (luhn)"
    /// );
    /// # Ok::<(), Error>(())
    /// ```
    pub fn parse_id(&self, id: &str) -> Result<crate::id::ParsedId> {
        let engine = self.engine()?;
        engine
            .format
            .parse_id_within(id, engine.shared.now(), engine.bounds)
    }

    /// The ID of counter value `value` as text (an integer ID's digits), in the period whose
    /// canonical string is `period` (`"20251122"`; `None` for a sequence without periods): the
    /// way there, as [`parse_id`](Self::parse_id) is the way back. Nothing is taken from the
    /// counter.
    ///
    /// ```
    /// use sequence_runtime::{Sequence, SequenceOptions};
    /// let seq = Sequence::in_memory(SequenceOptions::builder("filing").format("{YYYY}/{n:05}/EU").build())?;
    /// assert_eq!(seq.id_text(42, Some("2025"))?, "2025/00042/EU");
    /// assert_eq!(seq.parse_id("2025/00042/EU")?.value, 42);
    /// # Ok::<(), sequence_runtime::Error>(())
    /// ```
    ///
    /// A value the sequence cannot issue in its IDs' shape (above `max`, or negative below a
    /// non-negative `start`) is [`Error::InvalidArgument`]: its text would not read back.
    pub fn id_text(&self, value: i64, period: Option<&str>) -> Result<String> {
        let engine = self.engine()?;
        let bounds = engine.bounds;
        if value > bounds.max || value < bounds.start.min(0) {
            return Err(Error::InvalidArgument {
                argument: "value",
                reason: format!(
                    "{value} is not a value of sequence `{}`, whose values are {}..={}",
                    self.state.options.name,
                    bounds.start.min(0),
                    bounds.max
                ),
            });
        }
        engine.format.text_at(value, period)
    }

    /// This sequence in the scope `scope`: a handle whose operations (`next`, `reserve`,
    /// `current`, `set_next`, `reset`, `delete`) use the counter of those values.
    ///
    /// The scope must have exactly the sequence's `scope` fields. Without a `batch`, each
    /// [`next`](Self::next) makes at most one round trip, shared by the callers of the same
    /// scope waiting together ([`reserve`](Self::reserve) takes any number in one). With a
    /// fixed `batch`, a scope value's second call within 30 s gives it a cache of its own; a
    /// process remembers at most 4,096 scope values per sequence and gives back the cached
    /// values of those it forgets (idle for 30 s, or the least recently used). Statistics are
    /// shared with the unscoped handle.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use sequence_runtime::{Scope, Sequence, SequenceOptions};
    /// let seq = Sequence::in_memory(SequenceOptions::builder("order").scope(["tenant"]).build())?;
    /// let acme = seq.in_scope(Scope::new().with("tenant", "acme"))?;
    /// let globex = seq.in_scope(Scope::new().with("tenant", "globex"))?;
    /// assert_eq!(acme.next().await?, 1);
    /// assert_eq!(acme.next().await?, 2);
    /// assert_eq!(globex.next().await?, 1);
    /// # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
    /// ```
    pub fn in_scope(&self, scope: Scope) -> Result<Sequence> {
        let engine = self.engine()?;
        let options = &self.state.options;
        scope.check(&options.name, &options.scope)?;
        CounterLayout::check_scope(options, &scope)?;
        Ok(Sequence {
            state: Arc::new(HandleState {
                options: options.clone(),
                key: self.state.key.clone(),
                scope: Some(scope),
                engine: Ok(engine.clone()),
            }),
        })
    }

    /// The scope this handle is bound to.
    pub fn scope(&self) -> Option<&Scope> {
        self.state.scope.as_ref()
    }

    /// Makes this sequence read the time from `clock`, which decides the period of dated IDs:
    /// every handle of it in this process (same database, counters collection and name; for
    /// [`with_store`](Self::with_store) handles, this handle and its clones), since they share
    /// one cache, whose values belong to one period at a time. This is how tests cross
    /// midnight without waiting, for a sequence they build and for a model's alike:
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use sequence_runtime::{clock::ManualClock, Sequence};
    /// # fn f(seq: Sequence) {
    /// // seq = Invoice::sequence(&invoices)
    /// let clock = Arc::new(ManualClock::new("2025-11-22T22:59:00Z".parse().unwrap()));
    /// seq.set_clock(clock.clone());
    /// // … insert, move the clock past midnight, insert again …
    /// seq.use_system_clock();
    /// # }
    /// ```
    ///
    /// A sequence with invalid options reads no clock: this does nothing.
    pub fn set_clock(&self, clock: Arc<dyn Clock>) {
        if let Ok(engine) = self.engine() {
            engine.shared.set_clock(Some(clock));
        }
    }

    /// Makes this sequence read the system's clock again (the default), after
    /// [`set_clock`](Self::set_clock).
    pub fn use_system_clock(&self) {
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
        let options = &self.state.options;
        if self.state.scope.is_none() && !options.scope.is_empty() {
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
        let slot = engine.shared.direct_slot(&engine.format);
        Ok(match &self.state.scope {
            Some(scope) => engine.format.scoped(&slot, scope),
            None => slot,
        })
    }

    /// The engine, unless the sequence is something else than one counter (per period and
    /// scope).
    fn counter_only(&self, operation: &'static str) -> Result<&Engine> {
        let engine = self.engine()?;
        engine.maker.one_counter(operation)?;
        Ok(engine)
    }
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
