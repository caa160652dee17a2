//! Reservations of many counters at once (the first values and refills of many scope values).
//!
//! A counter is reserved in an `update` of all such counters with one statement each, which
//! finds its counter by key (directly by `_id` in this crate's layout), checks its room in the
//! update (a counter without room, or corrupt, is left as it was) and writes which round and
//! statement moved it last and the value it left; one `find` then reads those values back.
//!
//! In the layouts that find counters by other fields the statements upsert, and a counter the
//! `update` created (its reply lists them) holds exactly what its statement reserved, so it is
//! not read back. In the layouts that find counters by `_id` they do not upsert: a counter
//! expected missing (not reserved from lately by this store, while those it did not know were
//! mostly missing last time, see [`known_counters`](super::known_counters)) is inserted
//! instead, holding its values, in an `insert` sent beside the `update`; then a counter the
//! insert met stored is updated, one the update did not find is inserted, again side by side.
//!
//! A counter left after that (corrupt, without room, overtaken by another writer before the
//! read-back, met by a concurrent first insert) is reserved alone, which says why if it cannot
//! give values. The values of an overtaken statement stay unused, as those of a reservation
//! lost in a crash.

use std::collections::HashSet;

use futures_util::future::join_all;
use futures_util::TryStreamExt;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{ReadPreference, SelectionCriteria};

