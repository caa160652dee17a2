//! The allocator behind [`mongo-sequence`](https://docs.rs/mongo-sequence): counters in a
//! MongoDB collection, reserved in contiguous ranges, cached per process, with typed errors.
//!
//! Most users depend on `mongo-sequence` and use `#[derive(SequentialId)]`; this crate holds the
//! machinery it expands to, and the [`Sequence`] handle for direct use.
//!
//! The modules are layers, each using only the ones before it: `error` (the one error type and
//! the one mapping of driver errors), `values` (IDs, keys, scopes, periods), `options` (what
//! users choose; its rules come from `mongo-sequence-rules`), `store` (where counters live and
//! the one mechanism: reserve a range), `engine` (how each strategy makes values, and the
//! per-process state), [`Sequence`], and `model` (the trait the derive implements and the
//! insert paths). `ARCHITECTURE.md` in the repository tells the whole story.

mod engine;
mod error;
mod model;
mod options;
mod sequence;
mod store;
pub mod uuid_as_binary;
mod values;

pub use engine::{Stats, SyncReport, SyncedCounter};
pub use error::{is_duplicate_key, Error, Result, DUPLICATE_KEY_CODES};
pub use model::SequentialId;
pub use mongo_sequence_rules::{BatchConfig, LayoutConfig, Strategy};
pub use options::{
    AdaptiveBatch, Batch, CounterLayout, SequenceConfig, SequenceOptions, SequenceOptionsBuilder,
    Stores,
};
pub use sequence::{Sequence, SetNext, SyncCounters};
pub use store::{BoxFuture, CounterStore, MemoryStore, MongoStore, Reservation, StoredCounter};
pub use values::{
    Bounds, BsonUuid, Clock, CounterKey, Generated, IdRange, IdValue, ManualClock, Rendering,
    Scope, SystemClock,
};

/// How long a gapless insert retries transient transaction errors by default.
pub const DEFAULT_TRANSACTION_TIMEOUT: std::time::Duration =
    std::time::Duration::from_millis(mongo_sequence_rules::defaults::TRANSACTION_TIMEOUT_MS);

/// The date and time library of periods and clocks, re-exported so that callers use the same
/// version (for example `jiff::Timestamp` for a [`ManualClock`], `jiff::civil::date` for
/// [`Sequence::purge_periods_before`]).
pub use jiff;

#[doc(hidden)]
pub mod __private {
    pub use crate::model::scope_value;
    pub use crate::{
        BsonUuid, Error, LayoutConfig, Result, Sequence, SequenceConfig, SequentialId, Strategy,
        SyncReport,
    };
    pub use mongodb;
    pub use serde;
}
