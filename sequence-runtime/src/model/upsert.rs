//! `upsert_with_id`: update the document a filter matches, or insert this one with a new ID;
//! a number is taken only for an insert.
//!
//! The update comes first, without upsert: a document that exists gets this document's fields
//! (all but the ID, and `_id`, which cannot change) and keeps its stored ID. Otherwise a number
//! is taken and the document is upserted with the ID in `$setOnInsert` only, so that when a
//! concurrent insert of the same key won in between, its ID stands (and the number taken is
//! counted as wasted). Upserts stay unique only with a unique index on the filter's fields:
//! without one, two concurrent upserts can both insert.

use mongodb::bson::Document;
use mongodb::options::FindOneAndUpdateOptions;
use mongodb::{ClientSession, Collection};
use sequence_rules::Unique;

use super::cached_id::{self, Cached};
use super::document_scope;
use super::generated_ids;
use super::insert;
use super::proxy;
use super::sequential_id::SequentialId;
use super::skip_ahead;
use super::transaction::{self, AttemptFailure, Done, TransactionBody};
use super::upsert_parts::{stored_form, Upsert};
use crate::error::driver::{collided_on_id, outcome_unknown, statement_transient};
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::sequence::{Issued, Sequence};
use crate::store::BoxFuture;

/// Whether the outcome of a failed write is unknown (see `outcome_unknown`).
fn unknown(e: &Error) -> bool {
    matches!(e, Error::Mongo(e) if outcome_unknown(e))
}

/// A number for `doc`, and where it came from (for a counter, to skip ahead of stored IDs).
async fn number<T: SequentialId>(
    doc: &T,
    coll: &Collection<T>,
    session: Option<&mut ClientSession>,
) -> Result<(T::Id, Option<(Sequence, Issued)>)> {
    let strategy = T::SEQUENCE.strategy;
    if let Some(id) = generated_ids::fresh::<T>() {
        return Ok((id?, None));
    }
    let seq = document_scope::for_document(T::sequence(coll), doc)?;
    if !strategy.uses_counters() {
        return Ok((T::Id::from_counter(seq.next().await?)?, None));
    }
    if session.is_none() {
        match cached_id::cached_id(coll) {
            Some(Cached::Taken { value, id }) => {
                let issued = seq.issued(value)?;
                return Ok((id, Some((seq, issued))));
            }
            Some(Cached::Failed(e)) => return Err(*e),
            Some(Cached::Later(seq, later)) => {
                let (id, issued) = seq.finish_id::<T::Id>(later).await?;
                return Ok((id, Some((seq, issued))));
            }
            None => {}
        }
    }
    let (id, issued) = match session {
        Some(s) if strategy == sequence_rules::Strategy::Counter => {
            seq.issue_id_in::<T::Id>(s).await?
        }
        _ => seq.issue_id::<T::Id>().await?,
    };
    Ok((id, Some((seq, issued))))
}

