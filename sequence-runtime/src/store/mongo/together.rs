//! Reservations of many counters at once (the first values of many scope values): one `update`
//! command moves every counter with the guarded update of a single reservation, each statement
//! also writing which round and statement moved it last and the value it left; one `find`
//! reads those values back, except for the counters the `update` created (its reply lists
//! them): a created counter holds exactly what its statement reserved. A counter whose
//! statement failed, or whose mark another writer overwrote before the read, is reserved again
//! alone; the values of an overtaken statement stay unused, as those of a reservation lost in a
//! crash.

use std::collections::HashSet;

use futures_util::future::join_all;
use futures_util::TryStreamExt;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{ReadPreference, SelectionCriteria};

use super::super::guarded_update::{reservation, CounterMove};
use super::super::layout::CounterLayout;
use super::MongoStore;
use crate::error::driver::Access;
use crate::error::{Error, Result};
use crate::id::bson_integer;
use crate::id::{Bounds, CounterKey};
use crate::observability::RESERVE;
use crate::store::Reservation;

/// The field of a counter document that tells which round of reservations moved it last, by
/// which statement, and to which value.
const ROUND_FIELD: &str = "lastRound";

impl MongoStore {
    /// The next `n` values of each `(key, n)` of `wanted`, one result per counter in order.
    pub(super) async fn reserve_together(
        &self,
        wanted: &[(CounterKey, u64)],
        bounds: Bounds,
    ) -> Vec<Result<Reservation>> {
        let mut results: Vec<Option<Result<Reservation>>> = vec![None; wanted.len()];
        if wanted.len() > 1 {
            if let Err(why) = self.move_together(wanted, bounds, &mut results).await {
                tracing::debug!(target: RESERVE, why, "Counters not reserved together");
            }
        }
        let alone = results.iter().enumerate().filter(|(_, r)| r.is_none());
        let alone: Vec<usize> = alone.map(|(i, _)| i).collect();
        if !alone.is_empty() {
            tracing::debug!(target: RESERVE, counters = alone.len(), "Counters reserved alone");
        }
        let reserved = join_all(alone.iter().map(|&i| {
            let (key, n) = &wanted[i];
            self.reserve_values(key, *n, bounds, None, None)
        }));
        for (i, r) in alone.into_iter().zip(reserved.await) {
            results[i] = Some(r);
        }
        results.into_iter().flatten().collect()
    }

    /// Moves the counters of `wanted` in one `update` and fills `results` with the reservations
    /// read back; leaves `None` where a counter is to be reserved alone, and says why none
    /// was read back if so.
    async fn move_together(
        &self,
        wanted: &[(CounterKey, u64)],
        bounds: Bounds,
        results: &mut [Option<Result<Reservation>>],
    ) -> std::result::Result<(), String> {
        let failure = |e: Error| e.to_string();
        let mut round = self.round(wanted, bounds).await.map_err(failure)?;
        if round.sent.is_empty() {
            return Ok(());
        }
        let mut command = round.command(self.collection.name());
        if let Some(concern) = self.collection.write_concern() {
            let concern = mongodb::bson::to_bson(concern).map_err(|e| e.to_string())?;
            command.insert("writeConcern", concern);
        }
        let reply = self
            .database()
            .run_command(command)
            .await
            .map_err(|e| failure(self.error(e, Access::Reserve)))?;
        // Moved, but not as durably as asked: alone, each gets its answer.
        if let Ok(concern) = reply.get_document("writeConcernError") {
            return Err(format!("write concern failed: {concern}"));
        }
        // A statement that failed (a concurrent first upsert, a counter without room or
        // corrupt) moved nothing: its counter is reserved alone.
        let failed = statements_in(&reply, "writeErrors");
        let created = statements_in(&reply, "upserted");
        for (i, reserved) in self.created(&round, &created, wanted, bounds) {
            results[i] = Some(reserved);
        }
        let Some(filter) = round.marks(&self.layout, wanted, &failed, &created) else {
            self.ensure_recorded().await;
            return Ok(());
        };
        let mut found = self
            .collection
            .find(filter)
            .selection_criteria(SelectionCriteria::ReadPreference(ReadPreference::Primary))
            .await
            .map_err(|e| failure(self.error(e, Access::Read)))?;
        while let Some(doc) = found
            .try_next()
            .await
            .map_err(|e| failure(self.error(e, Access::Read)))?
        {
            if let Some((i, reserved)) = self.read_mark(wanted, &doc) {
                results[i] = Some(reserved);
            }
        }
        self.ensure_recorded().await;
        Ok(())
    }

