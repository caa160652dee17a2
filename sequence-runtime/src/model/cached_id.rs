//! The hot path of a model whose sequence is a plain counter with a batch: its next ID straight
//! from this process's cache of the counter, through the model's [`Sequence`] remembered per
//! thread, without cloning it or building an issue of its own. The value is one atomic add on
//! the thread's copy of the cache's range in use, kept beside the sequence; at the range's end
//! or its prefetch mark, the cache is looked at once: when it has no value ready, the look
//! hands over what the call does next.
//!
//! [`Sequence`]: crate::Sequence

use std::any::TypeId;

use mongodb::Collection;

use super::handle;
use super::sequential_id::SequentialId;
use crate::error::Error;
use crate::id::IdValue;
use crate::process::{Later, Look, Taken};
use crate::sequence::Sequence;

/// The next value of `M`'s counter from the cache of `M`'s [`Sequence`] for `coll`, or the
/// rest of the call when the cache needs a refill or a prefetch; `None` for configurations
/// without such a cache ([`SequenceConfig`] decides which have one, at compile time) and for
/// invalid options.
///
/// [`SequenceConfig`]: crate::SequenceConfig
pub(crate) fn cached_id<M: SequentialId>(coll: &Collection<M>) -> Option<Cached<M::Id>> {
    let rendered = const { M::SEQUENCE.cached_rendering() }?;
    handle::with_sequence(TypeId::of::<M>(), coll, &M::SEQUENCE, |seq, copy| {
        let look = match copy.take() {
            Some(Taken {
                value,
                at_mark: false,
            }) => Look::Ready(value),
            Some(Taken {
                value,
                at_mark: true,
            }) => seq.look(copy, Some(value))?,
            None => seq.look(copy, None)?,
        };
        Some(match look {
            Look::Ready(value) => {
                let id = if rendered {
                    seq.constant_id(value)
                } else {
                    M::Id::from_counter(value)
                };
                match id {
                    Ok(id) => Cached::Taken { value, id },
                    Err(e) => Cached::Failed(Box::new(e)),
                }
            }
            Look::Later(later) => Cached::Later(seq.clone(), later),
        })
    })
}

/// What [`cached_id`] found.
pub(crate) enum Cached<I> {
    /// A value taken from the cache.
    Taken {
        /// The counter value.
        value: i64,
        /// The value as the model's ID: itself, or rendered as the configuration says
        /// (padding, check digits, an encoding, a template's text).
        id: I,
    },
    /// A value taken from the cache that the model's ID cannot hold or render (boxed: the
    /// hot path moves an ID, not an error).
    Failed(Box<Error>),
    /// The rest of the call, to finish at once with [`Sequence::finish_id`].
    Later(Sequence, Later),
}
