//! `unique = "proxy"`: the uniqueness of IDs held by a proxy collection of claims instead of a
//! unique index on the target collection (which a collection sharded on another field cannot
//! have).
//!
//! A claim is `{ _id: <key>, doc: <the document's _id> }`, its key the ID, or for a scoped
//! model `{ <stored scope field>: <value>, …, id: <ID> }` (IDs repeat across scopes). An insert
//! writes the claim, then the document, in one transaction: the claim's `_id` index refuses a
//! second claim of one ID, and the transaction keeps a claim from existing without its
//! document or the other way round. A refused claim is a collision: the `random` strategy (and
//! the generated ones) draw again, the counters skip ahead past the highest claimed ID.
//! Transient transaction errors retry the transaction, and a commit whose outcome stays
//! unknown is settled by reading the document back, as gapless inserts do
//! ([`transaction::in_transactions`]). Deleting a document leaves its claim: an ID is never given
//! twice. Concurrent inserts of a model whose numbers come from outside the transaction commit
//! their claims and documents together (`proxy_group.rs`); this module's
//! transaction is the one an insert runs alone.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{InsertManyOptions, InsertOneOptions};
use mongodb::{ClientSession, Collection, IndexModel};
use sequence_rules::Strategy;
use tokio::sync::OnceCell;

use super::sequential_id::SequentialId;
use super::transaction::{self, AttemptFailure, Done, TransactionBody};
use super::upsert_parts::{self, Upsert};
use super::{document_scope, generated_ids, insert, skip_ahead};
use crate::error::driver::{insert_many_duplicate, is_duplicate_key, statement_transient, Access};
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::observability::PROXY;
use crate::sequence::{Issued, Sequence};
use crate::store::{literal, BoxFuture, Deployment};
use crate::sync::StoredIds;

/// What needs transactions here, as [`Error::TransactionsUnsupported`] names it.
const NEEDED_BY: &str = "`unique = \"proxy\"`";

/// Draws of a strategy without a counter after its ID met a claim, before giving up (the
/// `random` strategy has its own `retries`).
const GENERATED_DRAWS: u32 = 10;

/// The proxy collection of `T`'s documents in `coll`: `proxy`, or
/// `<collection>.claims.<ID field>`.
fn collection<T: SequentialId>(coll: &Collection<T>) -> Collection<Document> {
    let name = T::SEQUENCE.proxy_collection(coll.name());
    coll.client()
        .database(&coll.namespace().db)
        .collection(&name)
}

/// The value of `field` in `document`, which the insert paths have set.
fn stored(document: &Document, field: &str) -> Result<Bson> {
    document
        .get(field)
        .cloned()
        .ok_or_else(|| Error::InvalidArgument {
            argument: "document",
            reason: format!("the document to insert has no `{field}` field"),
        })
}

/// The claim of `document` (serialized as it is inserted, its `_id` fixed): its key is the ID,
/// or with a scope, the scope values and the ID, all read from the document as stored.
fn claim<T: SequentialId>(document: &Document) -> Result<Document> {
    let id = stored(document, T::SEQUENCE.id_field)?;
    let key = if T::SEQUENCE.scope.is_empty() {
        literal::key(T::SEQUENCE.id_field, &id)?
    } else {
        let mut key = Document::new();
        for (_, field) in T::SEQUENCE.stored_scope() {
            key.insert(field, literal::key(field, &stored(document, field)?)?);
        }
        key.insert("id", literal::key(T::SEQUENCE.id_field, &id)?);
        Bson::Document(key)
    };
    let document_id = document.get("_id").cloned().unwrap_or(Bson::Null);
    Ok(doc! { "_id": key, "doc": document_id })
}

