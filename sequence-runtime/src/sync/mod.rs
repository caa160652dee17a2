//! The IDs already stored in a target collection, and the counters moved up to them.
//!
//! [`Sequence::sync_counters`](crate::Sequence::sync_counters) and a model's `sync_counters`
//! read every stored ID with one aggregation that parses it back into its counter (period,
//! scope values, shard), and move each counter up to the highest; their
//! [`SyncReport`] has one [`SyncedCounter`] per counter. Inserts that meet a stored ID find the
//! highest ID of that one counter (`highest.rs`) and skip past it.
//!
//! ```no_run
//! # async fn f(seq: sequence_runtime::Sequence, orders: mongodb::Collection<mongodb::bson::Document>) -> sequence_runtime::Result<()> {
//! let report = seq.sync_counters(&orders, "_id").dry_run(true).await?;
//! for counter in report.counters.iter().filter(|c| c.moved()) {
//!     println!("{} would move from {:?} to {}", counter.key, counter.old, counter.new);
//! }
//! # Ok(()) }
//! ```

mod aggregation;
mod highest;
mod sync_report;

pub(crate) use aggregation::{sync, Source, Target};
pub(crate) use highest::{IdForm, StoredIds};
pub use sync_report::{SyncReport, SyncedCounter};
