//! Counters in a MongoDB collection: one `findAndModify` per reservation.

use std::collections::HashSet;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use mongodb::action::Action;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{CollectionOptions, WriteConcern};
use mongodb::{ClientSession, Collection, Database};

use sequence_rules::names::{self, NameKind};

use super::counter_store::{BoxFuture, CounterStore, Reservation};
use super::deployment::Deployment;
use super::sequence_record::SequenceRecord;
use crate::error::driver::{is_duplicate_key, Access};
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey};
use crate::observability::STORE;
use crate::options::SequenceOptions;
use crate::store::layout::{CounterLayout, KeyIndex};
use known_counters::KnownCounters;

/// The field of a counter document that counts how often a transaction that met the counter
/// held by another waited for it to end (see [`CounterStore::wait_for_transactions`]).
const WAITED_FIELD: &str = "waited";

mod key_index;
mod known_counters;

pub(crate) use known_counters::forget as forget_known_counters;
mod periods;
mod reserve;
mod together;

/// Counters kept in a collection (by default `counters`) of a MongoDB database.
///
/// A reservation of `n` values is one `findAndModify` on the counter document: an atomic add of
/// `n` to the counter field (created at `start - 1` by upsert when missing), guarded by a filter
/// that only matches while `n` more values fit below `max`, with write concern `majority` unless
/// configured otherwise, and returning the document after the update. The reserved range is
/// `[seq - n + 1, seq]`, so other writers that `$inc` the same counter by one stay safe.
///
/// [`Sequence::new`](crate::Sequence::new) builds one; build it yourself to share it between
/// sequences of one counters collection, or to wrap it in a store of your own:
///
/// ```no_run
/// use std::sync::Arc;
///
/// use sequence_runtime::store::MongoStore;
/// use sequence_runtime::{Result, Sequence, SequenceOptions};
///
/// fn sequence(db: &mongodb::Database) -> Result<Sequence> {
///     let options = SequenceOptions::builder("invoice").counters("billing_counters").build();
///     let store = MongoStore::new(db, &options)?;
///     Sequence::with_store(Arc::new(store), options)
/// }
/// ```
#[derive(Clone, Debug)]
pub struct MongoStore {
    collection: Collection<Document>,
    layout: CounterLayout,
    /// The deployment of the collection's client, which tells apart two deployments with a
    /// database of the same name.
    deployment: Deployment,
    /// The record of the sequence to write beside the counters before the first write.
    record: Option<Arc<SequenceRecord>>,
    /// Whether this store (or a clone) has seen its record handled in this process: its
    /// writes then skip the process-wide list of recorded sequences.
    recorded: Arc<AtomicBool>,
    /// Which counters exist, as far as rounds of several counters know; shared by the stores
    /// of the same counters in the process.
    known: Arc<KnownCounters>,
}

impl MongoStore {
    /// The counters of `options` in `db`: in the collection `options.counters`, of the shape
    /// `options.layout`, `options.field` and `options.stores` say, written with
    /// `options.write_concern` (`None`: the collection's own).
    pub fn new(db: &Database, options: &SequenceOptions) -> Result<Self> {
        Self::in_deployment(db, Deployment::of_database(db), options)
    }

    /// Like [`new`](Self::new), for a `db` of `deployment`.
    pub(crate) fn in_deployment(
        db: &Database,
        deployment: Deployment,
        options: &SequenceOptions,
    ) -> Result<Self> {
        Self::with_layout(
            db,
            deployment,
            &options.counters,
            CounterLayout::of(options),
            options.write_concern.clone(),
        )
    }

    /// Counters in `collection` of `db`, of `layout`.
    fn with_layout(
        db: &Database,
        deployment: Deployment,
        collection: &str,
        layout: CounterLayout,
        write_concern: Option<WriteConcern>,
    ) -> Result<Self> {
        names::check(NameKind::Collection, collection)?;
        names::check(NameKind::Field, &layout.field)?;
        // The write concern is the collection's, so that operations inherit it outside a
        // transaction and leave it to the commit inside one.
        let options = CollectionOptions::builder()
            .write_concern(write_concern)
            .build();
        let collection = db.collection_with_options(collection, options);
        let known = known_counters::shared(&identity(&deployment, &collection, &layout));
        Ok(MongoStore {
            collection,
            layout,
            deployment,
            record: None,
            recorded: Arc::default(),
            known,
        })
    }

    /// The same store, which writes `record` beside the counters once per process, after its
    /// first write to a counter (a write that fails records nothing).
    pub(crate) fn recording(mut self, record: SequenceRecord) -> Self {
        self.record = Some(Arc::new(record));
        self.recorded = Arc::default();
        self
    }

