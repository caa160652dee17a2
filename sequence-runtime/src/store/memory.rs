//! Counters in process memory, for unit tests of code that allocates IDs.

use std::collections::HashMap;
use std::sync::Mutex;

use mongodb::bson::Document;
use mongodb::ClientSession;

use super::counter_store::{BoxFuture, CounterStore, PastPeriods, Reservation};
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey};

/// Counters kept in memory, with the same semantics as [`MongoStore`](crate::store::MongoStore):
/// contiguous ranges, `start`, `max`, [`Error::Exhausted`] with nothing written, refusal to move
/// backwards. Meant for the unit tests of code that takes IDs from a
/// [`Sequence`](crate::Sequence); it shares nothing between processes and is never a substitute
/// for tests against a real server.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use sequence_runtime::{Sequence, SequenceOptions};
/// let seq = Sequence::in_memory(SequenceOptions::builder("invoice").start(1000).build()).unwrap();
/// assert_eq!(seq.next().await.unwrap(), 1000);
/// assert_eq!(seq.next().await.unwrap(), 1001);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    /// Last issued value by key (canonical form), with the key itself.
    counters: Mutex<HashMap<String, (CounterKey, i64)>>,
    /// The fixed fields of each counter (see [`CounterKey::with_fields`]).
    fields: Mutex<HashMap<String, Document>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts or deletes the counters of `name` of the periods before `period`.
    fn past_periods<'a>(
        &self,
        name: &str,
        period: &str,
        what: PastPeriods,
        session: Option<&mut ClientSession>,
    ) -> BoxFuture<'a, Result<u64>> {
        if session.is_some() {
            return no_session();
        }
        let n = self.with(|m| match what {
            PastPeriods::Count => (m.values())
                .filter(|(key, _)| before_period(key, name, period))
                .count(),
            PastPeriods::Delete => {
                let before = m.len();
                m.retain(|_, (key, _)| !before_period(key, name, period));
                before - m.len()
            }
        });
        Box::pin(async move { Ok(n as u64) })
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, (CounterKey, i64)>) -> T) -> T {
        let mut map = self
            .counters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut map)
    }

    fn checked(&self, key: &CounterKey, last: i64, bounds: Bounds) -> Result<i64> {
        match bounds.corruption(last) {
            Some(reason) => Err(Error::CorruptCounter {
                counter: key.to_string(),
                collection: self.location(),
                reason,
            }),
            None => Ok(last),
        }
    }

    /// Checks `key`'s fixed fields against those the counter was created with, recording them
    /// if `create` and the counter has none yet.
    fn check_fields(&self, key: &CounterKey, create: bool) -> Result<()> {
        let mut fields = self
            .fields
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match fields.get(key.canonical()) {
            Some(stored) => match key.fields_mismatch(stored) {
                Some(found) => Err(Error::CounterMismatch {
                    counter: key.to_string(),
                    collection: self.location(),
                    expected: key.fields().to_string(),
                    found,
                }),
                None => Ok(()),
            },
            None => {
                if create {
                    fields.insert(key.canonical().to_owned(), key.fields().clone());
                }
                Ok(())
            }
        }
    }

    /// Reserves `n` values after the last issued one, or after `floor` if that is higher.
    fn take(
        &self,
        key: &CounterKey,
        n: u64,
        bounds: Bounds,
        floor: Option<i64>,
    ) -> Result<Reservation> {
        self.with(|m| {
            self.check_fields(key, false)?;
            let last = match m.get(key.canonical()) {
                Some(&(_, last)) => self.checked(key, last, bounds)?,
                None => bounds.before_start(),
            };
            let from = floor.map_or(last, |floor| last.max(floor));
            let range = bounds.range_after(&key.to_string(), from, n)?;
            m.insert(key.canonical().to_owned(), (key.clone(), range.last()));
            self.check_fields(key, true)?;
            Ok(Reservation::new(range, 0))
        })
    }
}

impl CounterStore for MemoryStore {
    fn reserve<'a>(
        &'a self,
        key: &'a CounterKey,
        n: u64,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Reservation>> {
        if session.is_some() {
            return no_transaction();
        }
        let result = self.take(key, n, bounds, None);
        Box::pin(async move { result })
    }

