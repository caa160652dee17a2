//! [`SequentialId`], the trait `#[derive(SequentialId)]` implements: what a model is (its ID
//! type, its configuration, how its ID field is set and its scope read), and its operations,
//! which return the actions of `crate::action`.

use std::any::TypeId;

use mongodb::bson::{Bson, Document};
use mongodb::Collection;
use sequence_rules::Unique;
use serde::Serialize;

use super::handle;
use crate::action::{
    EnsureIndexes, IndexTarget, InsertManyWithIds, InsertWithId, NextId, SyncCounters, UpsertWithId,
};
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::options::SequenceConfig;
use crate::sequence::Sequence;

/// A model whose documents get their ID from a sequence.
///
/// Implemented by `#[derive(SequentialId)]`; generic code can take `T: SequentialId` and call
/// the provided methods. The derive also generates inherent methods of the same names, so
/// callers need not import this trait.
///
/// Each method follows the model's [`Strategy`](crate::Strategy): see the crate documentation for what each
/// guarantees. With the random strategy, `insert_with_id` redraws on a duplicate key on `_id`
/// (at most `retries` times, then [`Error::RandomIdsExhausted`]), a duplicate key on another
/// unique index is returned as [`Error::DuplicateKey`], and `next_id` returns a draw that is
/// unique only once inserted.
///
/// ```no_run
/// use sequence_runtime::{Result, SequentialId};
///
/// /// Stores a batch of any model, numbered, and returns the first and last IDs.
/// async fn store_all<T: SequentialId>(
///     docs: &mut [T],
///     coll: &mongodb::Collection<T>,
/// ) -> Result<Option<(T::Id, T::Id)>>
/// where
///     T::Id: Clone,
/// {
///     let ids = T::insert_many_with_ids(docs, coll).await?;
///     Ok(ids.first().cloned().zip(ids.last().cloned()))
/// }
/// ```
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
        handle::sequence(TypeId::of::<Self>(), coll, &Self::SEQUENCE)
    }

    /// The counter value (and period) of `id`, an ID of this model written as text (an integer
    /// ID as its digits), or [`Error::InvalidId`] saying what is wrong with it: a check digit
    /// that does not match, another prefix or period, a character outside the encoding. Reads
    /// the configuration only; nothing is sent to the server. See [`Sequence::parse_id`].
    fn parse_id(id: &str) -> Result<crate::id::ParsedId> {
        let (bounds, format) = Self::SEQUENCE.options().checked()?;
        let now = crate::clock::Clock::now(&crate::clock::SystemClock);
        format.parse_id_within(id, now, bounds)
    }

    /// Allocates the next ID without inserting anything. A scoped model (`scope = ...`) has no
    /// document to take the scope from here: this fails with [`Error::ScopeRequired`]; use
    /// [`next_id_for`](Self::next_id_for).
    ///
    /// A gapless sequence refuses with [`Error::Unsupported`] outside a session: a number
    /// taken outside the insert's transaction would leave a gap if it were not used. In a
    /// session ([`NextId::session`]) the number is taken in the session's transaction.
    fn next_id(coll: &Collection<Self>) -> NextId<'_, Self> {
        NextId::new(coll, None)
    }

    /// Allocates the next ID for this document without inserting it: from the counter of its
    /// `scope` values for a scoped model, else like [`next_id`](Self::next_id).
    fn next_id_for<'a>(&'a self, coll: &'a Collection<Self>) -> NextId<'a, Self> {
        NextId::new(coll, Some(self))
    }

    /// Allocates the next ID, stores it in the ID field, inserts the document and returns the
    /// ID. The action takes the caller's session ([`InsertWithId::session`]) and the options
    /// of the insert ([`InsertWithId::with_options`]).
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
    ///
    /// In the caller's session, the `counter` strategy reserves the number with a counter
    /// update in that session (not from the batch cache), so when the session is inside a
    /// transaction the number is consumed only if that transaction commits, and an abort
    /// leaves neither the document nor a used number. The other strategies take their ID as
    /// without a session and insert in the session. Nothing is sent again in a session.
    fn insert_with_id<'a>(&'a mut self, coll: &'a Collection<Self>) -> InsertWithId<'a, Self> {
        InsertWithId::new(self, coll)
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
    /// In the caller's session ([`UpsertWithId::session`]) the update, the number (with the
    /// `counter` strategy, reserved in the session) and the upsert run there, sent once.
    ///
    /// MongoDB keeps upserts unique only with a unique index on the filter's fields: without
    /// one, two concurrent upserts of the same key can both insert.
    ///
    /// ```no_run
    /// # use sequence_runtime::SequentialId;
    /// # async fn f<C: SequentialId>(mut customer: C, coll: mongodb::Collection<C>) -> sequence_runtime::Result<()> {
    /// let filter = mongodb::bson::doc! { "email": "ada@example.com" };
    /// let id = customer.upsert_with_id(&coll, filter).await?;
    /// # Ok(()) }
    /// ```
    fn upsert_with_id<'a>(
        &'a mut self,
        coll: &'a Collection<Self>,
        filter: Document,
    ) -> UpsertWithId<'a, Self> {
        UpsertWithId::new(self, coll, filter)
    }

    /// Creates every index this model's configuration needs that `coll`'s database lacks, and
    /// reports each with whether it was created: the unique index of the ID field, with the
    /// scope fields first (`{ tenant: 1, number: 1 }`), when it is not `_id` (inserts detect a
    /// stored ID by it; without it two documents of a scope may hold one number); the index of
    /// a scoped proxy collection's claims; the unique index of the counters of a layout or a
    /// filter. Idempotent: an index of the same keys is left as it is, whatever its name; one
    /// of the same keys without `unique` where `unique` is needed is
    /// [`Error::IndexConflict`]. Needs `createIndex` (and `listIndexes`) on those collections;
    /// run it at deployment or at startup.
    ///
    /// ```no_run
    /// # use sequence_runtime::SequentialId;
    /// # async fn f<T: SequentialId>(coll: mongodb::Collection<T>) -> sequence_runtime::Result<()> {
    /// for index in T::ensure_indexes(&coll).await?.created() {
    ///     println!("created {} on {}", index.keys, index.namespace);
    /// }
    /// # Ok(()) }
    /// ```
    fn ensure_indexes(coll: &Collection<Self>) -> EnsureIndexes {
        EnsureIndexes::new(target_of(coll))
    }

    /// Moves every counter of this model up to the highest ID stored for it in `coll` (one per
    /// period, scope value or shard), never down, creating the missing ones: after an import,
    /// a restore, or documents written by another program. See
    /// [`Sequence::sync_counters`]. Counter and ranges strategies only; the others fail with
    /// [`Error::Unsupported`]. With `unique = "proxy"` the IDs are read from the claims of the
    /// proxy collection, where they are the claims' `_id` (indexed): documents written without
    /// a claim are not seen until they are claimed (`mongo-sequence repair`).
    ///
    /// The action reports what would move and moves nothing with
    /// [`dry_run`](SyncCounters::dry_run), and runs in the caller's session with
    /// [`session`](SyncCounters::session).
    fn sync_counters<'a>(coll: &Collection<Self>) -> SyncCounters<'a> {
        let config = &Self::SEQUENCE;
        let (docs, field, scope) = if config.unique == Unique::Proxy {
            let (field, scope) = config.claim_fields();
            let proxy = config.proxy_collection(coll.name());
            let db = coll.client().database(&coll.namespace().db);
            (db.collection(&proxy), field, scope)
        } else {
            let scope = config.stored_scope().map(|(_, s)| s.to_owned()).collect();
            (coll.clone_with_type(), config.id_field, scope)
        };
        let text = Self::Id::STORED_AS_TEXT;
        SyncCounters::new(
            Self::sequence(coll),
            docs,
            field.to_owned(),
            Some(scope),
            text,
        )
    }

    /// Reserves one contiguous range for all of `docs` in a single round trip (one per distinct
    /// scope for a scoped model), stores the IDs and inserts the documents with one
    /// `insert_many`. Returns the IDs in order. The action takes the caller's session
    /// ([`InsertManyWithIds::session`]: with the `counter` strategy the range is reserved in
    /// it) and the options of the insert.
    ///
    /// Called again and again outside a session (a model without a scope), it reserves the
    /// next call's range while the current call inserts, from its second call on, so that the
    /// next call finds its IDs ready when it is no larger than this one: this process then
    /// holds one call's worth ahead, which [`Sequence::release`] gives back.
    ///
    /// With the random strategy, distinct draws are inserted with one unordered `insert_many`,
    /// and only the documents that collided on `_id` are drawn again and re-inserted, at most
    /// `retries` times; on an error, the documents inserted so far stay inserted (their ID fields
    /// hold their IDs). With the UUID and ObjectId strategies, each document gets a fresh value.
    fn insert_many_with_ids<'a>(
        docs: &'a mut [Self],
        coll: &'a Collection<Self>,
    ) -> InsertManyWithIds<'a, Self> {
        InsertManyWithIds::new(docs, coll)
    }
}

/// Converts a `scope` field's value to BSON (used by the derive).
pub fn scope_value<T: Serialize + ?Sized>(value: &T) -> Result<Bson> {
    mongodb::bson::to_bson(value).map_err(|e| Error::Serialization {
        what: "a `scope` field",
        source: e.into(),
    })
}

/// The target of model `T` in `coll`: its collection, the names its documents store the ID
/// and scope values under, and its options.
pub(crate) fn target_of<T: SequentialId>(coll: &Collection<T>) -> IndexTarget {
    let config = &T::SEQUENCE;
    IndexTarget {
        db: coll.client().database(&coll.namespace().db),
        collection: coll.name().to_owned(),
        id_field: config.id_field.to_owned(),
        scope: config
            .stored_scope()
            .map(|(_, stored)| stored.to_owned())
            .collect(),
        options: config.options(),
    }
}
