#![doc = include_str!("../README.md")]

/// Derives [`IdValue`](trait@IdValue) for a one-field tuple struct over an ID type, so that
/// it can be the type of a `#[seq(id)]` field:
///
/// ```
/// use mongo_sequence::{IdValue, SequentialId};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, IdValue)]
/// #[serde(transparent)]
/// struct OrderNo(i64);
///
/// #[derive(Serialize, Deserialize, SequentialId)]
/// #[seq(name = "orders", batch = 25)]
/// struct Order {
///     #[serde(rename = "_id")]
///     id: Option<OrderNo>,
///     total: i64,
/// }
/// ```
pub use mongo_sequence_derive::IdValue;
#[doc = include_str!("derive.md")]
pub use mongo_sequence_derive::SequentialId;
pub use mongo_sequence_runtime::{
    action, claims, clock, error, id, jiff, observability, options, stats, store, sync,
    uuid_as_binary, Batch, Error, IdValue, Result, Scope, Sequence, SequenceOptions, SequentialId,
    Strategy,
};

#[doc(hidden)]
pub use mongo_sequence_runtime::__private;
