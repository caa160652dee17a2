//! The paths of writes in the caller's session: the `counter` strategy takes its numbers with a
//! counter update in the session, the others as without one; the write is sent once (retrying
//! it is the caller's transaction's business).

use mongodb::options::{InsertManyOptions, InsertOneOptions};
use mongodb::{ClientSession, Collection};

use super::sequential_id::SequentialId;
use super::{document_scope, proxy, random_ids, skip_ahead};
use crate::error::driver::Access;
use crate::error::{Error, Result};
use crate::sequence::Issued;
use sequence_rules::{Strategy, Unique};

/// The error of a write in `coll`: a duplicate on the ID field of a value the counter gave
/// is [`Error::IdTaken`] (the caller's session is not retried), anything else as mapped.
fn refused<T: SequentialId>(
    coll: &Collection<T>,
    e: mongodb::error::Error,
    ids: &[(T::Id, Issued)],
    at: Option<usize>,
) -> Error {
    let e = Error::from_driver_on(e, coll.namespace(), Access::Insert);
    match at.and_then(|at| ids.get(at)) {
        Some((id, issued)) if skip_ahead::on_id_field::<T>(&e) => {
            skip_ahead::taken(coll, id, issued, e, skip_ahead::IN_SESSION)
        }
        _ => e,
    }
}

/// `insert_with_id` in `session`.
pub(crate) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    session: &mut ClientSession,
    options: Option<&InsertOneOptions>,
) -> Result<T::Id> {
    let proxy = T::SEQUENCE.unique == Unique::Proxy;
    let (id, issued) = match T::SEQUENCE.strategy {
        Strategy::Random if !proxy => {
            return random_ids::insert_one(doc, coll, Some(session), options).await
        }
        Strategy::Counter => {
            let seq = document_scope::for_document(T::sequence(coll), &*doc)?;
            let (id, issued) = seq.issue_id_in::<T::Id>(session).await?;
            (id.clone(), vec![(id, issued)])
        }
        _ => (T::next_id_for(doc, coll).await?, Vec::new()),
    };
    doc.set_id(id.clone());
    let inserted = if proxy {
        let document = proxy::claim_in(&*doc, coll, session).await?;
        coll.clone_with_type()
            .insert_one(document)
            .with_options(options.cloned())
            .session(session)
            .await
    } else {
        coll.insert_one(&*doc)
            .with_options(options.cloned())
            .session(session)
            .await
    };
    match inserted {
        Ok(_) => Ok(id),
        Err(e) => Err(refused(coll, e, &issued, Some(0))),
    }
}

/// `insert_many_with_ids` in `session`, for the strategies with counters: one reservation
/// per scope, in the session.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
    session: &mut ClientSession,
    options: Option<&InsertManyOptions>,
) -> Result<Vec<T::Id>> {
    let issued = match T::SEQUENCE.strategy {
        Strategy::Counter => {
            document_scope::issue_all(&T::sequence(coll), docs, Some(session)).await?
        }
        // Shards are not numbered in a session: their ranges come as without one.
        _ => document_scope::issue_all(&T::sequence(coll), docs, None).await?,
    };
    for (doc, (id, _)) in docs.iter_mut().zip(&issued) {
        doc.set_id(id.clone());
    }
    let mut options = options.cloned().unwrap_or_default();
    options.ordered = Some(true);
    match coll
        .insert_many(&*docs)
        .with_options(options)
        .session(session)
        .await
    {
        Ok(_) => Ok(issued.into_iter().map(|(id, _)| id).collect()),
        Err(e) => {
            let at = skip_ahead::duplicate_at::<T>(&e);
            Err(refused(coll, e, &issued, at))
        }
    }
}