/// Claims the IDs of `documents` (as they are inserted in `session`'s transaction, `_id`s
/// fixed), in order, with one ordered `insert_many`. The ID of document `i` was issued as
/// `issued(i)`: when it was claimed already, the failure moves its counter past the highest ID
/// claimed in its scope (the transaction is then run again).
pub(crate) async fn claim_all<'i, T: SequentialId>(
    coll: &Collection<T>,
    seq: &Sequence,
    documents: &[Document],
    issued: impl Fn(usize) -> &'i Issued,
    session: &mut ClientSession,
) -> std::result::Result<(), AttemptFailure> {
    let claims: Vec<Document> = documents
        .iter()
        .map(claim::<T>)
        .collect::<Result<_>>()
        .map_err(AttemptFailure::Fatal)?;
    let proxy = collection(coll);
    let Err(e) = proxy
        .insert_many(claims)
        .ordered(true)
        .session(session)
        .await
    else {
        return Ok(());
    };
    let at = insert_many_duplicate(&e).map(|(at, _)| at);
    match (
        Error::from_driver_on(e, proxy.namespace(), Access::Insert),
        at,
    ) {
        (e @ Error::DuplicateKey { .. }, Some(at)) => {
            let issued = issued(at);
            match claimed_floor::<T>(&proxy, &documents[at], seq, issued).await {
                Ok(floor) => Err(AttemptFailure::IdTaken(issued.clone(), floor, e)),
                Err(e) => Err(AttemptFailure::Fatal(e)),
            }
        }
        (Error::Mongo(e), _) if statement_transient(&e) => Err(AttemptFailure::Transient(e)),
        (e, _) => Err(AttemptFailure::Fatal(e)),
    }
}

/// The highest value claimed in `proxy` for the counter `issued` came from, in the scope of
/// `document` (as it is inserted): at least `issued.value`.
async fn claimed_floor<T: SequentialId>(
    proxy: &Collection<Document>,
    document: &Document,
    seq: &Sequence,
    issued: &Issued,
) -> Result<i64> {
    let ids = claims_in::<T>(proxy, document)?;
    skip_ahead::floor_among(&ids, seq, issued).await
}

/// The claims of the counter of `document` (as it is inserted), as [`StoredIds`] (for the
/// highest one claimed).
fn claims_in<'a, T: SequentialId>(
    proxy: &'a Collection<Document>,
    document: &Document,
) -> Result<StoredIds<'a>> {
    let (field, scope_fields) = T::SEQUENCE.claim_fields();
    let mut scope = Document::new();
    for ((_, stored_as), claimed_as) in T::SEQUENCE.stored_scope().zip(scope_fields) {
        let value = stored(document, stored_as)?;
        scope.insert(claimed_as, literal::stored(&value));
    }
    Ok(StoredIds {
        coll: proxy,
        field,
        form: skip_ahead::id_form::<T>(),
        scope,
    })
}

/// `insert_with_id` with a proxy collection: takes an ID, claims it and inserts `doc` in one
/// transaction of a session of its own.
pub(crate) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    options: Option<&InsertOneOptions>,
) -> Result<T::Id> {
    claimed(doc, coll, Write::Insert(options), None).await
}

/// [`insert_one`] with the number `issued` taken already (its first run claims that one).
pub(crate) async fn insert_numbered<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    issued: Issued,
) -> Result<T::Id> {
    claimed(doc, coll, Write::Insert(None), Some(issued)).await
}

/// The insert half of `upsert_with_id` with a proxy collection, once no document matched: the
/// claim and the upsert in one transaction, committed only if the upsert inserted (a
/// concurrent insert of the same key that won keeps its ID, and the claim is dropped).
pub(crate) async fn upsert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    upsert: &Upsert<'_, T>,
) -> Result<T::Id> {
    claimed(doc, coll, Write::Upsert(upsert), None).await
}

/// With a scope, makes sure the claims are indexed on their scope values and ID (`{
/// "_id.<scope field>": 1, …, "_id.id": 1 }`), so that the highest ID claimed in a scope is one
/// index-backed query. Done once per proxy collection per process, outside any transaction.
pub(crate) async fn ensure_index<T: SequentialId>(coll: &Collection<T>) -> Result<()> {
    if T::SEQUENCE.scope.is_empty() {
        return Ok(());
    }
    static DONE: LazyLock<Mutex<HashMap<String, Arc<OnceCell<()>>>>> =
        LazyLock::new(Default::default);
    let proxy = collection(coll);
    let identity = format!("{}\0{}", Deployment::of_collection(coll), proxy.namespace());
    let cell = DONE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(identity)
        .or_default()
        .clone();
    cell.get_or_try_init(|| async {
        proxy
            .create_index(
                IndexModel::builder()
                    .keys(crate::claims::index_keys(
                        T::SEQUENCE.stored_scope().map(|(_, stored)| stored),
                    ))
                    .build(),
            )
            .await
            .map(drop)
            .map_err(|e| Error::from_driver_on(e, proxy.namespace(), Access::ProxyIndex))
    })
    .await?;
    Ok(())
}

