//! Sequential, human-readable IDs for MongoDB documents: `#[derive(SequentialId)]` on a model,
//! then `insert_with_id` stores it with the next number of a counter kept in MongoDB. Numbers
//! are reserved in ranges by one atomic update and handed out from memory; `gapless` takes
//! each number in the insert's transaction instead.
//!
//! ```
//! use mongo_sequence::SequentialId;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, SequentialId)]
//! #[seq(name = "userid", batch = 25)]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: Option<i64>,
//!     name: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = sequence_testkit::TestServer::shared()?;
//! # let client = server.client().await;
//! # let db = client.database(&sequence_testkit::unique_db_name("crate_doc"));
//! // let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:27017").await?;
//! // let db = client.database("app");
//! let users = db.collection::<User>("users");
//!
//! let mut ada = User { id: None, name: "Ada".into() };
//! let first = ada.insert_with_id(&users).await?;
//! let mut bob = User { id: None, name: "Bob".into() };
//! assert_eq!(bob.insert_with_id(&users).await?, first + 1); // from the cached batch
//!
//! User::sequence(&users).release().await?; // at shutdown: unused numbers go back
//! # db.drop().await?;
//! # Ok(()) }
//! ```
//!
//! # Map
//!
//! What code uses every day is at the root:
//!
//! | item | what it is |
//! | --- | --- |
//! | [`SequentialId`](derive@SequentialId) (derive) | generates `insert_with_id`, `insert_many_with_ids`, `upsert_with_id`, `next_id`, `next_id_for`, `sync_counters` and `sequence` on a model; its documentation lists every `#[seq(...)]` key |
//! | [`SequentialId`](trait@SequentialId) (trait) | the same operations for generic code (`T: SequentialId`) |
//! | [`IdValue`](trait@IdValue) (trait and derive) | the types an ID field may have, and newtypes over them |
//! | [`Sequence`] | a sequence's handle: take values, and the operator's operations (`current`, `set_next`, `reset`, `delete`, `release`, `stats`) |
//! | [`SequenceOptions`], [`Batch`], [`Strategy`] | a configuration without the derive |
//! | [`Error`], [`Result`] | every failure, typed, with what to do about it |
//!
//! The rest sits in modules named for what they hold:
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`action`] | what the operations return: `.await` them, or give them a session and write options first |
//! | [`options`] | [`SequenceOptions`]' builder, adaptive batches, counter layouts |
//! | [`id`] | ID values, scopes, ranges and bounds of counter values |
//! | [`store`] | where counters live: MongoDB, or process memory for unit tests |
//! | [`clock`] | the clock that chooses the period of dated IDs, and a manual one for tests |
//! | [`observability`] | what a sequence did in this process, the snapshot of every sequence of the process, the `tracing` spans and events, and the metrics of the feature `metrics` |
//! | [`sync`] | moving counters up to the IDs already stored, and its report |
//! | [`claims`] | checking and repairing the claims of a proxy collection (`unique = "proxy"`) |
//! | [`error`] | [`Error`], the one error type, into which every driver error is mapped |
//! | [`uuid_as_binary`] | serde for `uuid::Uuid` ID fields, stored as BSON UUIDs |
//! | [`jiff`] | the date and time crate of `prefix` periods and time zones, re-exported |
//!
//! [The guide](https://docs.rs/crate/mongo-sequence/latest/source/docs/README.md) (the `docs/`
//! folder of the package and the repository) teaches one job per chapter: getting started,
//! choosing a strategy, periods and scopes, adopting existing data, gapless numbering,
//! guarantees, operations, performance, reliability, sharded clusters and troubleshooting.
//!
//! # Cargo features
//!
//! - `metrics`: records the series listed in [`observability`] through the `metrics` facade.

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
pub use sequence_derive::IdValue;
#[doc = include_str!("derive.md")]
pub use sequence_derive::SequentialId;
pub use sequence_runtime::{
    action, claims, clock, error, id, jiff, observability, options, store, sync, uuid_as_binary,
    Batch, Error, IdValue, Result, Scope, Sequence, SequenceOptions, SequentialId, Strategy,
};

#[doc(hidden)]
pub use sequence_runtime::__private;

// The README and every chapter of the guide are compiled as doctests, so that their code
// cannot drift from the crate. `tests/docs.rs` checks that no chapter is missing here.
#[cfg(doctest)]
mod docs {
    #[doc = include_str!("../README.md")]
    struct Readme;
    #[doc = include_str!("../docs/README.md")]
    struct Guide;
    #[doc = include_str!("../docs/getting-started.md")]
    struct GettingStarted;
    #[doc = include_str!("../docs/strategies.md")]
    struct Strategies;
    #[doc = include_str!("../docs/periods-formats-scopes.md")]
    struct PeriodsFormatsScopes;
    #[doc = include_str!("../docs/ids-for-people.md")]
    struct IdsForPeople;
    #[doc = include_str!("../docs/adopting.md")]
    struct Adopting;
    #[doc = include_str!("../docs/gapless.md")]
    struct Gapless;
    #[doc = include_str!("../docs/guarantees.md")]
    struct Guarantees;
    #[doc = include_str!("../docs/operations.md")]
    struct Operations;
    #[doc = include_str!("../docs/performance.md")]
    struct Performance;
    #[doc = include_str!("../docs/reliability.md")]
    struct Reliability;
    #[doc = include_str!("../docs/sharded-clusters.md")]
    struct ShardedClusters;
    #[doc = include_str!("../docs/troubleshooting.md")]
    struct Troubleshooting;
}
