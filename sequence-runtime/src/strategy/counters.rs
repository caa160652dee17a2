//! The counters a sequence with numbers takes them from: one counter document per period and
//! scope (`counter`), or the shards of a `ranges` sequence. This is the one place that tells
//! the two apart: every operation of a [`Sequence`](crate::Sequence) that takes or moves
//! numbers asks [`Counters`], and none branches on the strategy itself.

use std::sync::Arc;

use mongodb::ClientSession;

use super::ranges::Shards;
use crate::error::Result;
use crate::id::{Bounds, CounterKey, IdRange, Slot};
use crate::observability::StatsCell;
use crate::observability::{reserving, Mode};
use crate::store::{CounterStore, Reservation};

/// Where a sequence's numbers come from.
#[derive(Clone, Debug)]
pub(crate) enum Counters {
    /// One counter document per period and scope, in `store`, its values in `bounds`.
    One {
        store: Arc<dyn CounterStore>,
        bounds: Bounds,
    },
    /// The shards of a ranges sequence, each owning a slice of the values.
    Ranges(Arc<Shards>),
}

impl Counters {
    /// The shards, for the cache's refills.
    pub(crate) fn shards(&self) -> Option<&Arc<Shards>> {
        match self {
            Counters::One { .. } => None,
            Counters::Ranges(shards) => Some(shards),
        }
    }

    /// Whether the numbers come from one counter (per period and scope): what the operations
    /// that read or set a single counter need.
    pub(crate) fn is_one(&self) -> bool {
        matches!(self, Counters::One { .. })
    }

    /// Exactly `n` contiguous values of `slot`: from its counter, or from one shard; the
    /// reservation's outcome recorded in `stats`.
    pub(crate) async fn reserve(
        &self,
        stats: &StatsCell,
        slot: &Slot,
        n: u64,
    ) -> Result<Reservation> {
        match self {
            Counters::One { store, bounds } => {
                let r = store.reserve(&slot.key, n, *bounds, None);
                reserving(stats, &slot.key, n, Mode::Bulk, Some(*bounds), r).await
            }
            Counters::Ranges(shards) => {
                let r = shards.reserve(n, false);
                reserving(stats, &shards.name(), n, Mode::Bulk, None, r).await
            }
        }
    }

    /// `n` values above `floor` from the counter that `value` of `key` came from; the
    /// reservation's outcome recorded in `stats`.
    pub(crate) async fn reserve_above(
        &self,
        stats: &StatsCell,
        key: &CounterKey,
        value: i64,
        n: u64,
        floor: i64,
    ) -> Result<Reservation> {
        match self {
            Counters::One { store, bounds } => {
                let r = store.reserve_above(key, n, *bounds, floor, None);
                reserving(stats, key, n, Mode::Above, Some(*bounds), r).await
            }
            Counters::Ranges(shards) => {
                let r = shards.reserve_above(value, n, floor);
                reserving(stats, &shards.name(), n, Mode::Above, None, r).await
            }
        }
    }

    /// Moves the counter that `value` of `key` came from up to `last` (never down).
    pub(crate) async fn raise(&self, key: &CounterKey, value: i64, last: i64) -> Result<()> {
        match self {
            Counters::One { store, bounds } => {
                store.raise(key, last, *bounds, None).await.map(drop)
            }
            Counters::Ranges(shards) => shards.raise(value, last).await,
        }
    }

    /// Waits until no other session's transaction holds the counter `key` (see
    /// [`CounterStore::wait_for_transactions`]); ranges, never updated in a transaction,
    /// return at once.
    pub(crate) async fn wait_for_transactions(&self, key: &CounterKey) -> Result<()> {
        match self {
            Counters::One { store, .. } => store.wait_for_transactions(key).await,
            Counters::Ranges(_) => Ok(()),
        }
    }

    /// The lowest value of the counter that `value` came from (of a shard, its slice's start).
    pub(crate) fn lowest_of(&self, value: i64) -> i64 {
        match self {
            Counters::One { .. } => i64::MIN,
            Counters::Ranges(shards) => shards.slice_of(value).map_or(i64::MIN, |s| s.start),
        }
    }

    /// What stored documents of the counter that `value` of `slot` came from may hold: its
    /// values (of a shard, its slice), and the largest value to look for, above which the IDs
    /// belong to no counter of this sequence (the widest the rendering shows; of a shard, the
    /// slice's end, since the next shard's values follow).
    pub(crate) fn stored_domain(&self, value: i64, slot: &Slot, space: Bounds) -> (Bounds, i64) {
        match self {
            Counters::One { .. } => {
                let widest = slot.rendering.widest();
                (space, widest.unwrap_or(i64::MAX))
            }
            Counters::Ranges(shards) => {
                let slice = shards.slice_of(value).unwrap_or(space);
                (slice, slice.max)
            }
        }
    }

    /// Puts the counter of `key` (of a ranges sequence: every shard) back to its start, in
    /// `session` if given.
    pub(crate) async fn reset(
        &self,
        key: &CounterKey,
        session: Option<&mut ClientSession>,
    ) -> Result<()> {
        match self {
            Counters::One { store, bounds } => {
                let last = bounds.before_start();
                store
                    .set_last_issued(key, last, true, *bounds, session)
                    .await
            }
            Counters::Ranges(shards) => shards.reset(session).await,
        }
    }

    /// Deletes the counter document of `key` (of a ranges sequence: every shard's), in
    /// `session` if given; returns whether any existed.
    pub(crate) async fn delete(
        &self,
        key: &CounterKey,
        session: Option<&mut ClientSession>,
    ) -> Result<bool> {
        match self {
            Counters::One { store, .. } => store.delete(key, session).await,
            Counters::Ranges(shards) => shards.delete(session).await,
        }
    }

    /// The key of the counter `range` (cached for `slot`) was taken from, to give it back;
    /// `None` if no counter holds it any more.
    pub(crate) fn key_of(&self, range: IdRange, slot: &Slot) -> Option<CounterKey> {
        match self {
            Counters::One { .. } => Some(slot.key.clone()),
            Counters::Ranges(shards) => shards.key_of(range),
        }
    }

    /// Notes that the values from `first` on were given back to their counter.
    pub(crate) fn gave_back(&self, first: i64) {
        if let Counters::Ranges(shards) = self {
            shards.gave_back(first);
        }
    }
}
