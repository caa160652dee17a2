#![doc = include_str!("../README.md")]

#[doc = include_str!("derive.md")]
pub use mongo_sequence_derive::SequentialId;
pub use mongo_sequence_runtime::*;
