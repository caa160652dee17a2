//! The hot path of a model whose sequence is a plain counter with a batch: its next ID straight
//! from this process's cache of the counter, through the model's [`Sequence`] remembered per
//! thread, without cloning it or building an issue of its own.
//!
//! [`Sequence`]: crate::Sequence

use std::any::TypeId;

use mongodb::Collection;
use sequence_rules::defaults;

use super::handle;
use super::sequential_id::SequentialId;
use crate::error::Result;
use crate::id::IdValue;

/// The next value of `M`'s counter from the cache of `M`'s [`Sequence`](crate::Sequence) for
/// `coll`, when that cache holds one and taking it does not make a refill due; `None`
/// otherwise, and for configurations without such a cache ([`SequenceConfig`] decides which
/// have one, at compile time).
///
/// [`SequenceConfig`]: crate::SequenceConfig
pub(crate) fn cached_id<M: SequentialId>(coll: &Collection<M>) -> Option<Cached<M::Id>> {
    let (batch, rendered) = const { M::SEQUENCE.cached_batch() }?;
    handle::with_sequence(TypeId::of::<M>(), coll, &M::SEQUENCE, |seq| {
        let value = seq
            .process_state()?
            .next_cached(batch, defaults::PREFETCH_AT)?;
        let id = if rendered {
            seq.constant_id(value)
        } else {
            M::Id::from_counter(value)
        };
        Some(Cached { value, id })
    })
}

/// A value [`cached_id`] took, and the model's ID of it.
pub(crate) struct Cached<I> {
    /// The counter value.
    pub(crate) value: i64,
    /// The value as the model's ID: itself, or rendered as the configuration says (padding,
    /// check digits, an encoding, a template's text).
    pub(crate) id: Result<I>,
}