use super::super::guarded_update::marked_reservation;
use super::MongoStore;
use crate::error::driver::{Access, DUPLICATE_KEY_CODES};
use crate::error::Result;
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

    /// Reserves the counters of `wanted` in a round and fills `results` with what it reserved;
    /// leaves `None` where a counter is to be reserved alone, and says why if a step failed.
    async fn move_together(
        &self,
        wanted: &[(CounterKey, u64)],
        bounds: Bounds,
        results: &mut [Option<Result<Reservation>>],
    ) -> std::result::Result<(), String> {
        let round = self
            .round(wanted, bounds)
            .await
            .map_err(|e| e.to_string())?;
        let by_id = self.layout.finds_by_id();
        let unknown: HashSet<usize> = (round.sent.iter().copied())
            .filter(|&i| by_id && !self.known.knows(&wanted[i].0))
            .collect();
        let expect_missing = self.known.unknown_missing();
        let (insert, update): (Vec<usize>, Vec<usize>) =
            (round.sent.iter()).partition(|&i| expect_missing && unknown.contains(i));
        // Counters expected missing are inserted, the others updated; those that turn out
        // stored, or missing, take the other way; the rest are reserved alone.
        let (inserted, updated) = tokio::join!(
            self.insert_counters(&round, &insert),
            self.update_counters(&round, &update),
        );
        let mut created = 0;
        let mut failure = None;
        let mut step = |outcome: Moves, inserted: bool| match outcome {
            Ok(moved) => {
                for (i, reserved) in moved.reserved {
                    created += usize::from(inserted && unknown.contains(&i) && reserved.is_ok());
                    results[i] = Some(reserved);
                }
                moved.other_way
            }
            Err(why) => {
                failure = Some(why);
                Vec::new()
            }
        };
        let (stored, missing) = (step(inserted, true), step(updated, false));
        let missing = if by_id { missing } else { Vec::new() };
        let (updated, inserted) = tokio::join!(
            self.update_counters(&round, &stored),
            self.insert_counters(&round, &missing),
        );
        step(updated, false);
        step(inserted, true);
        if by_id {
            self.known.found(unknown.len(), created);
            let reserved = results.iter().zip(wanted);
            let reserved = reserved.filter(|(r, _)| r.as_ref().is_some_and(|r| r.is_ok()));
            self.known.remember(reserved.map(|(_, (key, _))| key));
        }
        self.ensure_recorded().await;
        failure.map_or(Ok(()), Err)
    }

    /// The round of the counters of `wanted`: every counter with room for its values whose
    /// layout checks (the others are reserved alone, which says why).
    async fn round<'w>(
        &self,
        wanted: &'w [(CounterKey, u64)],
        bounds: Bounds,
    ) -> Result<ReserveRound<'w>> {
        self.ensure_key_index().await?;
        let storable = self.storable(bounds);
        let checked = join_all(wanted.iter().map(|(key, _)| self.ensure_one_counter(key))).await;
        let sent = (wanted.iter().zip(checked).enumerate())
            .filter(|(_, ((key, n), checked))| {
                // A key the layout cannot find is reserved alone, which says why.
                storable.highest_last_for(*n).is_some()
                    && checked.is_ok()
                    && self.layout.id_filter(key).is_ok()
            })
            .map(|(i, _)| i)
            .collect();
        Ok(ReserveRound {
            wanted,
            id: ObjectId::new(),
            storable,
            sent,
        })
    }

    /// Inserts the counters `these` of `wanted` as new documents holding their values; those
    /// that exist already are to be updated.
    async fn insert_counters(&self, round: &ReserveRound<'_>, these: &[usize]) -> Moves {
        let wanted = round.wanted;
        if these.is_empty() {
            return Ok(Moved::default());
        }
        let start = self.layout.stored_before_start(round.storable);
        let documents: Vec<Document> = (these.iter())
            .map(|&i| {
                let (key, n) = &wanted[i];
                let last = Bson::Int64(start + *n as i64);
                let mut counter = self.layout.key_filter(key)?;
                counter.insert(&self.layout.field, last.clone());
                counter.extend(self.layout.on_insert(key));
                counter.insert(ROUND_FIELD, round.mark(i, last));
                Ok(counter)
            })
            .collect::<Result<_>>()
            .map_err(|e| e.to_string())?;
        let collection = self.collection.name();
        let reply = self
            .run(doc! { "insert": collection, "documents": documents, "ordered": false })
            .await?;
        let failed = statements_in(&reply, "writeErrors");
        let mut moved = Moved {
            other_way: (failed.iter())
                .filter(|(_, code)| DUPLICATE_KEY_CODES.contains(code))
                .filter_map(|&(statement, _)| these.get(statement).copied())
                .collect(),
            reserved: Vec::with_capacity(these.len()),
        };
        let failed: HashSet<usize> = failed.into_iter().map(|(s, _)| s).collect();
        for (_, &i) in (these.iter().enumerate()).filter(|(s, _)| !failed.contains(s)) {
            moved.reserved.push((i, self.fresh(round, &wanted[i])));
        }
        Ok(moved)
    }

    /// Moves the counters `these` of `wanted` in one `update`; those it did not find (by
    /// `_id`) or did not move are to be inserted (their statement did not fail).
    async fn update_counters(&self, round: &ReserveRound<'_>, these: &[usize]) -> Moves {
        let wanted = round.wanted;
        if these.is_empty() {
            return Ok(Moved::default());
        }
        let upsert = !self.layout.finds_by_id();
        let updates: Vec<Document> = (these.iter())
            .map(|&i| {
                let (key, n) = &wanted[i];
                let highest = round.storable.highest_last_for(*n).unwrap_or(i64::MIN);
                let mark = (ROUND_FIELD, round.mark(i, "$$to".into()));
                let (q, u) =
                    marked_reservation(&self.layout, key, *n, round.storable, highest, mark)?;
                Ok(doc! { "q": q, "u": u, "upsert": upsert })
            })
            .collect::<Result<_>>()
            .map_err(|e| e.to_string())?;
        let collection = self.collection.name();
        let reply = self
            .run(doc! { "update": collection, "updates": updates, "ordered": false })
            .await?;
        // A statement that failed (a concurrent first upsert, a counter whose fixed fields
        // differ) moved nothing: its counter is reserved alone.
        let failed: HashSet<usize> = (statements_in(&reply, "writeErrors").into_iter())
            .map(|(statement, _)| statement)
            .collect();
        let created: HashSet<usize> = (statements_in(&reply, "upserted").into_iter())
            .map(|(statement, _)| statement)
            .collect();
        let mut moved = Moved::default();
        let mut read = Vec::with_capacity(these.len());
        for (statement, &i) in these.iter().enumerate() {
            if created.contains(&statement) {
                moved.reserved.push((i, self.fresh(round, &wanted[i])));
            } else if !failed.contains(&statement) {
                read.push(i);
            }
        }
        let matched = reply.get("n").and_then(bson_integer).unwrap_or(i64::MAX);
        if matched > created.len() as i64 && !read.is_empty() {
            moved.reserved.extend(self.read_marks(round, &read).await?);
        }
        let read_back: HashSet<usize> = moved.reserved.iter().map(|(i, _)| *i).collect();
        moved.other_way = read
            .into_iter()
            .filter(|i| !read_back.contains(i))
            .collect();
        Ok(moved)
    }

    /// The reservations of the counters `these` of `wanted` that `round` moved, read back.
    async fn read_marks(
        &self,
        round: &ReserveRound<'_>,
        these: &[usize],
    ) -> std::result::Result<Vec<(usize, Result<Reservation>)>, String> {
        let wanted = round.wanted;
        let failure = |e| self.error(e, Access::Read).to_string();
        let moved: Vec<Document> = (these.iter())
            .map(|&i| self.layout.id_filter(&wanted[i].0))
            .collect::<Result<_>>()
            .map_err(|e| e.to_string())?;
        let filter = doc! { "$or": moved, format!("{ROUND_FIELD}.round"): round.id };
        let mut found = self
            .collection
            .find(filter)
            .selection_criteria(SelectionCriteria::ReadPreference(ReadPreference::Primary))
            .await
            .map_err(failure)?;
        let mut reserved = Vec::with_capacity(these.len());
        while let Some(doc) = found.try_next().await.map_err(failure)? {
            reserved.extend(self.read_mark(wanted, &doc));
        }
        Ok(reserved)
    }

    /// Runs a write `command` on the counters' database with their write concern; a write
    /// concern that failed fails it (done, but not as durably as asked: alone, each counter
    /// gets its answer).
    async fn run(&self, mut command: Document) -> std::result::Result<Document, String> {
        if let Some(concern) = self.collection.write_concern() {
            let concern = mongodb::bson::to_bson(concern).map_err(|e| e.to_string())?;
            command.insert("writeConcern", concern);
        }
        let db = self.collection.namespace().db;
        let reply = (self.collection.client().database(&db))
            .run_command(command)
            .await
            .map_err(|e| self.error(e, Access::Reserve).to_string())?;
        if let Ok(concern) = reply.get_document("writeConcernError") {
            return Err(format!("write concern failed: {concern}"));
        }
        Ok(reply)
    }

    /// The reservation of `(key, n)` in a counter the round created: it holds the values from
    /// the start, as its statement wrote them.
    fn fresh(&self, round: &ReserveRound<'_>, (key, n): &(CounterKey, u64)) -> Result<Reservation> {
        let start = self.layout.stored_before_start(round.storable);
        let left = doc! { &self.layout.field: Bson::Int64(start + *n as i64) };
        self.reserved_range(key, *n, &left)
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
}

