//! Moving a counter up: the one guarded `findAndModify` of a reservation or a raise, retried
//! after a concurrent first upsert of the same counter, and the values it reserved.

use mongodb::action::Action;
use mongodb::bson::Document;
use mongodb::options::ReturnDocument;
use mongodb::ClientSession;
use sequence_rules::limits::MAX_EXACT_DOUBLE;

use super::MongoStore;
use crate::error::driver::{is_duplicate_key, Access};
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey, IdRange};
use crate::observability::{RESERVE, STORE};
use crate::store::guarded_update::{reservation, CounterMove};
use crate::store::Reservation;

/// How often a reservation is retried after a duplicate-key error from a concurrent first
/// upsert of the same counter.
const UPSERT_RETRIES: u32 = 5;

impl MongoStore {
    /// Bounds as this layout can store them without overflowing the counter field.
    pub(super) fn storable(&self, bounds: Bounds) -> Bounds {
        Bounds {
            max: bounds.max.min(i64::MAX - self.layout.offset()),
            ..bounds
        }
    }

    /// The one reservation: a guarded findAndModify, in `session` (and its transaction) if
    /// given, of `n` values after the last issued one, or after `floor` if that is higher.
    pub(super) async fn reserve_values(
        &self,
        key: &CounterKey,
        n: u64,
        bounds: Bounds,
        floor: Option<i64>,
        session: Option<&mut ClientSession>,
    ) -> Result<Reservation> {
        let step = CounterMove { n, floor };
        let (doc, retries) = self
            .advance(key, step, bounds, ReturnDocument::After, session)
            .await?;
        let doc = doc.ok_or_else(|| self.corrupt(key, "the upsert returned no document".into()))?;
        let reserved = self.reserved_range(key, n, &doc)?;
        self.ensure_recorded().await;
        Ok(Reservation {
            retries,
            ..reserved
        })
    }

    /// The `n` values up to the last issued one that `doc` holds, just reserved.
    pub(super) fn reserved_range(
        &self,
        key: &CounterKey,
        n: u64,
        doc: &Document,
    ) -> Result<Reservation> {
        let last = self
            .layout
            .read_last(doc)
            .map_err(|reason| self.corrupt(key, reason))?;
        let range = IdRange::new(last - (n as i64 - 1), last)
            .ok_or_else(|| self.corrupt(key, format!("unexpected value {last}")))?;
        Ok(Reservation { range, retries: 0 })
    }

    /// Moves the counter up to `last` (never down), creating it there if missing; returns the
    /// last issued value before.
    pub(super) async fn raise_to(
        &self,
        key: &CounterKey,
        last: i64,
        bounds: Bounds,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<i64>> {
        let step = CounterMove {
            n: 0,
            floor: Some(last),
        };
        let (before, _) = self
            .advance(key, step, bounds, ReturnDocument::Before, session)
            .await?;
        let Some(before) = before else {
            tracing::info!(target: STORE, counter = %key, to = last, "Counter raised");
            self.ensure_recorded().await;
            return Ok(None);
        };
        let old = self
            .layout
            .read_last(&before)
            .map_err(|reason| self.corrupt(key, reason))?;
        if old < last {
            tracing::info!(target: STORE, counter = %key, from = old, to = last, "Counter raised");
        }
        self.ensure_recorded().await;
        Ok(Some(old))
    }

    /// One guarded findAndModify that moves the counter to `max(last issued, floor) + n`,
    /// retried after a concurrent first upsert; returns the document as `returned` says, and
    /// how many times it was retried.
    async fn advance(
        &self,
        key: &CounterKey,
        step: CounterMove,
        bounds: Bounds,
        returned: ReturnDocument,
        mut session: Option<&mut ClientSession>,
    ) -> Result<(Option<Document>, u32)> {
        self.ensure_key_index().await?;
        self.ensure_one_counter(key).await?;
        let bounds = self.storable(bounds);
        let n = step.n;
        let exhausted = |last: i64| Error::Exhausted {
            counter: key.to_string(),
            requested: n,
            last,
            max: bounds.max,
            limit: bounds.limit().key(),
        };
        let highest_last = match bounds.highest_last_for(n) {
            Some(highest) if step.floor.is_none_or(|floor| floor <= highest) => highest,
            _ => {
                let last = self.read_checked(key, bounds, None).await?;
                let last = last
                    .unwrap_or(bounds.before_start())
                    .max(step.floor.unwrap_or(i64::MIN));
                return Err(exhausted(last));
            }
        };
        let off = self.layout.offset();
        let field = &self.layout.field;
        let (filter, update) = reservation(&self.layout, key, step, bounds, highest_last)?;
        let mut attempt = 0;
        loop {
            let outcome = self
                .collection
                .find_one_and_update(filter.clone(), update.clone())
                .upsert(true)
                .return_document(returned.clone())
                .optional(session.as_deref_mut(), |a, s| a.session(s))
                .await;
            match outcome {
                Ok(doc) => return Ok((doc, attempt)),
                Err(e) if is_duplicate_key(&e) => {
                    // Either a concurrent first upsert won the race, or the filter did not match
                    // an existing document (exhausted or corrupt): find out which.
                    // Inside a transaction the server has aborted it, and the retry fails as
                    // transient: the caller retries the whole transaction.
                    match self.read_stored(key, bounds, None).await? {
                        Some((last, _)) if last > highest_last => return Err(exhausted(last)),
                        Some((last, true)) if last + off > MAX_EXACT_DOUBLE - n as i64 => {
                            return Err(self.corrupt(
                                key,
                                format!(
                                    "the field `{field}` holds {} as a double, which cannot count \
                                     {n} further exactly; store it as a 64-bit integer",
                                    last + off
                                ),
                            ));
                        }
                        _ if attempt < UPSERT_RETRIES => {
                            attempt += 1;
                            tracing::debug!(
                                target: RESERVE,
                                counter = %key,
                                attempt,
                                "Reservation retried"
                            );
                        }
                        _ => return Err(self.error(e, Access::Reserve)),
                    }
                }
                Err(e) => return Err(self.error(e, Access::Reserve)),
            }
        }
    }
}
