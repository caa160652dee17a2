//! The hot path of a model whose sequence is a plain counter with a batch: its next ID straight
//! from this process's cache of the counter, without building a [`Sequence`] per call.
//!
//! [`Sequence`]: crate::Sequence

use std::any::TypeId;

use mongodb::Collection;
use sequence_rules::{defaults, Strategy};

use super::sequential_id::SequentialId;
use crate::id::CounterKey;
use crate::observability::Labels;
use crate::process;
use crate::strategy::counter_cache_id;

/// The next ID of `M`'s counter from the cache a [`Sequence`](crate::Sequence) of `M` uses,
/// when that cache holds one and taking it does not make a refill due; `None` otherwise, and
/// for configurations without such a cache ([`SequenceConfig`]
/// decides which have one). The cache is found under the same registry id a `Sequence` uses.
pub(crate) fn cached_id<M: SequentialId>(coll: &Collection<M>) -> Option<i64> {
    let config = &M::SEQUENCE;
    let batch = config.cached_batch()?;
    process::with_model_shared(
        TypeId::of::<M>(),
        coll,
        config.counters,
        || counter_cache_id(&CounterKey::named(config.name)),
        || Labels::new(config.name, Strategy::Counter.name()),
        |shared| shared.next_cached(batch, defaults::PREFETCH_AT),
    )
}