/// Runs a claimed write of `doc` in transactions of a session of its own, its first run with
/// the number `next` if given.
async fn claimed<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    write: Write<'_, '_, T>,
    next: Option<Issued>,
) -> Result<T::Id> {
    ensure_index(coll).await?;
    let seq = T::sequence(coll);
    let mut body = Claimed {
        doc,
        coll,
        proxy: collection(coll),
        seq: &seq,
        write,
        draws: 0,
        skipped: 0,
        next,
        sent: None,
    };
    transaction::in_transactions(coll, &seq, &mut body)
        .await
        .map_err(named)
}

/// Claims the ID `stored` of the document `upsert` would insert, in the caller's `session`;
/// returns the claim, which [`drop_claim_in`] drops if the upsert updated a document instead.
pub(crate) async fn claim_upsert_in<T: SequentialId>(
    coll: &Collection<T>,
    upsert: &Upsert<'_, T>,
    stored: Bson,
    session: &mut ClientSession,
) -> Result<Document> {
    let claim = claim::<T>(&upsert.inserted(stored)?)?;
    write_claim_in(coll, &claim, session).await?;
    Ok(claim)
}

/// Drops `claim` in the caller's `session`: the upsert it was made for updated a document
/// that a concurrent insert stored.
pub(crate) async fn drop_claim_in<T: SequentialId>(
    coll: &Collection<T>,
    claim: &Document,
    session: &mut ClientSession,
) -> Result<()> {
    let proxy = collection(coll);
    let key = claim.get("_id").cloned().unwrap_or(Bson::Null);
    proxy
        .delete_one(doc! { "_id": literal::exactly("_id", &key)? })
        .session(session)
        .await
        .map(drop)
        .map_err(|e| Error::from_driver_on(e, proxy.namespace(), Access::Insert))
}

/// Claims the ID of `doc` in the caller's `session`, and returns the document to insert (with
/// the `_id` the claim refers to). Nothing is retried: a refused claim aborts the caller's
/// transaction.
pub(crate) async fn claim_in<T: SequentialId>(
    doc: &T,
    coll: &Collection<T>,
    session: &mut ClientSession,
) -> Result<Document> {
    let document = insert::fixed_document(doc)?;
    write_claim_in(coll, &claim::<T>(&document)?, session).await?;
    Ok(document)
}

/// Writes `claim` in the caller's `session`, once the claims are indexed as they need to be.
async fn write_claim_in<T: SequentialId>(
    coll: &Collection<T>,
    claim: &Document,
    session: &mut ClientSession,
) -> Result<()> {
    ensure_index(coll).await?;
    let proxy = collection(coll);
    match proxy.insert_one(claim).session(session).await {
        Ok(_) => Ok(()),
        Err(e) => Err(named(Error::from_driver_on(
            e,
            proxy.namespace(),
            Access::Insert,
        ))),
    }
}

/// The options of one document's insert of an `insert_many` with `options`.
pub(crate) fn one_options(options: &InsertManyOptions) -> InsertOneOptions {
    InsertOneOptions::builder()
        .bypass_document_validation(options.bypass_document_validation)
        .write_concern(options.write_concern.clone())
        .comment(options.comment.clone())
        .build()
}

/// Names the option in an error about transactions.
fn named(e: Error) -> Error {
    match e {
        Error::TransactionsUnsupported { detail, .. } => Error::TransactionsUnsupported {
            needed_by: NEEDED_BY,
            detail,
        },
        e => e,
    }
}

