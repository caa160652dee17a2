//! The state a process keeps per sequence, apart from how values are made:
//!
//! - `registry.rs`: the process-wide maps of what the handles of one sequence share (its
//!   state, the full shards of a ranges sequence, the queues of gapless groups);
//! - `memo.rs`: the per-thread memo of models' values (their `Sequence`), by model type and
//!   collection handle;
//! - `cache/mod.rs`: a sequence's shared state ([`ProcessState`]) and its cache of reserved
//!   ranges: the range in use, handed out without a lock, in `cache/segment.rs`; what the
//!   cache holds under its lock, and the arithmetic of its ranges, in `cache/state.rs`; what
//!   the paths besides taking values do to it in `cache/adjust.rs`; its refills in
//!   `cache/refill.rs`;
//! - `coalesce.rs`: one reservation for the callers of a counter waiting together;
//! - `bulk.rs`: the reservation made ahead for the next bulk insert of a sequence;
//! - `scope_caches.rs`: the caches of the scope values in use of a scoped sequence with a batch.

mod bulk;
mod cache;
mod coalesce;
mod memo;
mod registry;
mod scope_caches;

pub(crate) use cache::{Later, Look, ProcessState, RangeCopy, Request, Taken};
pub(crate) use memo::HandleMemo;
pub(crate) use registry::{
    entries, full_shards, group, remove_group, shared, watched, CounterAt, GroupOf,
};
