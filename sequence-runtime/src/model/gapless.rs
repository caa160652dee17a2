//! Gapless numbering: the counter update and the insert in one multi-document transaction
//! (run as `transaction.rs` runs them).
//!
//! If the insert fails for any reason the transaction aborts and the number is not consumed, so
//! the issued IDs are exactly `start, start + 1, …`. Transient transaction errors (write
//! conflicts between callers racing for the counter, network errors, elections) retry the whole
//! transaction.

use mongodb::bson::Document;
use mongodb::options::{InsertManyOptions, InsertOneOptions};
use mongodb::{ClientSession, Collection};
use sequence_rules::Unique;

use super::document_scope;
use super::insert::{document, fixed_document};
use super::proxy;
use super::sequential_id::SequentialId;
use super::skip_ahead;
use super::transaction::{
    counter_failure, in_transactions, taken, AttemptFailure, Done, TransactionBody,
};
use crate::error::driver::{statement_transient, Access};
use crate::error::{Error, Result};
use crate::sequence::{Issued, Sequence};
use crate::store::BoxFuture;

/// The documents of one gapless insert, with the options of their insert.
pub(crate) enum Docs<'a, T> {
    One(&'a mut T, Option<&'a InsertOneOptions>),
    Many(&'a mut [T], Option<&'a InsertManyOptions>),
}

impl<T> Docs<'_, T> {
    fn len(&self) -> usize {
        match self {
            Docs::One(..) => 1,
            Docs::Many(docs, _) => docs.len(),
        }
    }

    fn get(&self, i: usize) -> &T {
        match self {
            Docs::One(doc, _) => doc,
            Docs::Many(docs, _) => &docs[i],
        }
    }
}

/// Inserts `docs` with IDs taken from `seq` inside one transaction, retried until the
/// sequence's transaction timeout.
pub(crate) async fn insert<T: SequentialId>(
    mut docs: Docs<'_, T>,
    coll: &Collection<T>,
    seq: &Sequence,
) -> Result<Vec<T::Id>> {
    if docs.len() == 0 {
        return Ok(Vec::new());
    }
    if T::SEQUENCE.unique == Unique::Proxy {
        proxy::ensure_index(coll).await?;
    }
    in_transactions(
        coll,
        seq,
        &mut Inserts {
            docs: &mut docs,
            coll,
            seq,
            claimed: Vec::new(),
        },
    )
    .await
}

/// The body of a gapless insert.
struct Inserts<'b, 'd, T: Send + Sync> {
    docs: &'b mut Docs<'d, T>,
    coll: &'b Collection<T>,
    seq: &'b Sequence,
    /// With `unique = "proxy"`: the documents the last run claimed and inserted, as sent.
    claimed: Vec<Document>,
}

impl<T: SequentialId> TransactionBody<Vec<T::Id>> for Inserts<'_, '_, T> {
    fn run<'s>(
        &'s mut self,
        session: &'s mut ClientSession,
    ) -> BoxFuture<'s, std::result::Result<Done<Vec<T::Id>>, AttemptFailure>> {
        Box::pin(async move {
            attempt(self.docs, self.coll, self.seq, session, &mut self.claimed)
                .await
                .map(Done::Commit)
        })
    }

    fn sent(&self) -> Option<Vec<Document>> {
        if !self.claimed.is_empty() {
            return Some(self.claimed.clone());
        }
        (0..self.docs.len())
            .map(|i| document(self.docs.get(i)).ok())
            .collect()
    }
}

