//! The [`Sequence`] of a model, built once per model, collection handle and thread: the
//! configuration was checked by the derive at compile time, and a call that takes its number
//! from the counter (batch 1, a scope, gapless, the bulk path) does not check it again, nor
//! build a store, nor look the shared state up in the registry. Beside it, the thread keeps its
//! copy of the range in use of the sequence's cache, which a cached ID is taken from.

use std::any::TypeId;
use std::cell::RefCell;

use mongodb::Collection;

use crate::options::SequenceConfig;
use crate::process::{HandleMemo, RangeCopy};
use crate::sequence::Sequence;

thread_local! {
    /// The one per-thread memo of models' sequences, by model type and collection handle.
    static SEQUENCES: RefCell<HandleMemo<Remembered>> = const { RefCell::new(HandleMemo::new()) };
}

/// What a thread keeps of a model and collection handle.
struct Remembered {
    seq: Sequence,
    /// The thread's copy of the range in use of the sequence's cache.
    copy: RangeCopy,
}

/// The sequence of the model `model` (its type), whose configuration is `config`, for `coll`,
/// built on first use in this thread.
pub(crate) fn sequence<T: Send + Sync + 'static>(
    model: TypeId,
    coll: &Collection<T>,
    config: &SequenceConfig,
) -> Sequence {
    with_sequence(model, coll, config, |seq, _| seq.clone())
}

/// Calls `f` with the sequence [`sequence`] returns, without cloning it (the hot path of
/// cached IDs touches no reference count), and with the thread's copy of the range in use of
/// its cache. `f` must not use this memo.
pub(crate) fn with_sequence<T: Send + Sync + 'static, R>(
    model: TypeId,
    coll: &Collection<T>,
    config: &SequenceConfig,
    f: impl FnOnce(&Sequence, &mut RangeCopy) -> R,
) -> R {
    SEQUENCES.with(|memo| {
        let mut memo = memo.borrow_mut();
        let remembered = memo.get(model, coll, || Remembered {
            seq: config.sequence_for(coll),
            copy: RangeCopy::new(),
        });
        f(&remembered.seq, &mut remembered.copy)
    })
}
