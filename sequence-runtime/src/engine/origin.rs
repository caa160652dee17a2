//! Where the values of a sequence come from: its counter (of the period and scope in use), or
//! the shards of a ranges sequence.

use std::sync::Arc;

use super::sharded::Shards;
use crate::error::{Error, Result};
use crate::store::{CounterStore, Reservation};
use crate::values::{Bounds, Slot};

/// Where a reservation takes its values from.
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    from: From,
    /// Equal for the origins whose callers may share a reservation.
    id: String,
}

#[derive(Clone, Debug)]
enum From {
    /// One counter.
    Counter {
        store: Arc<dyn CounterStore>,
        /// The counter's key is the slot's.
        slot: Arc<Slot>,
        bounds: Bounds,
    },
    /// One of the shards of a ranges sequence, picked per reservation.
    Sharded(Arc<Shards>),
}

impl Origin {
    /// The counter of `slot` in `store`, whose values are in `bounds`.
    pub(crate) fn counter(store: &Arc<dyn CounterStore>, slot: &Arc<Slot>, bounds: Bounds) -> Self {
        Origin {
            id: format!("{}\0{}", store.identity(), slot.key.canonical()),
            from: From::Counter {
                store: store.clone(),
                slot: slot.clone(),
                bounds,
            },
        }
    }

    /// The shards of a ranges sequence.
    pub(crate) fn sharded(shards: &Arc<Shards>) -> Self {
        Origin {
            id: shards.identity_in_store(),
            from: From::Sharded(shards.clone()),
        }
    }

    /// A string that tells origins apart: equal for the same counter (or shards) of the same
    /// store.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Reserves `n` contiguous values, or all that are left if fewer than `n` but at least
    /// one are (of a ranges sequence: from one shard, which may give fewer).
    pub(crate) async fn up_to(&self, n: u64) -> Result<Reservation> {
        match &self.from {
            From::Sharded(shards) => shards.reserve(n, true).await,
            From::Counter {
                store,
                slot,
                bounds,
            } => match store.reserve(&slot.key, n, *bounds).await {
                Err(Error::Exhausted { last, max, .. }) if n > 1 && last < max => {
                    let left = max.abs_diff(last).min(n);
                    store.reserve(&slot.key, left, *bounds).await
                }
                other => other,
            },
        }
    }
}
