//! The [`Sequence`] of a model, built once per model, collection handle and thread: the
//! configuration was checked by the derive at compile time, and a call that takes its number
//! from the counter (batch 1, a scope, gapless, the bulk path) does not check it again, nor
//! build a store, nor look the shared state up in the registry.

use std::any::TypeId;
use std::cell::RefCell;

use mongodb::Collection;

use crate::options::SequenceConfig;
use crate::process::HandleMemo;
use crate::sequence::Sequence;

thread_local! {
    /// The one per-thread memo of models' sequences, by model type and collection handle.
    static SEQUENCES: RefCell<HandleMemo<Sequence>> = const { RefCell::new(HandleMemo::new()) };
}

/// The sequence of the model `model` (its type), whose configuration is `config`, for `coll`,
/// built on first use in this thread.
pub(crate) fn sequence<T: Send + Sync + 'static>(
    model: TypeId,
    coll: &Collection<T>,
    config: &SequenceConfig,
) -> Sequence {
    with_sequence(model, coll, config, Sequence::clone)
}

/// Calls `f` with the sequence [`sequence`] returns, without cloning it (the hot path of
/// cached IDs touches no reference count). `f` must not use this memo.
pub(crate) fn with_sequence<T: Send + Sync + 'static, R>(
    model: TypeId,
    coll: &Collection<T>,
    config: &SequenceConfig,
    f: impl FnOnce(&Sequence) -> R,
) -> R {
    SEQUENCES.with(|memo| {
        f(memo
            .borrow_mut()
            .get(model, coll, || config.sequence_for(coll)))
    })
}
