//! Inserts of the `random` strategy: a draw that collides with an existing `_id` is drawn
//! again, a bounded number of times.

use std::collections::HashSet;

use mongodb::action::Action;
use mongodb::options::{InsertManyOptions, InsertOneOptions};
use mongodb::{ClientSession, Collection};

use super::sequential_id::SequentialId;
use crate::error::driver::{collided_on_id, collisions_on_id, Access};
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::observability::RANDOM;
use crate::sequence::Sequence;

/// The error of an insert whose `attempts` draws all collided.
pub(crate) fn exhausted<T>(coll: &Collection<T>, seq: &Sequence, attempts: u32) -> Error
where
    T: Send + Sync,
{
    match seq.space() {
        Ok(space) => Error::RandomIdsExhausted {
            collection: coll.namespace().to_string(),
            attempts,
            start: space.start,
            max: space.max,
        },
        Err(e) => e,
    }
}

/// Draws, stores and inserts until the insert does not collide on `_id`, at most `retries + 1`
/// times.
pub(crate) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    mut session: Option<&mut ClientSession>,
    options: Option<&InsertOneOptions>,
) -> Result<T::Id> {
    let seq = T::sequence(coll);
    let attempts = seq.options().retries.saturating_add(1);
    for _ in 0..attempts {
        let id = T::Id::from_counter(seq.next().await?)?;
        doc.set_id(id.clone());
        let result = coll
            .insert_one(&*doc)
            .with_options(options.cloned())
            .optional(session.as_deref_mut(), |a, s| a.session(s))
            .await;
        match result {
            Ok(_) => return Ok(id),
            Err(e) if collided_on_id(&e) => {
                tracing::debug!(
                    target: RANDOM,
                    collection = %coll.namespace(),
                    collisions = 1,
                    id = ?id,
                    "Random ID collided"
                );
                seq.record_collisions(1);
            }
            Err(e) => return Err(Error::from_driver_on(e, coll.namespace(), Access::Insert)),
        }
    }
    Err(exhausted(coll, &seq, attempts))
}

/// Draws distinct IDs for all `docs`, inserts them with one unordered `insert_many`, then draws
/// again and re-inserts only the documents that collided on `_id`, at most `retries` times.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
    mut session: Option<&mut ClientSession>,
    options: Option<&InsertManyOptions>,
) -> Result<Vec<T::Id>> {
    if docs.is_empty() {
        return Ok(Vec::new());
    }
    let seq = T::sequence(coll);
    let attempts = seq.options().retries.saturating_add(1);
    let mut ids: Vec<Option<T::Id>> = vec![None; docs.len()];
    let mut pending: Vec<usize> = (0..docs.len()).collect();
    // Every value given to a document of this call, so that none is given twice.
    let mut taken = HashSet::new();
    let mut options = options.cloned().unwrap_or_default();
    options.ordered = Some(false);
    for _ in 0..attempts {
        for &i in &pending {
            let mut draws = 0;
            let value = loop {
                let value = seq.next().await?;
                draws += 1;
                if taken.insert(value) {
                    break value;
                }
                seq.record_collisions(1);
                if draws >= attempts {
                    return Err(exhausted(coll, &seq, attempts));
                }
            };
            let id = T::Id::from_counter(value)?;
            docs[i].set_id(id.clone());
            ids[i] = Some(id);
        }
        let result = coll
            .insert_many(pending.iter().map(|&i| &docs[i]))
            .with_options(options.clone())
            .optional(session.as_deref_mut(), |a, s| a.session(s))
            .await;
        match result {
            Ok(_) => {
                return Ok(ids
                    .into_iter()
                    .map(|id| id.expect("every document has an ID"))
                    .collect())
            }
            Err(e) => match collisions_on_id(&e) {
                Some(collided) => {
                    pending = collided.into_iter().map(|j| pending[j]).collect();
                    tracing::debug!(
                        target: RANDOM,
                        collection = %coll.namespace(),
                        collisions = pending.len(),
                        "Random ID collided"
                    );
                    seq.record_collisions(pending.len() as u64);
                }
                None => return Err(Error::from_driver_on(e, coll.namespace(), Access::Insert)),
            },
        }
    }
    Err(exhausted(coll, &seq, attempts))
}
