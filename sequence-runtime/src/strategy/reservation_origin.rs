//! Where the values of one coalesced reservation come from: a counter (of the period and scope
//! in use), or the shards of a ranges sequence.

use std::sync::Arc;

use super::counters::Counters;
use super::ranges::Shards;
use crate::error::{Error, Result};
use crate::id::{Bounds, Slot};
use crate::observability::StatsCell;
use crate::observability::{reserving, Mode};
use crate::store::{CounterStore, Reservation};

/// Where a reservation takes its values from.
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    counters: Counters,
    /// The counter's slot (of a ranges sequence, the shards pick their own).
    slot: Option<Arc<Slot>>,
    /// Equal for the origins whose callers may share a reservation.
    id: String,
}

impl Origin {
    /// The counter of `slot` in `store`, whose values are in `bounds`.
    pub(crate) fn counter(store: &Arc<dyn CounterStore>, slot: &Arc<Slot>, bounds: Bounds) -> Self {
        Origin {
            id: format!("{}\0{}", store.identity(), slot.key.canonical()),
            counters: Counters::One {
                store: store.clone(),
                bounds,
            },
            slot: Some(slot.clone()),
        }
    }

    /// The shards of a ranges sequence.
    pub(crate) fn ranges(shards: &Arc<Shards>) -> Self {
        Origin {
            id: shards.identity_in_store(),
            counters: Counters::Ranges(shards.clone()),
            slot: None,
        }
    }

    /// A string that tells origins apart: equal for the same counter (or shards) of the same
    /// store.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// [`up_to`](Self::up_to) inside the `reserve` span of `mode`, its outcome recorded in
    /// `stats`.
    pub(crate) async fn observed(
        &self,
        stats: &StatsCell,
        mode: Mode,
        n: u64,
    ) -> Result<Reservation> {
        match (&self.counters, &self.slot) {
            (Counters::One { bounds, .. }, Some(slot)) => {
                reserving(stats, &slot.key, n, mode, Some(*bounds), self.up_to(n)).await
            }
            (Counters::Ranges(shards), _) => {
                reserving(stats, &shards.name(), n, mode, None, self.up_to(n)).await
            }
            (Counters::One { .. }, None) => unreachable!("a counter's origin has its slot"),
        }
    }

    /// Reserves `n` contiguous values, or all that are left if fewer than `n` but at least
    /// one are (of a ranges sequence: from one shard, which may give fewer).
    async fn up_to(&self, n: u64) -> Result<Reservation> {
        match (&self.counters, &self.slot) {
            (Counters::One { store, bounds }, Some(slot)) => {
                match store.reserve(&slot.key, n, *bounds, None).await {
                    Err(Error::Exhausted { last, max, .. }) if n > 1 && last < max => {
                        let left = max.abs_diff(last).min(n);
                        store.reserve(&slot.key, left, *bounds, None).await
                    }
                    other => other,
                }
            }
            (Counters::Ranges(shards), _) => shards.reserve(n, true).await,
            (Counters::One { .. }, None) => unreachable!("a counter's origin has its slot"),
        }
    }
}

impl Counters {
    /// Where the coalesced callers of `slot` take their values.
    pub(crate) fn origin(&self, slot: &Arc<Slot>) -> Origin {
        match self {
            Counters::One { store, bounds } => Origin::counter(store, slot, *bounds),
            Counters::Ranges(shards) => Origin::ranges(shards),
        }
    }
}