/// What a claimed write writes after the claim.
enum Write<'b, 'a, T: Send + Sync> {
    /// The document, with these options.
    Insert(Option<&'b InsertOneOptions>),
    /// The upsert, with the ID on insert.
    Upsert(&'b Upsert<'a, T>),
}

/// One claimed write: the body of its transaction.
struct Claimed<'b, 'a, T: SequentialId> {
    doc: &'b mut T,
    coll: &'b Collection<T>,
    proxy: Collection<Document>,
    seq: &'b Sequence,
    write: Write<'b, 'a, T>,
    /// IDs drawn so far that met a claim (strategies without a counter).
    draws: u32,
    /// Times the counter skipped ahead past claimed (or stored) IDs.
    skipped: u32,
    /// The value the counter gave after skipping ahead, for the next run.
    next: Option<Issued>,
    /// The document as the last run sent it.
    sent: Option<Document>,
}

impl<T: SequentialId> TransactionBody<T::Id> for Claimed<'_, '_, T> {
    fn run<'s>(
        &'s mut self,
        session: &'s mut ClientSession,
    ) -> BoxFuture<'s, std::result::Result<Done<T::Id>, AttemptFailure>> {
        Box::pin(async move { self.attempt(session).await })
    }

    fn sent(&self) -> Option<Vec<Document>> {
        self.sent.clone().map(|d| vec![d])
    }
}

impl<T: SequentialId> Claimed<'_, '_, T> {
    /// Takes an ID, claims it, writes the document.
    async fn attempt(
        &mut self,
        session: &mut ClientSession,
    ) -> std::result::Result<Done<T::Id>, AttemptFailure> {
        let (id, issued) = self.take(session).await?;
        self.doc.set_id(id.clone());
        let document = match self.write {
            Write::Insert(_) => insert::fixed_document(&*self.doc),
            Write::Upsert(upsert) => {
                upsert_parts::stored_form(self.doc, &id).and_then(|stored| upsert.inserted(stored))
            }
        }
        .map_err(AttemptFailure::Fatal)?;
        self.sent = Some(document.clone());
        let claim = claim::<T>(&document).map_err(AttemptFailure::Fatal)?;
        if let Err(e) = self.proxy.insert_one(claim).session(&mut *session).await {
            return Err(if is_duplicate_key(&e) {
                let e = Error::from_driver_on(e, self.proxy.namespace(), Access::Insert);
                self.collided(issued, e, Some(&document)).await
            } else {
                transaction::classify(e, &self.proxy.namespace(), statement_transient)
            });
        }
        let written = match self.write {
            Write::Insert(options) => self
                .coll
                .clone_with_type::<Document>()
                .insert_one(&document)
                .with_options(options.cloned())
                .session(&mut *session)
                .await
                .map(|_| None),
            Write::Upsert(upsert) => {
                let ours = document
                    .get(T::SEQUENCE.id_field)
                    .cloned()
                    .unwrap_or(Bson::Null);
                upsert
                    .with_id(ours.clone(), Some(&mut *session))
                    .await
                    .map(|stored| (stored != ours).then_some(stored))
            }
        };
        match written {
            Ok(None) => Ok(Done::Commit(id)),
            Ok(Some(stored)) => {
                // A concurrent insert of the same key won: its ID stands, and aborting drops
                // the claim (and, gapless, gives the number back).
                let id = T::Id::from_stored(stored).map_err(AttemptFailure::Fatal)?;
                self.doc.set_id(id.clone());
                Ok(Done::Abort(id))
            }
            Err(e) => {
                let e = Error::from_driver_on(e, self.coll.namespace(), Access::Insert);
                if skip_ahead::on_id_field::<T>(&e) {
                    // A document holds the ID without a claim (written before the proxy).
                    Err(self.collided(issued, e, None).await)
                } else {
                    Err(match e {
                        Error::Mongo(e) if statement_transient(&e) => AttemptFailure::Transient(e),
                        e => AttemptFailure::Fatal(e),
                    })
                }
            }
        }
    }

