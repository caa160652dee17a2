//! Where the values of one coalesced reservation come from: a counter (of the period and scope
//! in use), or the shards of a ranges sequence.

use std::sync::Arc;

use futures_util::future::join_all;
use tracing::Instrument;

use super::counters::Counters;
use super::ranges::Shards;
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey, Slot};
use crate::observability::{near_end, reserving, Mode, StatsCell, Timer, RESERVE};
use crate::store::{CounterStore, Reservation};

/// Where a reservation takes its values from.
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    source: Source,
    /// Equal for the origins whose callers may share a reservation.
    id: String,
}

/// The counter, or the shards, an [`Origin`] reserves from.
#[derive(Clone, Debug)]
enum Source {
    /// The counter of `slot` in `store`, whose values are in `bounds`.
    Counter {
        store: Arc<dyn CounterStore>,
        bounds: Bounds,
        slot: Arc<Slot>,
    },
    /// The shards of a ranges sequence, which pick their own counter.
    Ranges(Arc<Shards>),
}

impl Origin {
    /// The counter of `slot` in `store`, whose values are in `bounds`.
    pub(crate) fn counter(store: &Arc<dyn CounterStore>, slot: &Arc<Slot>, bounds: Bounds) -> Self {
        Origin {
            id: format!("{}\0{}", store.identity(), slot.key.canonical()),
            source: Source::Counter {
                store: store.clone(),
                bounds,
                slot: slot.clone(),
            },
        }
    }

    /// The shards of a ranges sequence.
    pub(crate) fn ranges(shards: &Arc<Shards>) -> Self {
        Origin {
            id: shards.identity_in_store(),
            source: Source::Ranges(shards.clone()),
        }
    }

    /// The counter's key, of an origin that is one counter.
    fn key(&self) -> Option<&CounterKey> {
        match &self.source {
            Source::Counter { slot, .. } => Some(&slot.key),
            Source::Ranges(_) => None,
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
        match &self.source {
            Source::Counter { bounds, slot, .. } => {
                reserving(stats, &slot.key, n, mode, Some(*bounds), self.up_to(n)).await
            }
            Source::Ranges(shards) => {
                reserving(stats, &shards.name(), n, mode, None, self.up_to(n)).await
            }
        }
    }

    /// [`observed`](Self::observed) for callers waiting together, its reservation counted in
    /// `stats`.
    pub(crate) async fn coalesced(&self, stats: &StatsCell, n: u64) -> Result<Reservation> {
        let r = self.observed(stats, Mode::Coalesced, n).await;
        if let Ok(r) = &r {
            stats.reserved(r.range.len(), r.retries);
        }
        r
    }

    /// The values of several origins of one sequence at once, `n` of each (origins distinct),
    /// one result per origin in order, recorded in `stats`: the counters of one store in one
    /// reservation ([`CounterStore::reserve_many`]), counted as one; shards each on their own.
    /// An origin whose values could not be taken together is reserved again alone, as
    /// [`observed`](Self::observed) (which takes what is left near the counter's end).
    pub(crate) async fn observed_together(
        stats: &StatsCell,
        wanted: &[(Origin, u64)],
    ) -> Vec<Result<Reservation>> {
        let Some((store, bounds)) = one_store(wanted) else {
            let alone = wanted.iter().map(|(origin, n)| origin.coalesced(stats, *n));
            return join_all(alone).await;
        };
        let keys: Vec<(CounterKey, u64)> = wanted
            .iter()
            .filter_map(|(origin, n)| Some((origin.key()?.clone(), *n)))
            .collect();
        let values: u64 = keys.iter().map(|(_, n)| n).sum();
        let span = tracing::debug_span!(
            target: RESERVE,
            "reserve_many",
            sequence = %stats.labels.sequence,
            strategy = stats.labels.strategy,
            counters = keys.len(),
            values,
        );
        let timer = Timer::start();
        let together = store.reserve_many(&keys, bounds).instrument(span).await;
        stats.series.reservation_took(timer.elapsed());
        // Counted once if it reserved anything (the counters it failed are counted alone).
        let reserved = together.iter().flatten().map(|r| r.range.len()).sum();
        if reserved > 0 {
            stats.reserved(reserved, 0);
        }
        let results = wanted
            .iter()
            .zip(together)
            .map(|((origin, n), r)| async move {
                match r {
                    Ok(r) => {
                        if let Some(key) = origin.key() {
                            near_end(stats, key, r.range.last(), bounds);
                        }
                        Ok(r)
                    }
                    // Near the end, what is left; else the reason, as a reservation alone says it.
                    Err(_) => origin.coalesced(stats, *n).await,
                }
            });
        join_all(results).await
    }

    /// Reserves `n` contiguous values, or all that are left if fewer than `n` but at least
    /// one are (of a ranges sequence: from one shard, which may give fewer).
    async fn up_to(&self, n: u64) -> Result<Reservation> {
        match &self.source {
            Source::Counter {
                store,
                bounds,
                slot,
            } => match store.reserve(&slot.key, n, *bounds, None).await {
                Err(Error::Exhausted { last, max, .. }) if n > 1 && last < max => {
                    let left = max.abs_diff(last).min(n);
                    store.reserve(&slot.key, left, *bounds, None).await
                }
                other => other,
            },
            Source::Ranges(shards) => shards.reserve(n, true).await,
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

/// The store and bounds every origin of `wanted` takes its counter from, if they share them.
fn one_store(wanted: &[(Origin, u64)]) -> Option<(Arc<dyn CounterStore>, Bounds)> {
    let (first, _) = wanted.first()?;
    let Source::Counter { store, bounds, .. } = &first.source else {
        return None;
    };
    let shared = wanted.iter().all(|(origin, _)| match &origin.source {
        Source::Counter {
            store: s,
            bounds: b,
            ..
        } => Arc::ptr_eq(s, store) && b == bounds,
        Source::Ranges(_) => false,
    });
    shared.then(|| (store.clone(), *bounds))
}