/// What a step of a round did, or why it failed.
type Moves = std::result::Result<Moved, String>;

/// What a step of a round reserved, and the counters it leaves to the other way (inserted
/// when an update did not find them, updated when an insert met them stored).
#[derive(Default)]
struct Moved {
    reserved: Vec<(usize, Result<Reservation>)>,
    other_way: Vec<usize>,
}

/// One round of reservations of several counters.
struct ReserveRound<'w> {
    /// The counters asked for, with how many values each.
    wanted: &'w [(CounterKey, u64)],
    /// What marks the counters the round moved.
    id: ObjectId,
    /// The bounds of the values the counters store.
    storable: Bounds,
    /// The places in `wanted` of the counters the round reserves.
    sent: Vec<usize>,
}

impl ReserveRound<'_> {
    /// The mark of the round's reservation for `wanted[i]`, which left the counter at `last`.
    fn mark(&self, i: usize, last: Bson) -> Document {
        doc! { "round": self.id, "i": i as i64, "last": last }
    }
}

/// The statements of a write command's `reply` listed in its array `list` (`writeErrors`:
/// those that failed, `upserted`: those that created their document), by index, with their
/// error code (0 if none).
fn statements_in(reply: &Document, list: &str) -> Vec<(usize, i32)> {
    let Ok(entries) = reply.get_array(list) else {
        return Vec::new();
    };
    (entries.iter().filter_map(Bson::as_document))
        .filter_map(|e| {
            let index = usize::try_from(bson_integer(e.get("index")?)?).ok()?;
            let code = e.get("code").and_then(bson_integer).unwrap_or(0);
            Some((index, i32::try_from(code).unwrap_or(0)))
        })
        .collect()
}