    /// The next ID of the model's strategy, with the counter it came from; a gapless number
    /// is taken in `session`.
    async fn take(
        &mut self,
        session: &mut ClientSession,
    ) -> std::result::Result<(T::Id, Option<Issued>), AttemptFailure> {
        if let Some(issued) = self.next.take() {
            let id = T::Id::render(issued.value, &issued.slot.rendering)
                .map_err(AttemptFailure::Fatal)?;
            return Ok((id, Some(issued)));
        }
        if let Some(id) = generated_ids::fresh::<T>() {
            return Ok((id.map_err(AttemptFailure::Fatal)?, None));
        }
        if T::SEQUENCE.strategy == Strategy::Random {
            let value = self.seq.next().await.map_err(AttemptFailure::Fatal)?;
            return Ok((
                T::Id::from_counter(value).map_err(AttemptFailure::Fatal)?,
                None,
            ));
        }
        let seq = document_scope::for_document(self.seq.clone(), &*self.doc)
            .map_err(AttemptFailure::Fatal)?;
        let (id, issued) = if T::SEQUENCE.gapless {
            seq.issue_id_in::<T::Id>(session)
                .await
                .map_err(transaction::counter_failure)?
        } else {
            seq.issue_id::<T::Id>()
                .await
                .map_err(AttemptFailure::Fatal)?
        };
        Ok((id, Some(issued)))
    }

    /// What a run whose ID met a claim (`claimed`: the document it was claimed for) or a
    /// stored document does next: a counter skips ahead past the highest claimed (or stored)
    /// value, a draw is made again; both a bounded number of times.
    async fn collided(
        &mut self,
        issued: Option<Issued>,
        e: Error,
        claimed: Option<&Document>,
    ) -> AttemptFailure {
        match issued {
            // A gapless number was taken in the aborted transaction: the counter moves up to
            // the highest claimed (or stored) value and the next run takes the one after it.
            Some(issued) if T::SEQUENCE.gapless => match self.floor(&issued, claimed).await {
                Ok(floor) => AttemptFailure::IdTaken(issued, floor, e),
                Err(e) => AttemptFailure::Fatal(e),
            },
            Some(issued) => match self.skip_ahead(&issued, claimed).await {
                Ok(next) if self.skipped < skip_ahead::ROUNDS => {
                    self.skipped += 1;
                    self.next = Some(next);
                    AttemptFailure::Collided
                }
                Ok(_) => match T::Id::render(issued.value, &issued.slot.rendering) {
                    Ok(id) => AttemptFailure::Fatal(skip_ahead::taken(
                        self.coll,
                        &id,
                        &issued,
                        e,
                        skip_ahead::AFTER_ROUNDS,
                    )),
                    Err(e) => AttemptFailure::Fatal(e),
                },
                Err(e) => AttemptFailure::Fatal(e),
            },
            None => {
                self.draws += 1;
                self.seq.record_collisions(1);
                tracing::debug!(
                    target: PROXY,
                    collection = %self.coll.namespace(),
                    proxy = %self.proxy.namespace(),
                    draws = self.draws,
                    "ID already claimed"
                );
                let attempts = match T::SEQUENCE.strategy {
                    Strategy::Random => self.seq.options().retries.saturating_add(1),
                    _ => GENERATED_DRAWS,
                };
                if self.draws < attempts {
                    AttemptFailure::Collided
                } else {
                    AttemptFailure::Fatal(super::random_ids::exhausted(
                        self.coll, self.seq, attempts,
                    ))
                }
            }
        }
    }
}

impl<T: SequentialId> Claimed<'_, '_, T> {
    /// Moves the counter `issued` came from past the highest value claimed (in the scope of
    /// `claimed`, the document the ID was claimed for) or else stored; returns the next value
    /// it gives.
    async fn skip_ahead(&self, issued: &Issued, claimed: Option<&Document>) -> Result<Issued> {
        let floor = self.floor(issued, claimed).await?;
        let seq = document_scope::for_document(self.seq.clone(), &*self.doc)?;
        seq.skip_ahead(issued, floor).await
    }

    /// The highest value claimed (in the scope of `claimed`, the document the ID was claimed
    /// for) or else stored for the counter `issued` came from.
    async fn floor(&self, issued: &Issued, claimed: Option<&Document>) -> Result<i64> {
        let seq = document_scope::for_document(self.seq.clone(), &*self.doc)?;
        match claimed {
            Some(document) => claimed_floor::<T>(&self.proxy, document, &seq, issued).await,
            None => skip_ahead::stored_floor(&*self.doc, self.coll, &seq, issued).await,
        }
    }
}
