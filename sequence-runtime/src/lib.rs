//! The allocator behind [`mongo-sequence`](https://docs.rs/mongo-sequence): counters in a
//! MongoDB collection, reserved in contiguous ranges, cached per process, with typed errors.
//!
//! Most users depend on `mongo-sequence` and use `#[derive(SequentialId)]`; this crate holds the
//! machinery it expands to, and the [`Sequence`] handle for direct use.
//!
//! The root holds what code uses every day; the rest sits in modules named for what they hold:
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`action`] | what the operations return: `.await` them, or give them a session and options first |
//! | [`options`] | [`SequenceOptions`] and its builder, batches, counter layouts |
//! | [`id`] | the ID types ([`IdValue`]), scopes, ranges and bounds of counter values |
//! | [`store`] | where counters live: [`CounterStore`](store::CounterStore), [`MongoStore`](store::MongoStore), [`MemoryStore`](store::MemoryStore) |
//! | [`clock`] | the clock that chooses the period of dated IDs, and a manual one for tests |
//! | [`stats`] | what a sequence did in this process, and the snapshot of every sequence of the process |
//! | [`sync`] | the report of moving counters up to the IDs already stored |
//! | [`claims`] | checking and repairing the claims of a proxy collection (`unique = "proxy"`) |
//! | [`observability`] | the `tracing` spans and events this crate emits, with their fields |
//! | [`error`] | [`Error`], and the duplicate-key test for the driver's errors |
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use sequence_runtime::{Sequence, SequenceOptions};
//!
//! let seq = Sequence::in_memory(SequenceOptions::builder("invoice").prefix("INV-").width(4).build())?;
//! let id: String = seq.next_id().await?;
//! assert_eq!(id, "INV-0001");
//! # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
//! ```
//!
//! Internally the modules are layers, each using only the ones before it: errors, values,
//! options, stores, the engine (how each strategy makes values, and the per-process state),
//! [`Sequence`], and the model layer (the trait the derive implements and the insert paths).
//! `ARCHITECTURE.md` in the repository tells the whole story.

pub mod claims;
mod engine;
pub mod error;
mod model;
pub mod observability;
pub mod options;
mod sequence;
pub mod store;
pub mod uuid_as_binary;
mod values;

pub use error::{Error, Result};
pub use model::SequentialId;
pub use options::{Batch, SequenceOptions};
pub use sequence::Sequence;
pub use sequence_rules::Strategy;
pub use values::{IdValue, Scope};

/// What the operations return: each is awaited directly (it implements
/// [`IntoFuture`](std::future::IntoFuture)), and takes the caller's session and the options of
/// the write underneath first, as the driver's own actions do.
///
/// ```no_run
/// # use sequence_runtime::SequentialId;
/// # async fn f<T: SequentialId>(mut doc: T, coll: mongodb::Collection<T>, client: mongodb::Client) -> sequence_runtime::Result<()> {
/// let mut session = client.start_session().await.map_err(sequence_runtime::Error::from_driver)?;
/// session.start_transaction().await.map_err(sequence_runtime::Error::from_driver)?;
/// // With the `counter` strategy the number is taken in the transaction: an abort gives it back.
/// let id = doc.insert_with_id(&coll).session(&mut session).await?;
/// session.commit_transaction().await.map_err(sequence_runtime::Error::from_driver)?;
/// # let _ = id; Ok(()) }
/// ```
pub mod action {
    pub use crate::model::action::{
        InsertManyWithIds, InsertWithId, NextId, NextIdFuture, UpsertWithId,
    };
    pub use crate::sequence::{
        CountPeriods, Current, Delete, PurgePeriods, Reserve, ReserveIds, Reset, SetNext,
        SyncCounters,
    };
}

/// The ID types and the values they are made of: [`IdValue`] (implemented for the integer
/// types, `String`, `ObjectId` and the UUID types), the [`Scope`] of a scoped counter, the
/// [`IdRange`](id::IdRange) a reservation returns, and the [`Bounds`](id::Bounds) of a
/// counter's values.
///
/// ```
/// use sequence_runtime::id::{Bounds, IdRange};
/// let twelve_digits = Bounds::digits(12).unwrap();
/// assert_eq!(twelve_digits.start, 100_000_000_000);
/// let range = IdRange::new(5, 9).unwrap();
/// assert_eq!(range.len(), 5);
/// ```
pub mod id {
    pub use crate::values::{Bounds, CounterKey, Generated, IdRange, IdValue, Rendering, Scope};
}