/// Updates the document `filter` matches with `doc`'s fields and returns its stored ID, or
/// inserts `doc` with a new ID; in `session` if given. `doc`'s ID field holds the stored ID
/// afterwards.
pub(crate) async fn upsert<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    filter: Document,
    mut session: Option<&mut ClientSession>,
    options: Option<FindOneAndUpdateOptions>,
) -> Result<T::Id> {
    let upsert = Upsert::new(doc, coll, filter, options)?;
    let in_session = session.is_some();
    // The update alone, sent again while its outcome is unknown (setting the same fields twice
    // changes nothing).
    let mut attempt = 1;
    let updated = loop {
        match upsert.update(session.as_deref_mut()).await {
            Err(e) if !in_session && attempt < insert::INSERT_ATTEMPTS && unknown(&e) => {
                attempt += 1;
                tokio::time::sleep(insert::backoff(attempt)).await;
            }
            other => break other?,
        }
    };
    if let Some(stored) = updated {
        let id = T::Id::from_stored(stored)?;
        doc.set_id(id.clone());
        return Ok(id);
    }
    let proxied = T::SEQUENCE.unique == Unique::Proxy;
    if proxied && session.is_none() {
        return proxy::upsert_one(doc, coll, &upsert).await;
    }
    if T::SEQUENCE.gapless && session.is_none() {
        let seq = T::sequence(coll);
        let mut body = GaplessUpsert {
            doc,
            upsert: &upsert,
            seq: &seq,
        };
        return transaction::in_transactions(coll, &seq, &mut body).await;
    }
    let (mut id, mut origin) = number(doc, coll, session.as_deref_mut()).await?;
    let mut redraws = 0;
    let mut skips = 0;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let ours = stored_form(doc, &id)?;
        // In the caller's session, the claim goes first (and is dropped if the upsert meets a
        // document a concurrent insert stored).
        let claim = match (proxied, session.as_deref_mut()) {
            (true, Some(s)) => Some(proxy::claim_upsert_in(coll, &upsert, ours.clone(), s).await?),
            _ => None,
        };
        match upsert.with_id(ours.clone(), session.as_deref_mut()).await {
            Ok(stored) => {
                if stored != ours {
                    if let (Some(claim), Some(s)) = (&claim, session.as_deref_mut()) {
                        proxy::drop_claim_in(coll, claim, s).await?;
                    }
                    // A concurrent insert of the same key won: its ID stands.
                    if let Some((seq, _)) = &origin {
                        seq.record_wasted(1);
                    }
                    id = T::Id::from_stored(stored)?;
                    doc.set_id(id.clone());
                }
                return Ok(id);
            }
            // Resent with the same number while the outcome is unknown: if the first one was
            // stored, this one finds it and updates it.
            Err(e) if !in_session && outcome_unknown(&e) && attempt < insert::INSERT_ATTEMPTS => {
                tokio::time::sleep(insert::backoff(attempt + 1)).await;
            }
            Err(e)
                if collided_on_id(&e)
                    && T::SEQUENCE.strategy == sequence_rules::Strategy::Random =>
            {
                redraws += 1;
                let seq = T::sequence(coll);
                if redraws > seq.options().retries {
                    return Err(upsert.error(e));
                }
                id = T::Id::from_counter(seq.next().await?)?;
            }
            Err(e) => {
                let e = upsert.error(e);
                let Some((seq, issued)) =
                    origin.as_mut().filter(|_| skip_ahead::on_id_field::<T>(&e))
                else {
                    return Err(e);
                };
                if in_session {
                    return Err(skip_ahead::taken(
                        coll,
                        &id,
                        issued,
                        e,
                        skip_ahead::IN_SESSION,
                    ));
                }
                if skips == skip_ahead::ROUNDS {
                    return Err(skip_ahead::taken(
                        coll,
                        &id,
                        issued,
                        e,
                        skip_ahead::AFTER_ROUNDS,
                    ));
                }
                skips += 1;
                let floor = skip_ahead::stored_floor(doc, coll, seq, issued).await?;
                *issued = seq.skip_ahead(issued, floor).await?;
                id = T::Id::render(issued.value, &issued.slot.rendering)?;
                attempt = 0;
            }
        }
    }
}

/// The body of a gapless upsert: the number and the upsert in one transaction, committed only
/// if the document was inserted, so that a number is consumed by an inserted document alone.
struct GaplessUpsert<'b, 'a, T: Send + Sync> {
    doc: &'b mut T,
    upsert: &'b Upsert<'a, T>,
    seq: &'b Sequence,
}

impl<T: SequentialId> TransactionBody<T::Id> for GaplessUpsert<'_, '_, T> {
    fn run<'s>(
        &'s mut self,
        session: &'s mut ClientSession,
    ) -> BoxFuture<'s, std::result::Result<Done<T::Id>, AttemptFailure>> {
        Box::pin(async move {
            let scoped = document_scope::for_document(self.seq.clone(), &*self.doc)
                .map_err(AttemptFailure::Fatal)?;
            let (id, issued) = scoped
                .issue_id_in::<T::Id>(&mut *session)
                .await
                .map_err(transaction::counter_failure)?;
            let ours = stored_form(self.doc, &id).map_err(AttemptFailure::Fatal)?;
            match self.upsert.with_id(ours.clone(), Some(session)).await {
                Ok(stored) if stored == ours => Ok(Done::Commit(id)),
                Ok(stored) => {
                    // A concurrent insert of the same key won: its ID stands, and aborting
                    // gives the number back.
                    let id = T::Id::from_stored(stored).map_err(AttemptFailure::Fatal)?;
                    self.doc.set_id(id.clone());
                    Ok(Done::Abort(id))
                }
                Err(e) if statement_transient(&e) => Err(AttemptFailure::Transient(e)),
                Err(e) => {
                    let e = self.upsert.error(e);
                    if skip_ahead::on_id_field::<T>(&e) {
                        let coll = self.upsert.coll;
                        Err(transaction::taken(&*self.doc, coll, self.seq, issued, e).await)
                    } else {
                        Err(AttemptFailure::Fatal(e))
                    }
                }
            }
        })
    }
}
