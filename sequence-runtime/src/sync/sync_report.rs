//! What moving counters up to the IDs already stored found and did.

use crate::id::CounterKey;

/// What `sync_counters` found and did.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SyncReport {
    /// Every counter that stored IDs belong to, in key order, with what was done to it.
    pub counters: Vec<SyncedCounter>,
    /// Stored IDs that belong to no counter of the sequence: of another BSON type than the
    /// model's, text that does not match the pattern, or values below `start`.
    pub skipped: u64,
    /// Whether the counters were left as they are (a dry run): `new` then says where they
    /// would have moved.
    pub dry_run: bool,
}

/// One counter of a [`SyncReport`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SyncedCounter {
    /// The counter's key.
    pub key: CounterKey,
    /// The last issued value before (`None`: the counter did not exist).
    pub old: Option<i64>,
    /// The last issued value after: the highest stored value, or `old` if that was higher
    /// (a counter never moves down).
    pub new: i64,
    /// The highest counter value stored for this counter.
    pub stored: i64,
    /// How many stored IDs belong to this counter.
    pub ids: u64,
}

impl SyncedCounter {
    /// Whether the counter moved (or, in a dry run, would move).
    pub fn moved(&self) -> bool {
        self.old != Some(self.new)
    }
}
