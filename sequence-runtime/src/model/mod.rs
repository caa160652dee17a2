//! The trait `#[derive(SequentialId)]` implements, and the insert paths of each strategy that
//! its methods take.
//!
//! - `doc.rs`: what the paths need of a model (implemented for every `SequentialId`);
//! - `insert.rs`: the insert of one document, sent again while its outcome is unknown;
//! - `counted.rs`: inserts of the counter strategies, a number per document;
//! - `skip_ahead.rs`: inserts that meet IDs already stored move the counter past them;
//! - `gapless.rs`: the counter update and the insert in one transaction;
//! - `group.rs`: concurrent gapless inserts committed together;
//! - `random.rs`: inserts that draw again on a collision;
//! - `generated.rs`: inserts of UUIDs and ObjectIds;
//! - `scope.rs`: the counter of a document's scope;
//! - `upsert.rs`: update the document a filter matches, or insert with a new ID;
//! - `cached.rs`: the hot path of batched counters.

mod cached;
mod counted;
mod doc;
mod gapless;
mod generated;
mod group;
mod insert;
mod random;
mod scope;
mod skip_ahead;
mod upsert;

use std::future::Future;

use mongo_sequence_rules::Strategy;
use mongodb::bson::Bson;
use mongodb::{ClientSession, Collection};
use serde::Serialize;

use self::doc::Doc;
use self::gapless::Docs;
use crate::engine::SyncReport;
use crate::error::{Access, Error, Result};
use crate::options::SequenceConfig;
use crate::sequence::Sequence;
use crate::values::{Generated, IdValue};

