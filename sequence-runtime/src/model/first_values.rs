//! The first values of scope values, taken and inserted in rounds.
//!
//! A scope value's first call in a while has no cache (see `process::ScopeCaches`): it needs a
//! round trip to its counter before its insert. Here such inserts of a model's collection that
//! wait at the same time go in rounds (the queues of `gapless_group.rs`, one group per model and
//! collection across its scope values, several rounds in flight): a round takes the values of
//! all its scope values with one reservation of several counters at once (see
//! `CounterStore::reserve_many`) and inserts the documents with one ordered `insert_many`. No
//! transaction holds a counter: a process killed mid-round leaves at most unused values, as a
//! killed reservation does.
//!
//! Each member gets its own outcome: a document refused on its own (a duplicate on another
//! unique index, a validation error) gets its error, and the documents after it are sent again
//! without it; a member whose counter cannot give a value gets the counter's error, the others
//! go on; a member whose number meets a stored document, or whose counter gave fewer values
//! than asked near its end, inserts alone (skipping ahead of the stored numbers, or getting the
//! exhaustion). An insert of unknown outcome is sent again with the very same documents, as
//! `insert.rs` does for one, and a document already stored counts only if it is this one.

use std::collections::HashMap;
use std::sync::Arc;

use mongodb::bson::{Document, RawDocumentBuf};
use mongodb::options::InsertOneOptions;
use mongodb::Collection;
use sequence_rules::{Strategy, Unique};
use serde::ser::Error as _;

use super::gapless_group::{self, OwnRounds, Round};
use super::insert::{self, Stored, INSERT_ATTEMPTS};
use super::round_member::{self, Member, StoredAs};
use super::sequential_id::SequentialId;
use super::skip_ahead;
use crate::error::driver::{insert_many_failed_at, is_duplicate_key, outcome_unknown, Access};
use crate::error::{Error, Result};
use crate::id::{IdValue, Slot};
use crate::observability::INSERT;
use crate::options::Batch;
use crate::process::ProcessState;
use crate::sequence::{FirstCall, Sequence};
use crate::store::BoxFuture;

/// How many rounds of first values a model's collection has in flight at once in a process:
/// a round is a counter update then an insert, so while one waits for its insert the next
/// takes its values (more rounds only add round trips for the same documents).
const IN_FLIGHT: usize = 2;

/// How many rounds of first values of the sequence of `seq` run at once in a process:
/// [`IN_FLIGHT`]; one with `batch = 1`, whose every call takes its value this way, so that a
/// busy scope value's calls share one reservation.
fn in_flight(seq: &Sequence) -> usize {
    match seq.options().batch {
        Batch::Fixed(1) => 1,
        _ => IN_FLIGHT,
    }
}

/// How an insert that may be its scope value's first went.
pub(super) enum First<I> {
    /// Inserted with its scope value's first value, in a round.
    Inserted(I),
    /// Its scope value's first call, which takes its value alone: its number met a stored
    /// document, its counter gave out near its end, or the model stores its ID field in a way
    /// a round cannot write.
    Alone,
    /// Not a first value: its scope value's cache gives its number.
    FromCache(Arc<ProcessState>),
    /// Not in a round: the scope value's sequence gives its number (from its cache, or a
    /// reservation of its own).
    FromSequence,
}

/// Inserts `doc` with the first value of its scope value (`scoped`) in a round, with the first
/// calls of other scope values waiting at the same time, when it is one.
pub(super) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    scoped: &Sequence,
    options: Option<&InsertOneOptions>,
) -> Result<First<T::Id>> {
    let config = &T::SEQUENCE;
    let eligible = options.is_none()
        && config.strategy == Strategy::Counter
        && !config.gapless
        && config.unique != Unique::Proxy
        && scoped.scope().is_some();
    if !eligible {
        return Ok(First::FromSequence);
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Ok(First::FromSequence);
    };
    match scoped.first_call()? {
        FirstCall::Takes => {}
        // Its scope value's cache gives it, serialized but once.
        FirstCall::Cached(cache) => return Ok(First::FromCache(cache)),
        FirstCall::Other => return Ok(First::FromSequence),
    }
    let Some((member, rx, shape)) = round_member::prepare(doc, scoped)? else {
        return Ok(First::Alone); // an ID field a round cannot write
    };
    let round = Round {
        coll: coll.clone(),
        seq: T::sequence(coll),
        scope: Document::new(),
        shape: Some(shape),
        own: Some(OwnRounds {
            commit: commit_boxed::<T>,
            in_flight: in_flight(scoped),
        }),
    };
    let queued = gapless_group::join(member.in_scope(scoped.clone()), round, runtime);
    debug_assert!(queued.is_none(), "a first value never inserts alone");
    match rx.await {
        Ok(Ok(Some(id))) => {
            doc.set_id(id.clone());
            Ok(First::Inserted(id))
        }
        Ok(Ok(None)) => Ok(First::Alone),
        Ok(Err(e)) => Err(e),
        // The round task ended without an answer: its runtime shut down, and this one with it.
        Err(_) => Err(Error::Mongo(mongodb::error::Error::custom(
            "the round of this insert ended with its runtime; the insert's outcome is unknown",
        ))),
    }
}

/// [`commit`], as a round of the group commits.
fn commit_boxed<T: SequentialId>(
    round: &Round<T>,
    members: Vec<Member<T::Id>>,
) -> BoxFuture<'_, ()> {
    Box::pin(commit(round, members))
}

