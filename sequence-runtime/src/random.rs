//! The `random` strategy: IDs drawn uniformly from the configured space with the operating
//! system's CSPRNG, made unique by the collection's `_id` index: a draw that collides with an
//! existing document is drawn again, a bounded number of times.

use std::collections::HashSet;

use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::{ClientSession, Collection};

use crate::bounds::Bounds;
use crate::error::{Error, Result, DUPLICATE_KEY_CODES};
use crate::id::IdValue;
use crate::model::SequentialId;
use crate::sequence::Sequence;

/// A value drawn uniformly from `0..n` (`n >= 1`) with the operating system's CSPRNG.
///
/// Rejection sampling, so without modulo bias: a 64-bit draw below `2^64 mod n` is drawn again,
/// which leaves a multiple of `n` equally likely draws.
pub(crate) fn below(n: u64) -> Result<u64> {
    debug_assert!(n > 0);
    let rejected_below = n.wrapping_neg() % n;
    loop {
        let x = getrandom::u64().map_err(|e| Error::Random(e.to_string()))?;
        if x >= rejected_below {
            return Ok(x % n);
        }
    }
}

/// A value drawn uniformly from `space`.
pub(crate) fn draw(space: Bounds) -> Result<i64> {
    Ok(space.start.wrapping_add_unsigned(below(space.size())?))
}

/// Whether a write error is a duplicate key on the `_id` index. The server names the index in
/// its message (`E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 42 }`);
/// the driver exposes no `keyPattern`. The `_id` index is always named `_id_`, and no other
/// index of a collection can have that name.
fn is_id_collision(code: i32, message: &str) -> bool {
    DUPLICATE_KEY_CODES.contains(&code) && message.contains(" index: _id_ ")
}

/// Whether the error of `insert_one` is a duplicate key on `_id`.
fn collided(err: &mongodb::error::Error) -> bool {
    matches!(&*err.kind, ErrorKind::Write(WriteFailure::WriteError(e)) if is_id_collision(e.code, &e.message))
}

/// The positions of the documents of an `insert_many` that collided on `_id`, if that is all
/// that went wrong.
fn collisions(err: &mongodb::error::Error) -> Option<Vec<usize>> {
    match &*err.kind {
        ErrorKind::InsertMany(e) if e.write_concern_error.is_none() => {
            let errors = e.write_errors.as_ref()?;
            errors
                .iter()
                .map(|w| is_id_collision(w.code, &w.message).then_some(w.index))
                .collect()
        }
        _ => None,
    }
}

fn exhausted<T>(coll: &Collection<T>, seq: &Sequence, attempts: u32) -> Error
where
    T: Send + Sync,
{
    let space = seq.space();
    Error::RandomIdsExhausted {
        collection: coll.namespace().to_string(),
        attempts,
        start: space.start,
        max: space.max,
    }
}

/// Draws, stores and inserts until the insert does not collide on `_id`, at most `retries + 1`
/// times.
pub(crate) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    mut session: Option<&mut ClientSession>,
) -> Result<T::Id> {
    let seq = T::sequence(coll);
    let attempts = seq.options().retries.saturating_add(1);
    for _ in 0..attempts {
        let id = T::Id::from_counter(seq.next().await?)?;
        doc.set_id(id.clone());
        let insert = coll.insert_one(&*doc);
        let result = match session.as_deref_mut() {
            Some(session) => insert.session(session).await,
            None => insert.await,
        };
        match result {
            Ok(_) => return Ok(id),
            Err(e) if collided(&e) => {
                tracing::debug!(collection = %coll.namespace(), ?id, "random ID collided, drawing again");
                seq.record_collisions(1);
            }
            Err(e) => return Err(Error::from_driver(e)),
        }
    }
    Err(exhausted(coll, &seq, attempts))
}

/// Draws distinct IDs for all `docs`, inserts them with one unordered `insert_many`, then draws
/// again and re-inserts only the documents that collided on `_id`, at most `retries` times.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
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
            .ordered(false)
            .await;
        match result {
            Ok(_) => {
                return Ok(ids
                    .into_iter()
                    .map(|id| id.expect("every document has an ID"))
                    .collect())
            }
            Err(e) => match collisions(&e) {
                Some(collided) => {
                    pending = collided.into_iter().map(|j| pending[j]).collect();
                    tracing::debug!(collection = %coll.namespace(), collided = pending.len(), "random IDs collided, drawing again");
                    seq.record_collisions(pending.len() as u64);
                }
                None => return Err(Error::from_driver(e)),
            },
        }
    }
    Err(exhausted(coll, &seq, attempts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_the_space() {
        for space in [
            Bounds::new(10, 99).unwrap(),
            Bounds::new(-5, -5).unwrap(),
            Bounds::new(i64::MIN + 1, i64::MAX).unwrap(),
            Bounds::new(i64::MAX - 2, i64::MAX).unwrap(),
        ] {
            for _ in 0..1000 {
                let v = draw(space).unwrap();
                assert!(space.start <= v && v <= space.max, "{v} outside {space:?}");
            }
        }
        let mut seen = HashSet::new();
        for _ in 0..2000 {
            seen.insert(draw(Bounds::new(1, 9).unwrap()).unwrap());
        }
        assert_eq!(seen.len(), 9, "every value of a small space comes up");
    }

    #[test]
    fn rejection_leaves_a_multiple_of_n() {
        for n in [1_u64, 2, 3, 7, 10, 90, 1 << 63, (1 << 63) + 1, u64::MAX] {
            let rejected = n.wrapping_neg() % n;
            let accepted = u128::from(u64::MAX) + 1 - u128::from(rejected);
            assert_eq!(accepted % u128::from(n), 0, "n = {n}");
        }
    }

    #[test]
    fn only_the_id_index_counts_as_a_collision() {
        assert!(is_id_collision(
            11000,
            "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 42 }"
        ));
        assert!(!is_id_collision(
            11000,
            "E11000 duplicate key error collection: db.c index: email_1 dup key: { email: \"a\" }"
        ));
        assert!(!is_id_collision(
            11000,
            "E11000 duplicate key error collection: db.c index: my_id_1 dup key: { my_id: 1 }"
        ));
        assert!(!is_id_collision(121, "index: _id_ "));
    }
}