/// One transaction body: reserve the numbers, set them, (with `unique = "proxy"` claim them,)
/// insert.
async fn attempt<T: SequentialId>(
    docs: &mut Docs<'_, T>,
    coll: &Collection<T>,
    seq: &Sequence,
    session: &mut ClientSession,
    claimed: &mut Vec<Document>,
) -> std::result::Result<Vec<T::Id>, AttemptFailure> {
    let issued = match docs {
        Docs::One(doc, _) => match document_scope::for_document(seq.clone(), &**doc) {
            Ok(seq) => seq.issue_ids::<T::Id>(1, Some(session)).await,
            Err(e) => Err(e),
        },
        Docs::Many(..) if T::SEQUENCE.scope.is_empty() => {
            seq.issue_ids::<T::Id>(docs.len() as u64, Some(session))
                .await
        }
        // Documents of several scopes: one reservation each, all in the transaction.
        Docs::Many(many, _) => {
            let mut issued = Vec::with_capacity(many.len());
            for doc in many.iter() {
                let scoped = document_scope::for_document(seq.clone(), doc)
                    .map_err(AttemptFailure::Fatal)?;
                match scoped.issue_ids::<T::Id>(1, Some(&mut *session)).await {
                    Ok(mut one) => issued.append(&mut one),
                    Err(e) => return Err(counter_failure(e)),
                }
            }
            Ok(issued)
        }
    };
    let issued = issued.map_err(counter_failure)?;
    let (ids, issued): (Vec<T::Id>, Vec<Issued>) = issued.into_iter().unzip();
    if T::SEQUENCE.unique == Unique::Proxy {
        return claimed_inserts(docs, &ids, &issued, coll, seq, session, claimed).await;
    }
    let inserted = match docs {
        Docs::One(doc, options) => {
            doc.set_id(ids[0].clone());
            let insert = coll.insert_one(&**doc).with_options(options.cloned());
            match insert.session(&mut *session).await {
                Ok(_) => Ok(()),
                Err(e) => Err((e, Some(0))),
            }
        }
        Docs::Many(many, options) => {
            for (doc, id) in many.iter_mut().zip(&ids) {
                doc.set_id(id.clone());
            }
            let mut options = options.cloned().unwrap_or_default();
            options.ordered = Some(true);
            let insert = coll.insert_many(&**many).with_options(options);
            match insert.session(&mut *session).await {
                Ok(_) => Ok(()),
                Err(e) => {
                    let at = skip_ahead::duplicate_at::<T>(&e);
                    Err((e, at))
                }
            }
        }
    };
    match inserted {
        Ok(()) => Ok(ids),
        Err((e, at)) => {
            let namespace = coll.namespace();
            match (Error::from_driver_on(e, &namespace, Access::Insert), at) {
                (e, Some(at)) if skip_ahead::on_id_field::<T>(&e) => {
                    Err(taken(docs.get(at), coll, seq, issued[at].clone(), e).await)
                }
                (Error::Mongo(e), _) if statement_transient(&e) => {
                    Err(AttemptFailure::Transient(e))
                }
                (e, _) => Err(AttemptFailure::Fatal(e)),
            }
        }
    }
}

/// The rest of a transaction body with `unique = "proxy"`: sets the IDs, claims them, inserts
/// the documents as claimed (their `_id`s fixed, which `claimed` keeps for a commit of unknown
/// outcome).
async fn claimed_inserts<T: SequentialId>(
    docs: &mut Docs<'_, T>,
    ids: &[T::Id],
    issued: &[Issued],
    coll: &Collection<T>,
    seq: &Sequence,
    session: &mut ClientSession,
    claimed: &mut Vec<Document>,
) -> std::result::Result<Vec<T::Id>, AttemptFailure> {
    let mut documents = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        match docs {
            Docs::One(doc, _) => doc.set_id(id.clone()),
            Docs::Many(many, _) => many[i].set_id(id.clone()),
        }
        documents.push(fixed_document(docs.get(i)).map_err(AttemptFailure::Fatal)?);
    }
    *claimed = documents.clone();
    proxy::claim_all(coll, seq, &documents, |at| &issued[at], session).await?;
    let plain = coll.clone_with_type::<Document>();
    let inserted = match docs {
        Docs::One(_, options) => plain
            .insert_one(&documents[0])
            .with_options(options.cloned())
            .session(&mut *session)
            .await
            .map(drop),
        Docs::Many(_, options) => {
            let mut options = options.cloned().unwrap_or_default();
            options.ordered = Some(true);
            plain
                .insert_many(&documents)
                .with_options(options)
                .session(&mut *session)
                .await
                .map(drop)
        }
    };
    match inserted {
        Ok(()) => Ok(ids.to_vec()),
        Err(e) => Err(
            match Error::from_driver_on(e, coll.namespace(), Access::Insert) {
                Error::Mongo(e) if statement_transient(&e) => AttemptFailure::Transient(e),
                e => AttemptFailure::Fatal(e),
            },
        ),
    }
}
