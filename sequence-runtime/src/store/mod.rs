//! Where counters live, behind the one mechanism every strategy, cache and bulk path uses:
//! reserve a contiguous range of values from a counter, atomically.

mod counter_store;
mod deployment;
mod layout;
mod memory;
mod mongo;

pub use counter_store::{BoxFuture, CounterStore, Reservation};
pub(crate) use deployment::Deployment;
pub use layout::StoredCounter;
pub use memory::MemoryStore;
pub use mongo::MongoStore;
