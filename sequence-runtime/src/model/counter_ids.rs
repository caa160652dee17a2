//! Inserts of the `counter` and `ranges` strategies: a number per document from the model's
//! counter, past the IDs already stored (see `skip_ahead.rs`).

use mongodb::options::{InsertManyOptions, InsertOneOptions};
use mongodb::Collection;

use super::cached_id::{self, Cached};
use super::document_scope;
use super::first_values::{self, First};
use super::insert;
use super::sequential_id::SequentialId;
use super::skip_ahead;
use crate::error::Result;
use crate::id::IdValue;
use crate::sequence::{Issued, Sequence};

/// Takes the next number for `doc` (from this process's cache of a plain counter when it has
/// one), stores it in the ID field and inserts `doc`; skips ahead if a stored document has
/// that ID. A scope value's first value is taken and inserted in a round with the first values
/// of other scope values (see `first_values.rs`).
pub(crate) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    options: Option<&InsertOneOptions>,
) -> Result<T::Id> {
    let (id, taken) = match cached_id::cached_id(coll) {
        Some(Cached::Taken { value, id }) => (id, NumberFrom::Cached(value)),
        Some(Cached::Failed(e)) => return Err(*e),
        Some(Cached::Later(seq, later)) => {
            let (id, issued) = seq.finish_id::<T::Id>(later).await?;
            (id, NumberFrom::Issued(seq, issued))
        }
        // Decided at compile time: a model without scope never enters the code of scopes.
        None if T::SEQUENCE.scope.is_empty() => {
            let seq = T::sequence(coll);
            let (id, issued) = seq.issue_id::<T::Id>().await?;
            (id, NumberFrom::Issued(seq, issued))
        }
        None => {
            let seq = document_scope::for_document(T::sequence(coll), doc)?;
            let (id, issued) = match first_values::insert_one(doc, coll, &seq, options).await? {
                First::Inserted(id) => return Ok(id),
                First::Alone => seq.issue_ids::<T::Id>(1, None).await?.remove(0),
                First::FromCache(cache) => seq.issue_id_from::<T::Id>(&cache).await?,
                First::FromSequence => seq.issue_id::<T::Id>().await?,
            };
            (id, NumberFrom::Issued(seq, issued))
        }
    };
    // Inserted, or past the stored IDs a bounded number of rounds: each round moves the
    // counter past the highest stored ID and tries a new one.
    let (mut id, mut taken, mut rounds) = (id, taken, 0);
    loop {
        doc.set_id(id.clone());
        let taken_by = match insert::insert_one(coll, &*doc, options).await {
            Ok(()) => return Ok(id),
            Err(e) if skip_ahead::on_id_field::<T>(&e) => e,
            Err(e) => return Err(e),
        };
        let (seq, issued) = taken.issued(coll)?;
        if rounds == skip_ahead::ROUNDS {
            let hint = skip_ahead::AFTER_ROUNDS;
            return Err(skip_ahead::taken(coll, &id, &issued, taken_by, hint));
        }
        rounds += 1;
        let next = skip_ahead::past_stored(doc, coll, &seq, &issued).await?;
        id = T::Id::render(next.value, &next.slot.rendering)?;
        taken = NumberFrom::Issued(seq, next);
    }
}

/// How the number of an insert was taken.
enum NumberFrom {
    /// From this process's cache of the model's counter, without building a `Sequence`.
    Cached(i64),
    /// From `Sequence` (in the document's scope), with the counter it came from.
    Issued(Sequence, Issued),
}

impl NumberFrom {
    /// The sequence the number came from, and the number as it issued it.
    fn issued<T: SequentialId>(self, coll: &Collection<T>) -> Result<(Sequence, Issued)> {
        match self {
            NumberFrom::Issued(seq, issued) => Ok((seq, issued)),
            // A model with a cache of its counter has no scope.
            NumberFrom::Cached(value) => {
                let seq = T::sequence(coll);
                let issued = seq.issued(value)?;
                Ok((seq, issued))
            }
        }
    }
}

/// Gives `docs` one contiguous range of numbers (one per scope), stores them in the ID fields
/// and inserts the documents with one `insert_many`; skips ahead past stored IDs. Without a
/// scope, the range comes from the reservation made ahead for the call when the model
/// inserts in bulk repeatedly.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
    options: Option<&InsertManyOptions>,
) -> Result<Vec<T::Id>> {
    let seq = T::sequence(coll);
    let issued = if T::SEQUENCE.scope.is_empty() && !docs.is_empty() {
        seq.issue_ids_ahead::<T::Id>(docs.len() as u64).await?
    } else {
        document_scope::issue_all(&seq, docs, None).await?
    };
    for (doc, (id, _)) in docs.iter_mut().zip(&issued) {
        doc.set_id(id.clone());
    }
    skip_ahead::insert_many(docs, coll, &seq, issued, options).await
}