    /// The statements of a round moving the counters of `wanted`: every counter with room for
    /// its values whose layout checks (the others are not sent).
    async fn round(&self, wanted: &[(CounterKey, u64)], bounds: Bounds) -> Result<Round> {
        self.ensure_key_index().await?;
        let storable = self.storable(bounds);
        let id = ObjectId::new();
        let field = &self.layout.field;
        let checked = join_all(wanted.iter().map(|(key, _)| self.ensure_one_counter(key))).await;
        let mut round = Round {
            id,
            updates: Vec::with_capacity(wanted.len()),
            sent: Vec::with_capacity(wanted.len()),
        };
        for (i, ((key, n), checked)) in wanted.iter().zip(checked).enumerate() {
            // Without room (exhausted) or a layout check that fails: alone, which says why.
            let Some(highest) = storable.highest_last_for(*n) else {
                continue;
            };
            if checked.is_err() {
                continue;
            }
            let step = CounterMove { n: *n, floor: None };
            let (q, mut u) = reservation(&self.layout, key, step, storable, highest);
            let mark = doc! { "round": id, "i": i as i64, "last": format!("${field}") };
            u.push(doc! { "$set": { ROUND_FIELD: mark } });
            round.updates.push(doc! { "q": q, "u": u, "upsert": true });
            round.sent.push(i);
        }
        Ok(round)
    }

    /// The reservations of the counters the round's `update` created (its statements
    /// `created`): a new counter holds the values from the start, as the statement wrote them,
    /// so it is not read back.
    fn created(
        &self,
        round: &Round,
        created: &HashSet<usize>,
        wanted: &[(CounterKey, u64)],
        bounds: Bounds,
    ) -> Vec<(usize, Result<Reservation>)> {
        let before_start = self.storable(bounds).before_start() + self.layout.offset();
        let field = &self.layout.field;
        (created.iter())
            .filter_map(|&statement| round.sent.get(statement).copied())
            .map(|i| {
                let (key, n) = &wanted[i];
                let left = doc! { field: Bson::Int64(before_start + *n as i64) };
                (i, self.reserved_range(key, *n, &left))
            })
            .collect()
    }

    /// The reservation a counter document `doc` read back holds, with its place in `wanted`.
    fn read_mark(
        &self,
        wanted: &[(CounterKey, u64)],
        doc: &Document,
    ) -> Option<(usize, Result<Reservation>)> {
        let mark = doc.get_document(ROUND_FIELD).ok()?;
        let i = usize::try_from(bson_integer(mark.get("i")?)?).ok()?;
        let (key, n) = wanted.get(i)?;
        let field = &self.layout.field;
        let left = doc! { field: mark.get("last").cloned().unwrap_or(Bson::Null) };
        Some((i, self.reserved_range(key, *n, &left)))
    }

    fn database(&self) -> mongodb::Database {
        let db = self.collection.namespace().db;
        self.collection.client().database(&db)
    }
}

/// The statements of one round of reservations of several counters, marked with its `id`.
struct Round {
    id: ObjectId,
    updates: Vec<Document>,
    /// The place in `wanted` of each statement's counter.
    sent: Vec<usize>,
}

impl Round {
    /// The `update` command of the round's statements on `collection` (which it takes).
    fn command(&mut self, collection: &str) -> Document {
        let updates = std::mem::take(&mut self.updates);
        doc! { "update": collection, "updates": updates, "ordered": false }
    }

    /// The filter of the counters that statements neither `failed` nor `created` moved, as this
    /// round left them; `None` if there are none.
    fn marks(
        &self,
        layout: &CounterLayout,
        wanted: &[(CounterKey, u64)],
        failed: &HashSet<usize>,
        created: &HashSet<usize>,
    ) -> Option<Document> {
        let moved: Vec<Document> = (self.sent.iter().enumerate())
            .filter(|(statement, _)| !failed.contains(statement) && !created.contains(statement))
            .map(|(_, &i)| layout.id_filter(&wanted[i].0))
            .collect();
        (!moved.is_empty()).then(|| doc! { "$or": moved, format!("{ROUND_FIELD}.round"): self.id })
    }
}

/// The statements of an `update` command's `reply` listed in its array `list` (`writeErrors`:
/// those that failed, `upserted`: those that created their document), by index.
fn statements_in(reply: &Document, list: &str) -> HashSet<usize> {
    let index = |e: &Bson| bson_integer(e.as_document()?.get("index")?);
    let Ok(errors) = reply.get_array(list) else {
        return HashSet::new();
    };
    (errors.iter().filter_map(index))
        .filter_map(|i| usize::try_from(i).ok())
        .collect()
}
