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
//! | [`observability`] | what a sequence did in this process ([`Stats`](observability::Stats)), the snapshot of every sequence of the process, the `tracing` spans and events, the metrics |
//! | [`sync`] | moving counters up to the IDs already stored, and its report |
//! | [`claims`] | checking and repairing the claims of a proxy collection (`unique = "proxy"`) |
//! | [`error`] | [`Error`], the one error type, into which every driver error is mapped |
//! | [`uuid_as_binary`] | serde for `uuid::Uuid` ID fields, stored as BSON UUIDs |
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
//! Internally the modules are layers, each using only the ones before it: errors, the clock,
//! ID values, observability, options, stores, strategies (how each makes its values), the
//! per-process state, stored IDs, [`Sequence`], claims, actions, and the model layer (the
//! trait the derive implements and the insert paths). `ARCHITECTURE.md` in the repository
//! tells the whole story.

pub mod action;
pub mod claims;
pub mod clock;
pub mod error;
pub mod id;
mod model;
pub mod observability;
pub mod options;
mod process;
#[cfg(test)]
mod property_cases;
mod sequence;
pub mod store;
mod strategy;
pub mod sync;
pub mod uuid_as_binary;

pub use error::{Error, Result};
pub use id::{IdValue, Scope};
pub use model::SequentialId;
pub use options::{Batch, SequenceOptions};
pub use sequence::Sequence;
pub use sequence_rules::Strategy;

/// The date and time library of periods and clocks, re-exported so that callers use the same
/// version (for example `jiff::Timestamp` for a [`ManualClock`](clock::ManualClock),
/// `jiff::civil::date` for [`Sequence::purge_periods_before`]).
pub use jiff;

#[doc(hidden)]
pub mod __private {
    pub use crate::action::{
        EnsureIndexes, IndexReport, InsertManyWithIds, InsertWithId, NextId, SyncCounters,
        UpsertWithId,
    };
    pub use crate::id::{Generated, IdValue, ParsedId, Rendering};
    pub use crate::model::scope_value;
    pub use crate::options::SequenceConfig;
    pub use crate::{Error, Result, Sequence, SequentialId, Strategy};
    pub use mongodb;
    pub use sequence_rules::encoding::{CheckDigit, Encoding};
    pub use sequence_rules::{
        AdaptiveBatch, Batch, FilterField, FilterValue, Layout, Stores, Unique,
    };
    pub use sequence_rules::{IdKind, IdNeeds, IdProblems, Key};
    pub use serde;

    pub use crate::sync::SyncReport;

    /// How many entries of this process's per-sequence state have an id containing `needle`
    /// (a database or collection name): for tests that the state stays bounded.
    pub fn registry_entries(needle: &str) -> usize {
        crate::process::entries(needle)
    }

    /// How many counters of `seq` (periods, scope values) have callers queued for a coalesced
    /// reservation now, in the per-process state `seq` shares: for tests that per-scope state
    /// lasts only as long as its callers.
    pub fn coalescer_queues(seq: &Sequence) -> usize {
        seq.coalescer_queues()
    }

    /// What the methods of a model that failed to derive return: accepts what the real
    /// actions accept, so that a compile error of the derive comes alone.
    pub struct Stub<T>(std::marker::PhantomData<T>);

    impl<T> Stub<T> {
        /// A stub of an action whose output would be a `T`.
        pub fn new() -> Self {
            Stub(std::marker::PhantomData)
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

        /// Accepts a dry run.
        pub fn dry_run(self, _dry_run: bool) -> Self {
            self
        }
    }

    impl<T> Default for Stub<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    impl<T> std::future::IntoFuture for Stub<T> {
        type Output = Result<T>;
        type IntoFuture = std::future::Ready<Result<T>>;

        fn into_future(self) -> Self::IntoFuture {
            // Never runs: the derive's errors stop the build.
            std::future::ready(Err(crate::Error::InvalidArgument {
                argument: "model",
                reason: "the derive of `SequentialId` failed".into(),
            }))
        }
    }
}