/// One round of first values: the values of its members' scope values in one reservation, then
/// their documents in one insert; every member answered.
async fn commit<T: SequentialId>(round: &Round<T>, members: Vec<Member<T::Id>>) {
    let Some(shape) = round.shape else {
        unreachable!("a round of first values writes the numbers it takes");
    };
    let (each, of_member) = scope_values(&members);
    let ranges = round.seq.first_ranges(&each).await;
    let mut taken = vec![0_u64; ranges.len()];
    let mut sending = Vec::with_capacity(members.len());
    for (member, place) in members.into_iter().zip(of_member) {
        let (range, slot) = match &ranges[place] {
            Ok(reserved) => reserved,
            Err(e) => {
                member.answer(Err(e.clone()));
                continue;
            }
        };
        if taken[place] == range.len() {
            member.answer(Ok(None)); // fewer values than asked, near the counter's end
            continue;
        }
        let value = range.first() + taken[place] as i64;
        taken[place] += 1;
        sending.extend(numbered::<T>(member, value, slot, shape));
    }
    insert_all(&round.coll, sending).await;
}

/// A member with its ID and its document as it is sent.
struct Sent<I> {
    member: Member<I>,
    id: I,
    doc: Document,
}

impl<I> Sent<I> {
    fn inserted(self) {
        self.member.answer(Ok(Some(self.id)));
    }
}

/// `member` numbered `value` of the counter of `slot`, its ID field written as `shape` says;
/// `None`, the member answered with the error, if the value cannot be its ID.
fn numbered<T: SequentialId>(
    mut member: Member<T::Id>,
    value: i64,
    slot: &Arc<Slot>,
    shape: StoredAs,
) -> Option<Sent<T::Id>> {
    let rendered = T::Id::render(value, &slot.rendering).and_then(|id| {
        let stored = shape.bson(value, &slot.rendering, T::Id::TYPE_NAME)?;
        Ok((id, stored))
    });
    match rendered {
        Ok((id, stored)) => {
            let mut doc = std::mem::take(&mut member.doc); // the member keeps only its reply
            doc.insert(T::SEQUENCE.id_field, stored);
            Some(Sent { member, id, doc })
        }
        Err(e) => {
            member.answer(Err(e));
            None
        }
    }
}

/// Inserts the documents of `sending` in order, with ordered `insert_many`s: the first sends
/// them all; a document refused on its own leaves (its member answered) and the ones after it
/// are sent again; after an insert of unknown outcome the same documents are sent again (at
/// most [`INSERT_ATTEMPTS`] times), a duplicate key then meaning success if the document stored
/// under the `_id` is this one.
async fn insert_all<T: SequentialId>(coll: &Collection<T>, mut sending: Vec<Sent<T::Id>>) {
    let docs = coll.clone_with_type::<Document>();
    let namespace = coll.namespace();
    let mut unknown = 0;
    while !sending.is_empty() {
        let sent = docs.insert_many(sending.iter().map(|s| &s.doc)).await;
        let Err(e) = sent else {
            sending.into_iter().for_each(Sent::inserted);
            return;
        };
        match insert_many_failed_at(&e) {
            Some(at) => {
                sending.drain(..at).for_each(Sent::inserted);
                let failed = sending.remove(0);
                if unknown > 0 && is_duplicate_key(&e) {
                    match stored(&docs, &failed.doc).await {
                        Ok(Stored::Ours) => {
                            failed.inserted();
                            continue;
                        }
                        Ok(Stored::NotYetMajority) if unknown < INSERT_ATTEMPTS => {
                            sending.insert(0, failed);
                            unknown += 1;
                            tokio::time::sleep(insert::backoff(unknown + 1)).await;
                            continue;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            failed.member.answer(Err(e));
                            continue;
                        }
                    }
                }
                let e = Error::from_driver_on(e, &namespace, Access::Insert);
                if skip_ahead::on_id_field::<T>(&e) {
                    // Its number met a stored document: it inserts alone, past the stored ones.
                    failed.member.answer(Ok(None));
                } else {
                    failed.member.answer(Err(e));
                }
            }
            _ if outcome_unknown(&e) && unknown < INSERT_ATTEMPTS => {
                tracing::debug!(target: INSERT, error = %e, documents = sending.len(), "Inserts resent");
                unknown += 1;
                tokio::time::sleep(insert::backoff(unknown + 1)).await;
            }
            _ => {
                let e = Error::from_driver_on(e, &namespace, Access::Insert);
                for s in sending {
                    s.member.answer(Err(e.clone()));
                }
                return;
            }
        }
    }
}

/// What is stored under the `_id` of `doc`, as `insert.rs` tells it.
async fn stored(docs: &Collection<Document>, doc: &Document) -> Result<Stored> {
    let raw = RawDocumentBuf::from_document(doc).map_err(|e| Error::Serialization {
        what: "the document",
        source: mongodb::bson::ser::Error::custom(e).into(),
    })?;
    insert::stored_copy(&docs.clone_with_type::<RawDocumentBuf>(), &raw).await
}

/// Each scope value of `members` with how many of them it has, in order of first appearance,
/// and the place in that list of each member's.
fn scope_values<I>(members: &[Member<I>]) -> (Vec<(Sequence, u64)>, Vec<usize>) {
    let mut each: Vec<(Sequence, u64)> = Vec::new();
    let mut places: HashMap<&str, usize> = HashMap::new();
    let mut of_member = Vec::with_capacity(members.len());
    for member in members {
        let seq = member
            .scoped
            .as_ref()
            .expect("a first value has its scope value");
        let canonical = seq.scope().map(|s| s.canonical()).unwrap_or_default();
        let place = *places.entry(canonical).or_insert_with(|| {
            each.push((seq.clone(), 0));
            each.len() - 1
        });
        each[place].1 += 1;
        of_member.push(place);
    }
    (each, of_member)
}
