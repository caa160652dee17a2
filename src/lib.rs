#![doc = include_str!("../README.md")]

pub use mongo_sequence_derive::SequentialId;
pub use mongo_sequence_runtime::*;
