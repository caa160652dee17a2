//! Group commit of the inserts of a model with a proxy collection whose numbers come from
//! outside the insert's transaction (a counter, not gapless): each insert takes its number
//! first (from this process's cache when there is one); the first insert of an idle group
//! claims it and inserts in a transaction of its own (`proxy.rs`), and the inserts that arrive
//! meanwhile are committed in rounds on the queue of `gapless_group.rs` (its
//! `attempt_taken`): their claims in one `insert_many`, their documents in another, one
//! commit. A member whose number meets a claim
//! (or a stored document) leaves the round and inserts alone with a new number, skipping
//! ahead; one whose document fails on its own gets its error; transient errors retry the round
//! with the same numbers. A round is one transaction, so a crash leaves no claim without its
//! document and no document without its claim, only numbers taken and never used.

use mongodb::options::InsertOneOptions;
use mongodb::Collection;

use super::gapless_group::{join, Round};
use super::round_member::Member;
use super::sequential_id::SequentialId;
use super::{document_scope, proxy, skip_ahead};
use crate::error::Result;

/// `insert_with_id` of a model with a proxy collection whose numbers come from a counter
/// outside the insert's transaction (not gapless): the number is taken first, from this
/// process's cache when there is one. The first insert of an idle group claims it and inserts
/// in a transaction of its own; the inserts that arrive meanwhile commit together, in rounds:
/// their claims in one `insert_many`, their documents in another, one commit. A member whose
/// number meets a claim leaves the round and inserts alone with a new number (skipping ahead);
/// transient errors retry the round with the same numbers.
pub(crate) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    options: Option<&InsertOneOptions>,
) -> Result<T::Id> {
    let groups = !T::SEQUENCE.gapless && T::SEQUENCE.strategy.uses_counters();
    let runtime = tokio::runtime::Handle::try_current();
    let (true, Ok(runtime), None) = (groups, runtime, options) else {
        return proxy::insert_one(doc, coll, options).await;
    };
    proxy::ensure_index(coll).await?;
    let seq = document_scope::for_document(T::sequence(coll), &*doc)?;
    let (id, issued) = seq.issue_id::<T::Id>().await?;
    doc.set_id(id.clone());
    let (member, rx) = Member::new(&*doc, Some((id, issued.clone())))?;
    let round = Round {
        coll: coll.clone(),
        seq,
        scope: skip_ahead::scope_filter(&*doc)?,
        shape: None,
        own: None,
    };
    let Some(_next) = join(member, round, runtime) else {
        return match rx.await {
            Ok(Ok(Some(id))) => {
                doc.set_id(id.clone());
                Ok(id)
            }
            Ok(Err(e)) => Err(e),
            // Its number met a claim, or the round task ended without an answer (its runtime
            // shut down) before it committed anything for this insert: alone, a new number.
            Ok(Ok(None)) | Err(_) => proxy::insert_one(doc, coll, None).await,
        };
    };
    proxy::insert_numbered(doc, coll, issued).await
}
