//! The hot path of a model whose sequence is a plain counter with a batch: its next ID straight
//! from this process's cache of the counter, without building a [`Sequence`] per call.
//!
//! [`Sequence`]: crate::Sequence

use std::any::TypeId;
use std::cell::RefCell;
use std::rc::Rc;

use mongodb::Collection;
use sequence_rules::{defaults, Strategy};

use super::sequential_id::SequentialId;
use crate::error::Result;
use crate::id::{CounterKey, IdValue, Rendering};
use crate::observability::Labels;
use crate::process;
use crate::strategy::counter_cache_id;

/// The next ID of `M`'s counter from the cache a [`Sequence`](crate::Sequence) of `M` uses,
/// when that cache holds one and taking it does not make a refill due; `None` otherwise, and
/// for configurations without such a cache ([`SequenceConfig`]
/// decides which have one). The cache is found under the same registry id a `Sequence` uses.
pub(crate) fn cached_id<M: SequentialId>(coll: &Collection<M>) -> Option<i64> {
    let config = &M::SEQUENCE;
    let (batch, _) = config.cached_batch()?;
    process::with_model_shared(
        TypeId::of::<M>(),
        coll,
        config.counters,
        || counter_cache_id(&CounterKey::named(config.name)),
        || Labels::new(config.name, Strategy::Counter.name()),
        |shared| shared.next_cached(batch, defaults::PREFETCH_AT),
    )
}

thread_local! {
    /// The rendering of the one counter of each model whose cached values render as more than
    /// themselves, built once per model and thread.
    static RENDERINGS: RefCell<Vec<(TypeId, Rc<Rendering>)>> = const { RefCell::new(Vec::new()) };
}

/// The ID of `value`, a value [`cached_id`] took for `M`: the value itself, or rendered as the
/// model's configuration says (padding, check digits, an encoding, a template's text).
pub(crate) fn cached_id_value<M: SequentialId>(value: i64) -> Result<M::Id> {
    if !M::SEQUENCE
        .cached_batch()
        .is_some_and(|(_, rendered)| rendered)
    {
        return M::Id::from_counter(value);
    }
    let model = TypeId::of::<M>();
    let known = RENDERINGS.with(|r| {
        r.borrow()
            .iter()
            .find(|(t, _)| *t == model)
            .map(|(_, rendering)| rendering.clone())
    });
    let rendering = match known {
        Some(rendering) => rendering,
        None => {
            let (_, format) = M::SEQUENCE.options().checked()?;
            let slot = format.constant().expect("a counter without periods");
            let rendering = Rc::new(slot.rendering.clone());
            RENDERINGS.with(|r| r.borrow_mut().push((model, rendering.clone())));
            rendering
        }
    };
    M::Id::render(value, &rendering)
}
