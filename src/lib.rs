#![doc = include_str!("../README.md")]

#[doc = include_str!("derive.md")]
pub use mongo_sequence_derive::SequentialId;
pub use mongo_sequence_runtime::{
    action, clock, error, id, jiff, options, stats, store, sync, uuid_as_binary, Batch, Error,
    IdValue, Result, Scope, Sequence, SequenceOptions, SequentialId, Strategy,
};

#[doc(hidden)]
pub use mongo_sequence_runtime::__private;
