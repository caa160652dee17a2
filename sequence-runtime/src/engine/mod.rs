//! The engine: how each strategy makes its values from the one mechanism of the stores
//! (reserve a contiguous range), and the state a process keeps per sequence.
//!
//! - `kind.rs`: what a sequence holds for its strategy;
//! - `counters.rs`: the counters a sequence takes numbers from (one, or shards): the one place
//!   that tells the `counter` and `ranges` strategies apart;
//! - `origin.rs`: where a coalesced reservation takes its values from;
//! - `cache.rs`: the cached ranges of a counter, with the prefetch of the next one;
//! - `coalesce.rs`: one reservation for the callers of a counter waiting together (`batch = 1`);
//! - `ranges.rs`: the shards of a ranges sequence, each owning a slice of the values;
//! - `random.rs`: uniform draws;
//! - `registry.rs`: the per-process state shared by the handles of one sequence;
//! - `stored.rs`: the IDs already stored in a target collection (skipping ahead past them);
//! - `sync.rs`: every counter moved up to the IDs stored for it (`sync_counters`);
//! - `stats.rs`: what a sequence did in this process;
//! - `snapshot.rs`: every sequence of the process, with its statistics and cache, for operators;
//! - `series.rs`: the same, recorded through the `metrics` facade (feature `metrics`);
//! - `telemetry.rs`: the span of a reservation and the warning of a counter near its end.

mod cache;
mod coalesce;
mod counters;
mod kind;
mod origin;
mod random;
mod ranges;
mod registry;
mod series;
mod snapshot;
mod stats;
mod stored;
mod sync;
mod telemetry;

pub use cache::CacheSnapshot;
pub(crate) use cache::{ProcessState, Request};
pub(crate) use kind::{counter_cache_id, Kind};
pub(crate) use registry::{
    entries, group, own, place, remove_group, shared, with_model_shared, GroupOf, HandleMemo,
};
pub(crate) use series::Labels;
pub use snapshot::{snapshot, SequenceSnapshot, Snapshot};
pub use stats::Stats;
pub(crate) use stored::{IdForm, StoredIds};
pub(crate) use sync::{sync, Source, Target};
pub use sync::{SyncReport, SyncedCounter};
pub(crate) use telemetry::{reserving, Mode};
