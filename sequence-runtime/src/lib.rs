//! The allocator behind [`mongo-sequence`](https://docs.rs/mongo-sequence): counters in a
//! MongoDB collection, reserved in contiguous ranges, cached per process, with typed errors.
//!
//! Most users depend on `mongo-sequence` and use `#[derive(SequentialId)]`; this crate holds the
//! machinery it expands to, and the [`Sequence`] handle for direct use.

mod bounds;
mod cache;
mod clock;
mod config;
mod error;
mod gapless;
mod generated;
mod id;
mod key;
mod layout;
mod memory;
mod model;
mod mongo_store;
mod names;
mod options;
mod pattern;
mod period;
mod random;
mod range;
mod registry;
mod render;
mod retry;
mod scope;
mod sequence;
mod sharded;
mod stats;
mod store;
mod strategy;
pub mod uuid_as_binary;

pub use bounds::Bounds;
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{BatchConfig, LayoutConfig, SequenceConfig, Strategy};
pub use error::{is_duplicate_key, Error, Result, DUPLICATE_KEY_CODES};
pub use gapless::DEFAULT_TRANSACTION_TIMEOUT;
pub use generated::{BsonUuid, Generated};
pub use id::IdValue;
pub use key::CounterKey;
pub use layout::{CounterLayout, Stores};
pub use memory::MemoryStore;
pub use model::SequentialId;
pub use mongo_store::MongoStore;
pub use options::{AdaptiveBatch, Batch, SequenceOptions, SequenceOptionsBuilder};
pub use range::IdRange;
pub use render::Rendering;
pub use scope::Scope;
pub use sequence::{Sequence, SetNext};
pub use stats::Stats;
pub use store::{BoxFuture, CounterStore, Reservation};

/// The date and time library of periods and clocks, re-exported so that callers use the same
/// version (for example `jiff::Timestamp` for a [`ManualClock`], `jiff::civil::date` for
/// [`Sequence::purge_periods_before`]).
pub use jiff;

#[doc(hidden)]
pub mod __private {
    pub use crate::model::scope_value;
    pub use crate::{
        BsonUuid, Error, LayoutConfig, Result, Sequence, SequenceConfig, SequentialId, Strategy,
    };
    pub use mongodb;
    pub use serde;
}