/// A model whose documents get their ID from a sequence.
///
/// Implemented by `#[derive(SequentialId)]`; generic code can take `T: SequentialId` and call
/// the provided methods. The derive also generates inherent methods of the same names, so
/// callers need not import this trait.
///
/// Each method follows the model's [`Strategy`]: see the crate documentation for what each
/// guarantees. With the random strategy, `insert_with_id` redraws on a duplicate key on `_id`
/// (at most `retries` times, then [`Error::RandomIdsExhausted`]), a duplicate key on another
/// unique index is returned as [`Error::DuplicateKey`], and `next_id` returns a draw that is
/// unique only once inserted.
pub trait SequentialId: Serialize + Send + Sync + Sized + 'static {
    /// The type of the ID (for an `Option<T>` field, `T`).
    type Id: IdValue;

    /// The configuration from the model's `#[seq(...)]` attributes.
    const SEQUENCE: SequenceConfig;

    /// Stores `id` in the ID field.
    fn set_id(&mut self, id: Self::Id);

    /// The values of the `scope` fields of this document, in `scope` order (empty without
    /// `scope`).
    fn scope_values(&self) -> Result<Vec<(&'static str, Bson)>> {
        Ok(Vec::new())
    }

    /// The sequence of this model for `coll` (its counter lives in `coll`'s database).
    fn sequence(coll: &Collection<Self>) -> Sequence {
        Self::SEQUENCE.sequence_for(coll)
    }

    /// Allocates the next ID without inserting anything. A scoped model (`scope = ...`) has no
    /// document to take the scope from here: this fails with [`Error::ScopeRequired`]; use
    /// [`next_id_for`](Self::next_id_for).
    ///
    /// A gapless sequence refuses with [`Error::Unsupported`]: a number taken outside the
    /// insert's transaction would leave a gap if it were not used.
    fn next_id(coll: &Collection<Self>) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            if let Some(id) = cached::cached_id(coll) {
                return Self::Id::from_counter(id);
            }
            allocate::<Self>(Ok(Self::sequence(coll))).await
        }
    }

    /// Allocates the next ID for this document without inserting it: from the counter of its
    /// `scope` values for a scoped model, else like [`next_id`](Self::next_id).
    fn next_id_for(
        &self,
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            if let Some(id) = cached::cached_id(coll) {
                return Self::Id::from_counter(id);
            }
            allocate::<Self>(scope::for_document(Self::sequence(coll), self)).await
        }
    }

    /// Allocates the next ID, stores it in the ID field, inserts the document and returns the ID.
    ///
    /// An insert whose outcome is unknown (a dropped connection or an election that the
    /// driver's own retry did not get past, or an unconfirmed write concern) is sent again with
    /// the same document and ID, a bounded number of times: it never takes a second number and
    /// never stores a second document. A duplicate key on the document's `_id` then counts as
    /// success only if the stored document is this one, majority-committed. A document without
    /// an `_id` field gets an `ObjectId` before the first attempt, so that the attempts agree.
    ///
    /// If the insert fails, the ID field keeps the allocated value, which is not reused: a
    /// retry of this call takes a new one. A gapless sequence instead runs the counter update
    /// and the insert in one transaction (shared with the concurrent gapless inserts of the
    /// same counter and collection in this process), so a failed insert consumes no number.
    fn insert_with_id(
        &mut self,
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            if Self::SEQUENCE.gapless {
                return group::insert_one(self, coll, &Self::sequence(coll)).await;
            }
            match Self::SEQUENCE.strategy {
                Strategy::Random => return random::insert_one(self, coll, None).await,
                s if s.uses_counters() => return counted::insert_one(self, coll).await,
                _ => {}
            }
            let id = self.next_id_for(coll).await?;
            self.set_id(id.clone());
            insert::insert_one(coll, &*self).await?;
            Ok(id)
        }
    }

    /// Like [`insert_with_id`](Self::insert_with_id), in `session`. With the `counter`
    /// strategy the ID is reserved by a counter update in the session (not from the batch
    /// cache), so when the session is inside a transaction the number is consumed only if that
    /// transaction commits, and an abort leaves neither the document nor a used number; outside
    /// a transaction the call is causally consistent with the session's other operations. The
    /// other strategies take their ID as `insert_with_id` does and insert in the session.
    fn insert_with_id_in_session(
        &mut self,
        coll: &Collection<Self>,
        session: &mut ClientSession,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            let (id, issued) = match Self::SEQUENCE.strategy {
                Strategy::Random => return random::insert_one(self, coll, Some(session)).await,
                Strategy::Counter => {
                    let seq = scope::for_document(Self::sequence(coll), self)?;
                    let mut ids = seq.issue_ids::<Self::Id>(1, Some(&mut *session)).await?;
                    let (id, issued) = ids.pop().expect("one ID reserved");
                    (id, Some(issued))
                }
                _ => (Self::next_id(coll).await?, None),
            };
            self.set_id(id.clone());
            let inserted = coll.insert_one(&*self).session(session).await;
            match (
                inserted.map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::Insert)),
                issued,
            ) {
                (Ok(_), _) => Ok(id),
                (Err(e), Some(issued)) if skip_ahead::on_id_field::<Self>(&e) => Err(
                    skip_ahead::taken(coll, &id, &issued, e, skip_ahead::IN_SESSION),
                ),
                (Err(e), _) => Err(e),
            }
        }
    }

    /// Updates the document that `filter` matches with this document's fields (all but the ID
    /// field, and `_id`), keeping its stored ID, or, if none matches, inserts this document
    /// with a new ID: a number is taken only for an insert. Returns the stored ID, which the ID
    /// field holds afterwards.
    ///
    /// The update comes first; when it matches nothing, the number is taken and the document
    /// upserted with the ID in `$setOnInsert` only, so that when a concurrent insert of the
    /// same key won in between, its ID stands (and the number taken counts as wasted). An
    /// upsert whose outcome is unknown is sent again with the same number. A gapless model
    /// takes its number and upserts in one transaction, so that only an insert consumes one.
    ///
    /// MongoDB keeps upserts unique only with a unique index on the filter's fields: without
    /// one, two concurrent upserts of the same key can both insert.
    ///
    /// ```no_run
    /// # use mongo_sequence_runtime::SequentialId;
    /// # async fn f<C: SequentialId>(mut customer: C, coll: mongodb::Collection<C>) -> mongo_sequence_runtime::Result<()> {
    /// let filter = mongodb::bson::doc! { "email": "ada@example.com" };
    /// let id = customer.upsert_with_id(&coll, filter).await?;
    /// # Ok(()) }
    /// ```
    fn upsert_with_id(
        &mut self,
        coll: &Collection<Self>,
        filter: mongodb::bson::Document,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        upsert::upsert(self, coll, filter, None)
    }

    /// Like [`upsert_with_id`](Self::upsert_with_id), in `session`: the update, the number
    /// (with the `counter` strategy, reserved in the session, so inside a transaction it is
    /// consumed only if that transaction commits) and the upsert. Nothing is sent again.
    fn upsert_with_id_in_session(
        &mut self,
        coll: &Collection<Self>,
        filter: mongodb::bson::Document,
        session: &mut ClientSession,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        upsert::upsert(self, coll, filter, Some(session))
    }

    /// Moves every counter of this model up to the highest ID stored for it in `coll` (one per
    /// period, scope value or shard), never down, creating the missing ones: after an import,
    /// a restore, or documents written by another program. See
    /// [`Sequence::sync_counters`]. Counter and sharded strategies only; the others fail with
    /// [`Error::Unsupported`].
    fn sync_counters(coll: &Collection<Self>) -> impl Future<Output = Result<SyncReport>> + Send {
        async move {
            let config = &Self::SEQUENCE;
            let docs = coll.clone_with_type::<mongodb::bson::Document>();
            let stored: Vec<&str> = config.stored_scope().map(|(_, stored)| stored).collect();
            Self::sequence(coll)
                .sync_counters(&docs, config.id_field)
                .scope_fields(&stored)
                .text(Self::Id::STORED_AS_TEXT)
                .await
        }
    }

    /// Reserves one contiguous range for all of `docs` in a single round trip (one per distinct
    /// scope for a scoped model), stores the IDs and inserts the documents with one
    /// `insert_many`. Returns the IDs in order.
    ///
    /// With the random strategy, distinct draws are inserted with one unordered `insert_many`,
    /// and only the documents that collided on `_id` are drawn again and re-inserted, at most
    /// `retries` times; on an error, the documents inserted so far stay inserted (their ID fields
    /// hold their IDs). With the UUID and ObjectId strategies, each document gets a fresh value.
    fn insert_many_with_ids(
        docs: &mut [Self],
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Vec<Self::Id>>> + Send {
        async move {
            match Self::SEQUENCE.strategy {
                Strategy::Random => return random::insert_many(docs, coll).await,
                s if !s.is_numeric() => return generated::insert_many(docs, coll).await,
                _ => {}
            }
            if docs.is_empty() {
                return Ok(Vec::new());
            }
            if Self::SEQUENCE.gapless {
                return gapless::insert(Docs::Many(docs), coll, &Self::sequence(coll)).await;
            }
            counted::insert_many(docs, coll).await
        }
    }
}

/// The next ID of `T` from `seq` (already bound to the document's scope, if any), or a value
/// made without a counter.
async fn allocate<T: SequentialId>(seq: Result<Sequence>) -> Result<T::Id> {
    if let Some(value) = Generated::new(T::SEQUENCE.strategy) {
        return T::Id::from_generated(value);
    }
    seq?.next_id::<T::Id>().await
}

impl<M: SequentialId> Doc for M {
    type Id = M::Id;

    const CONFIG: SequenceConfig = M::SEQUENCE;

    fn put_id(&mut self, id: Self::Id) {
        self.set_id(id);
    }

    fn scope_of(&self) -> Result<Vec<(&'static str, Bson)>> {
        self.scope_values()
    }

    fn sequence_of(coll: &Collection<Self>) -> Sequence {
        M::sequence(coll)
    }
}

/// Converts a `scope` field's value to BSON (used by the derive).
pub fn scope_value<T: Serialize + ?Sized>(value: &T) -> Result<Bson> {
    mongodb::bson::to_bson(value)
        .map_err(|e| Error::InvalidOptions(format!("a `scope` field cannot be stored: {e}")))
}