    fn reserve_above<'a>(
        &'a self,
        key: &'a CounterKey,
        n: u64,
        bounds: Bounds,
        floor: i64,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Reservation>> {
        if session.is_some() {
            return no_transaction();
        }
        let result = self.take(key, n, bounds, Some(floor));
        Box::pin(async move { result })
    }

    fn raise<'a>(
        &'a self,
        key: &'a CounterKey,
        last: i64,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Option<i64>>> {
        if session.is_some() {
            return no_session();
        }
        let result = self.with(|m| {
            self.check_fields(key, false)?;
            let before = match m.get(key.canonical()) {
                Some(&(_, current)) => Some(self.checked(key, current, bounds)?),
                None => None,
            };
            if last > bounds.max {
                return Err(Error::Exhausted {
                    counter: key.to_string(),
                    requested: 0,
                    last,
                    max: bounds.max,
                    limit: bounds.limit().key(),
                });
            }
            if before.is_none_or(|current| current < last) {
                m.insert(key.canonical().to_owned(), (key.clone(), last));
                self.check_fields(key, true)?;
            }
            Ok(before)
        });
        Box::pin(async move { result })
    }

    fn last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Option<i64>>> {
        if session.is_some() {
            return no_session();
        }
        let result = self.with(|m| m.get(key.canonical()).map(|e| e.1));
        let result = result
            .map(|v| {
                self.check_fields(key, false)?;
                self.checked(key, v, bounds)
            })
            .transpose();
        Box::pin(async move { result })
    }

    fn set_last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        last: i64,
        force: bool,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<()>> {
        if session.is_some() {
            return no_session();
        }
        let result = self.with(|m| {
            self.check_fields(key, false)?;
            if !force {
                if let Some(&(_, current)) = m.get(key.canonical()) {
                    let current = self.checked(key, current, bounds)?;
                    if current > last {
                        return Err(Error::WouldMoveBackwards {
                            counter: key.to_string(),
                            current,
                            requested: last.saturating_add(1),
                        });
                    }
                }
            }
            m.insert(key.canonical().to_owned(), (key.clone(), last));
            self.check_fields(key, true)
        });
        Box::pin(async move { result })
    }

    fn compare_and_set<'a>(
        &'a self,
        key: &'a CounterKey,
        expected: i64,
        new: i64,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<bool>> {
        if session.is_some() {
            return no_session();
        }
        let swapped = self.with(|m| match m.get_mut(key.canonical()) {
            Some((_, v)) if *v == expected && self.check_fields(key, false).is_ok() => {
                *v = new;
                true
            }
            _ => false,
        });
        Box::pin(async move { Ok(swapped) })
    }

    fn delete<'a>(
        &'a self,
        key: &'a CounterKey,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<bool>> {
        if session.is_some() {
            return no_session();
        }
        let existed = self.with(|m| {
            let mut fields = self
                .fields
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            fields.remove(key.canonical());
            m.remove(key.canonical()).is_some()
        });
        Box::pin(async move { Ok(existed) })
    }

    fn delete_periods_before<'a>(
        &'a self,
        name: &'a str,
        period: &'a str,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<u64>> {
        self.past_periods(name, period, PastPeriods::Delete, session)
    }

    fn count_periods_before<'a>(
        &'a self,
        name: &'a str,
        period: &'a str,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<u64>> {
        self.past_periods(name, period, PastPeriods::Count, session)
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }
}

/// The refusal of a session: memory takes no part in a MongoDB transaction.
fn no_session<'a, T: Send + 'a>() -> BoxFuture<'a, Result<T>> {
    Box::pin(async {
        Err(Error::StoreUnsupported {
            store: "memory".to_owned(),
            operation: "take part in a session (its counters are not in MongoDB)",
        })
    })
}

/// The refusal of a reservation in a session: memory takes no part in a MongoDB transaction.
fn no_transaction<'a, T: Send + 'a>() -> BoxFuture<'a, Result<T>> {
    Box::pin(async {
        Err(Error::TransactionsUnsupported {
            needed_by: "a counter in a transaction",
            detail: "the counter store `memory` cannot join a MongoDB transaction".to_owned(),
        })
    })
}

/// Whether `key` is a counter of sequence `name` in a period before `period`.
fn before_period(key: &CounterKey, name: &str, period: &str) -> bool {
    key.name() == Some(name) && key.period().is_some_and(|p| p < period)
}
