//! Reservations of many counters at once (the first values of many scope values): one `update`
//! command moves every counter with the guarded update of a single reservation, each statement
//! also writing which round and statement moved it last and the value it left; one `find`
//! reads those values back. A counter whose statement failed, or whose mark another writer
//! overwrote before the read, is reserved again alone; the values of an overtaken statement stay
//! unused, as those of a reservation lost in a crash.

use std::collections::HashSet;

use futures_util::future::join_all;
use futures_util::TryStreamExt;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{ReadPreference, SelectionCriteria};

use super::super::guarded_update::{reservation, CounterMove};
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
        self.ensure_key_index().await.map_err(failure)?;
        let storable = self.storable(bounds);
        let round = ObjectId::new();
        let field = &self.layout.field;
        let checked = join_all(wanted.iter().map(|(key, _)| self.ensure_one_counter(key))).await;
        let mut updates = Vec::with_capacity(wanted.len());
        let mut sent = Vec::with_capacity(wanted.len());
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
            let mark = doc! { "round": round, "i": i as i64, "last": format!("${field}") };
            u.push(doc! { "$set": { ROUND_FIELD: mark } });
            updates.push(doc! { "q": q, "u": u, "upsert": true });
            sent.push(i);
        }
        if sent.is_empty() {
            return Ok(());
        }
        let mut command =
            doc! { "update": self.collection.name(), "updates": updates, "ordered": false };
        if let Some(concern) = self.collection.write_concern() {
            let concern = mongodb::bson::to_bson(concern).map_err(|e| e.to_string())?;
            command.insert("writeConcern", concern);
        }
        let db = self
            .collection
            .client()
            .database(self.collection.namespace().db.as_str());
        let reply = db
            .run_command(command)
            .await
            .map_err(|e| failure(self.error(e, Access::Reserve)))?;
        // Moved, but not as durably as asked: alone, each gets its answer.
        if let Ok(concern) = reply.get_document("writeConcernError") {
            return Err(format!("write concern failed: {concern}"));
        }
        // A statement that failed (a concurrent first upsert, a counter without room or
        // corrupt) moved nothing: its counter is reserved alone.
        let failed: HashSet<usize> = reply
            .get_array("writeErrors")
            .map(|errors| {
                let index = |e: &Bson| bson_integer(e.as_document()?.get("index")?);
                errors
                    .iter()
                    .filter_map(index)
                    .filter_map(|i| usize::try_from(i).ok())
            })
            .into_iter()
            .flatten()
            .collect();
        let moved: Vec<Document> = sent
            .iter()
            .enumerate()
            .filter(|(statement, _)| !failed.contains(statement))
            .map(|(_, &i)| self.layout.id_filter(&wanted[i].0))
            .collect();
        if moved.is_empty() {
            return Ok(());
        }
        let filter = doc! { "$or": moved, format!("{ROUND_FIELD}.round"): round };
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
            let Ok(mark) = doc.get_document(ROUND_FIELD) else {
                continue;
            };
            let i = mark.get("i").and_then(bson_integer);
            let Some(i) = i.and_then(|i| usize::try_from(i).ok()) else {
                continue;
            };
            let Some((key, n)) = wanted.get(i) else {
                continue;
            };
            let left = doc! { field: mark.get("last").cloned().unwrap_or(Bson::Null) };
            results[i] = Some(self.reserved_range(key, *n, &left));
        }
        self.ensure_recorded().await;
        Ok(())
    }
}