/// The clock a sequence reads to choose the period of dated IDs (`prefix = "YYMMDD"`): the
/// system's by default, a [`ManualClock`](clock::ManualClock) in tests (see
/// [`Sequence::override_clock`]).
///
/// ```
/// use sequence_runtime::clock::{Clock, ManualClock};
/// use sequence_runtime::jiff::SignedDuration;
/// let clock = ManualClock::new("2025-11-22T22:59:00Z".parse().unwrap());
/// clock.advance(SignedDuration::from_secs(120));
/// assert_eq!(clock.now().to_string(), "2025-11-22T23:01:00Z");
/// ```
pub mod clock {
    pub use crate::values::{Clock, ManualClock, SystemClock};
}

/// What a sequence did in this process: [`Stats`](stats::Stats), from [`Sequence::stats`]; and
/// every sequence of the process at once, with the state of its cache:
/// [`snapshot`](stats::snapshot). Both serialize with `serde`, for an endpoint of a service.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use sequence_runtime::{Sequence, SequenceOptions};
/// let seq = Sequence::in_memory(SequenceOptions::builder("order").build())?;
/// seq.next().await?;
/// seq.reserve(5).await?;
/// let stats = seq.stats();
/// assert_eq!((stats.issued, stats.reserved, stats.reservations), (6, 6, 2));
/// # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
/// ```
pub mod stats {
    pub use crate::engine::{snapshot, CacheSnapshot, SequenceSnapshot, Snapshot, Stats};
}

/// What [`Sequence::sync_counters`] and a model's `sync_counters` found and did: a
/// [`SyncReport`](sync::SyncReport) with one [`SyncedCounter`](sync::SyncedCounter) per
/// counter.
///
/// ```no_run
/// # async fn f(seq: sequence_runtime::Sequence, orders: mongodb::Collection<mongodb::bson::Document>) -> sequence_runtime::Result<()> {
/// let report = seq.sync_counters(&orders, "_id").dry_run(true).await?;
/// for counter in report.counters.iter().filter(|c| c.moved()) {
///     println!("{} would move from {:?} to {}", counter.key, counter.old, counter.new);
/// }
/// # Ok(()) }
/// ```
pub mod sync {
    pub use crate::engine::{SyncReport, SyncedCounter};
}

/// The date and time library of periods and clocks, re-exported so that callers use the same
/// version (for example `jiff::Timestamp` for a [`ManualClock`](clock::ManualClock),
/// `jiff::civil::date` for [`Sequence::purge_periods_before`]).
pub use jiff;

#[doc(hidden)]
pub mod __private {
    pub use crate::action::{InsertManyWithIds, InsertWithId, NextId, UpsertWithId};
    pub use crate::model::scope_value;
    pub use crate::options::SequenceConfig;
    pub use crate::values::{Generated, IdValue, Rendering};
    pub use crate::{Error, Result, Sequence, SequentialId, Strategy};
    pub use mongodb;
    pub use sequence_rules::{AdaptiveBatch, Batch, Layout, Stores, Unique};
    pub use sequence_rules::{IdKind, IdNeeds, IdProblems};
    pub use serde;

    pub use crate::engine::SyncReport;

    /// How many entries of this process's per-sequence state have an id containing `needle`
    /// (a database or collection name): for tests that the state stays bounded.
    pub fn registry_entries(needle: &str) -> usize {
        crate::engine::entries(needle)
    }

    /// How many counters of `seq` (periods, scope values) have callers queued for a coalesced
    /// reservation now, in the per-process state `seq` shares: for tests that per-scope state
    /// lasts only as long as its callers.
    pub fn coalescer_queues(seq: &Sequence) -> usize {
        seq.coalescer_queues()
    }

    /// What the methods of a model that failed to derive return: accepts what the real
    /// actions accept, so that a compile error of the derive comes alone.
    pub struct Stub<T>(T);

    impl<T> Stub<T> {
        /// A stub that resolves to `value`.
        pub fn new(value: T) -> Self {
            Stub(value)
        }

        /// Accepts a session.
        pub fn session<S>(self, _session: S) -> Self {
            self
        }

        /// Accepts options.
        pub fn with_options<O>(self, _options: O) -> Self {
            self
        }

        /// Accepts a write concern.
        pub fn write_concern<W>(self, _wc: W) -> Self {
            self
        }
    }

    impl<T> std::future::IntoFuture for Stub<T> {
        type Output = Result<T>;
        type IntoFuture = std::future::Ready<Result<T>>;

        fn into_future(self) -> Self::IntoFuture {
            std::future::ready(Ok(self.0))
        }
    }
}
