//! Where counters live, behind the one mechanism every strategy, cache and bulk path uses:
//! reserve a contiguous range of values from a counter, atomically.
//!
//! [`MongoStore`] keeps counters in a MongoDB collection; [`MemoryStore`] keeps them in process
//! memory for users' unit tests, with the same semantics; [`CounterStore`] is the trait a store
//! of one's own implements.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use sequence_runtime::store::MemoryStore;
//! use sequence_runtime::{Sequence, SequenceOptions};
//!
//! let store = Arc::new(MemoryStore::new());
//! let a = Sequence::with_store(store.clone(), SequenceOptions::builder("a").build())?;
//! let range = a.reserve(3).await?;
//! assert_eq!((range.first(), range.last()), (1, 3));
//! # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
//! ```

mod counter_store;
mod deployment;
#[cfg(test)]
mod filter_properties;
mod guarded_update;
pub(crate) mod layout;
pub mod literal;
mod memory;
mod mongo;
mod sequence_record;

pub(crate) use counter_store::PastPeriods;
pub use counter_store::{BoxFuture, CounterStore, Reservation};
pub(crate) use deployment::Deployment;
pub use layout::StoredCounter;
pub use memory::MemoryStore;
pub(crate) use mongo::forget_known_counters;
pub use mongo::MongoStore;
pub use sequence_record::SequenceRecord;