    /// Writes the sequence's record, once per process per sequence and counters collection.
    /// The first caller writes it, the others go on; a failure is logged, never returned: the
    /// record helps tools, and numbering does not depend on it.
    async fn ensure_recorded(&self) {
        let Some(record) = &self.record else {
            return;
        };
        if self.recorded.swap(true, Ordering::Relaxed) {
            return;
        }
        static DONE: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);
        let id = format!("{}\0{}", self.identity(), record.name);
        if !DONE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id)
        {
            return;
        }
        match record.write(&self.collection).await {
            Ok(()) => tracing::debug!(
                target: STORE,
                sequence = %record.name,
                collection = %SequenceRecord::collection_name(&self.location()),
                "Sequence recorded"
            ),
            Err(e) => tracing::warn!(
                target: STORE,
                sequence = %record.name,
                collection = %SequenceRecord::collection_name(&self.location()),
                error = %e,
                "Sequence record not written"
            ),
        }
    }

    /// The unique index the counters of this store's layout need, if any.
    pub(crate) fn key_index(&self) -> Option<KeyIndex> {
        self.layout.key_index()
    }

    /// The filter that selects the counter document of `key`.
    ///
    /// Every value of the key is matched as data (a scope value `{ "$ne": null }` finds the
    /// counter of that value, not every counter); a value no filter can match exactly (an
    /// array or null where the layout finds counters by it) is [`Error::UnmatchableValue`].
    pub fn filter(&self, key: &CounterKey) -> Result<Document> {
        self.layout.id_filter(key)
    }

    fn corrupt(&self, key: &CounterKey, reason: String) -> Error {
        Error::CorruptCounter {
            counter: key.to_string(),
            collection: self.location(),
            reason,
        }
    }

    /// Reads the counter and checks its fixed fields and its value; `None` if it does not exist.
    async fn read_checked(
        &self,
        key: &CounterKey,
        bounds: Bounds,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<i64>> {
        Ok(self
            .read_stored(key, bounds, session)
            .await?
            .map(|(last, _)| last))
    }

    /// Like `read_checked`, also saying whether the value is stored as a double.
    async fn read_stored(
        &self,
        key: &CounterKey,
        bounds: Bounds,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<(i64, bool)>> {
        let Some(doc) = self
            .collection
            .find_one(self.layout.id_filter(key)?)
            .optional(session, |a, s| a.session(s))
            .await
            .map_err(|e| self.error(e, Access::Read))?
        else {
            return Ok(None);
        };
        if let Some(found) = key.fields_mismatch(&doc) {
            return Err(Error::CounterMismatch {
                counter: key.to_string(),
                collection: self.location(),
                expected: key.fields().to_string(),
                found,
            });
        }
        let last = self
            .layout
            .read_last(&doc)
            .map_err(|reason| self.corrupt(key, reason))?;
        let double = matches!(doc.get(&self.layout.field), Some(Bson::Double(_)));
        if let Some(library) = self.layout.numbers_from_zero() {
            if last == -1 && bounds.start > 0 {
                return Err(Error::InvalidConfig {
                    key: "start",
                    message: format!(
                        "counter `{key}` in `{}` holds -1, where {library} creates its counters: \
                         it numbers from 0; set `start = 0` (the counter is not corrupt)",
                        self.location()
                    ),
                });
            }
        }
        match bounds.corruption(last) {
            Some(reason) => Err(self.corrupt(key, reason)),
            None => Ok(Some((last, double))),
        }
    }

    /// The error of an operation on the counters collection that needed `access`.
    fn error(&self, e: mongodb::error::Error, access: Access) -> Error {
        Error::from_driver_on(e, self.location(), access)
    }

    async fn set_last(
        &self,
        key: &CounterKey,
        last: i64,
        force: bool,
        bounds: Bounds,
        mut session: Option<&mut ClientSession>,
    ) -> Result<()> {
        self.ensure_key_index().await?;
        self.ensure_one_counter(key).await?;
        let off = self.layout.offset();
        let field = &self.layout.field;
        let stored = last + off;
        let mut filter = self.layout.key_filter(key)?;
        if !force {
            filter.insert(field, doc! { "$lte": stored });
        }
        let mut update = doc! { "$set": { field: stored } };
        let on_insert = self.layout.on_insert(key);
        if !on_insert.is_empty() {
            update.insert("$setOnInsert", on_insert);
        }
        let action = self
            .collection
            .update_one(filter, update)
            .upsert(true)
            .optional(session.as_deref_mut(), |a, s| a.session(s));
        match action.await {
            Ok(_) => {
                self.ensure_recorded().await;
                Ok(())
            }
            Err(e) if is_duplicate_key(&e) => {
                match self.read_checked(key, bounds, session).await? {
                    Some(current) if !force && current > last => Err(Error::WouldMoveBackwards {
                        counter: key.to_string(),
                        current,
                        requested: last.saturating_add(1),
                    }),
                    _ => Err(self.error(e, Access::Set)),
                }
            }
            Err(e) => Err(self.error(e, Access::Set)),
        }
    }

    async fn give_back_if_unchanged(
        &self,
        key: &CounterKey,
        expected: i64,
        new: i64,
        session: Option<&mut ClientSession>,
    ) -> Result<bool> {
        let off = self.layout.offset();
        let field = &self.layout.field;
        let mut filter = self.layout.key_filter(key)?;
        filter.insert(field, expected + off);
        let action = self
            .collection
            .update_one(filter, doc! { "$set": { field: new + off } })
            .optional(session, |a, s| a.session(s));
        let result = action.await.map_err(|e| self.error(e, Access::Release))?;
        Ok(result.modified_count == 1)
    }

    /// Writes to the counter document outside any transaction: the server holds the write
    /// until a transaction that holds the document ends. The write only counts the waits
    /// (`waited`); a counter that does not exist yet is not written.
    async fn wait_for_holder(&self, key: &CounterKey) -> Result<()> {
        self.collection
            .update_one(
                self.layout.id_filter(key)?,
                doc! { "$inc": { WAITED_FIELD: 1_i64 } },
            )
            // A signal, not a number: acknowledged by the primary alone.
            .write_concern(WriteConcern::nodes(1))
            .await
            .map_err(|e| self.error(e, Access::Reserve))?;
        Ok(())
    }

    async fn delete_counter(
        &self,
        key: &CounterKey,
        session: Option<&mut ClientSession>,
    ) -> Result<bool> {
        let action = self
            .collection
            .delete_one(self.layout.id_filter(key)?)
            .optional(session, |a, s| a.session(s));
        let result = action.await.map_err(|e| self.error(e, Access::Delete))?;
        Ok(result.deleted_count == 1)
    }
}

impl CounterStore for MongoStore {
    fn reserve<'a>(
        &'a self,
        key: &'a CounterKey,
        n: u64,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Reservation>> {
        Box::pin(self.reserve_values(key, n, bounds, None, session))
    }

    fn reserve_above<'a>(
        &'a self,
        key: &'a CounterKey,
        n: u64,
        bounds: Bounds,
        floor: i64,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Reservation>> {
        Box::pin(self.reserve_values(key, n, bounds, Some(floor), session))
    }

    fn reserve_many<'a>(
        &'a self,
        wanted: &'a [(CounterKey, u64)],
        bounds: Bounds,
    ) -> BoxFuture<'a, Vec<Result<Reservation>>> {
        Box::pin(self.reserve_together(wanted, bounds))
    }

    fn raise<'a>(
        &'a self,
        key: &'a CounterKey,
        last: i64,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Option<i64>>> {
        Box::pin(self.raise_to(key, last, bounds, session))
    }

    fn last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Option<i64>>> {
        Box::pin(self.read_checked(key, bounds, session))
    }

    fn set_last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        last: i64,
        force: bool,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.set_last(key, last, force, bounds, session))
    }

    fn compare_and_set<'a>(
        &'a self,
        key: &'a CounterKey,
        expected: i64,
        new: i64,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(self.give_back_if_unchanged(key, expected, new, session))
    }

    fn delete<'a>(
        &'a self,
        key: &'a CounterKey,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(self.delete_counter(key, session))
    }

    fn wait_for_transactions<'a>(&'a self, key: &'a CounterKey) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.wait_for_holder(key))
    }

    fn delete_periods_before<'a>(
        &'a self,
        name: &'a str,
        period: &'a str,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<u64>> {
        Box::pin(self.past_periods(name, period, crate::store::PastPeriods::Delete, session))
    }

    fn count_periods_before<'a>(
        &'a self,
        name: &'a str,
        period: &'a str,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<u64>> {
        Box::pin(self.past_periods(name, period, crate::store::PastPeriods::Count, session))
    }

    fn location(&self) -> String {
        self.collection.namespace().to_string()
    }

    fn identity(&self) -> String {
        identity(&self.deployment, &self.collection, &self.layout)
    }
}

/// The identity of the counters of `layout` in `collection` of `deployment` (see
/// [`CounterStore::identity`]).
fn identity(
    deployment: &Deployment,
    collection: &Collection<Document>,
    layout: &CounterLayout,
) -> String {
    format!("{}\0{}\0{:?}", deployment, collection.namespace(), layout)
}
