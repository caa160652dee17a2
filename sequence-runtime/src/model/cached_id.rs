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

/// The next value of `M`'s counter from the cache a [`Sequence`](crate::Sequence) of `M` uses,
/// when that cache holds one and taking it does not make a refill due; `None` otherwise, and
/// for configurations without such a cache ([`SequenceConfig`]
/// decides which have one). The cache is found under the same registry id a `Sequence` uses.
pub(crate) fn cached_id<M: SequentialId>(coll: &Collection<M>) -> Option<Cached> {
    let config = &M::SEQUENCE;
    // Decided once per model, at compile time.
    let (batch, rendered) = const { M::SEQUENCE.cached_batch() }?;
    process::with_model_shared(
        TypeId::of::<M>(),
        coll,
        config.counters,
        || counter_cache_id(&CounterKey::named(config.name)),
        || Labels::new(config.name, Strategy::Counter.name()),
        |shared| shared.next_cached(batch, defaults::PREFETCH_AT),
    )
    .map(|value| Cached { value, rendered })
}

/// A value [`cached_id`] took.
#[derive(Clone, Copy)]
pub(crate) struct Cached {
    /// The counter value.
    pub(crate) value: i64,
    /// Whether the model's IDs are more than the value (padding, check digits, an encoding, a
    /// template's text), rendered by [`Cached::id`].
    pub(crate) rendered: bool,
}

thread_local! {
    /// The rendering of the one counter of each model whose cached values render as more than
    /// themselves, built once per model and thread.
    static RENDERINGS: RefCell<Vec<(TypeId, Rc<Rendering>)>> = const { RefCell::new(Vec::new()) };
}

impl Cached {
    /// The ID of the value, for `M`, whose cache it came from: the value itself, or rendered as
    /// the model's configuration says.
    pub(crate) fn id<M: SequentialId>(self) -> Result<M::Id> {
        if !self.rendered {
            return M::Id::from_counter(self.value);
        }
        M::Id::render(self.value, &*rendering::<M>()?)
    }
}

/// The rendering of `M`'s one counter, built once per model and thread.
fn rendering<M: SequentialId>() -> Result<Rc<Rendering>> {
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
    Ok(rendering)
}
