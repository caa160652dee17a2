//! The trait of the stores, and what one reservation returns.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use mongodb::ClientSession;

use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey, IdRange};
use crate::observability::Reserved;

/// The outcome of one reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reservation {
    /// The reserved values.
    pub range: IdRange,
    /// How many times the reservation was retried after a concurrent first upsert.
    pub retries: u32,
}

impl Reservation {
    /// A reservation of `range` after `retries` retries.
    pub fn new(range: IdRange, retries: u32) -> Self {
        Reservation { range, retries }
    }
}

impl Reserved for Reservation {
    fn range(&self) -> IdRange {
        self.range
    }

    fn retries(&self) -> u32 {
        self.retries
    }
}

/// A boxed, sendable future, as returned by [`CounterStore`] methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where counters live. [`MongoStore`](crate::store::MongoStore) keeps them in a MongoDB collection;
/// [`MemoryStore`](crate::store::MemoryStore) keeps them in process memory for unit tests, with the same
/// semantics (ranges, `start`, `max`, exhaustion, corrupt values).
///
/// Every method that talks to the store takes the caller's `session` last: given, the
/// operation runs in it, inside its transaction if one is started, so that it commits or aborts
/// with it. A store that cannot take part in a MongoDB session refuses one (`MemoryStore`
/// with [`Error::TransactionsUnsupported`](crate::Error::TransactionsUnsupported) for a
/// reservation, [`Error::StoreUnsupported`] for the rest).
pub trait CounterStore: Debug + Send + Sync + 'static {
    /// Atomically reserves the next `n` values (`n >= 1`) of `key`, creating the counter at
    /// `bounds.start` if it does not exist. Fails with
    /// [`Error::Exhausted`](crate::Error::Exhausted) when fewer than `n` values are left, and
    /// with [`Error::CorruptCounter`](crate::Error::CorruptCounter) when the stored value is
    /// unusable; in both cases nothing is written.
    fn reserve<'a>(
        &'a self,
        key: &'a CounterKey,
        n: u64,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Reservation>>;

    /// Reserves values of several counters at once, outside any session: the next `n` values of
    /// each `(key, n)` of `wanted` (keys distinct, `n >= 1`), each counter created at
    /// `bounds.start` if it does not exist. One result per counter, in the order of `wanted`,
    /// each as [`reserve`](Self::reserve) would give it. This is how the first values of many
    /// scope values are taken together.
    ///
    /// The provided implementation reserves them one after another. `MongoStore` moves them
    /// all with one `update` command and reads the values it left with one `find`, and in its
    /// own layout inserts the counters it expects missing beside that `update` (a counter met
    /// stored is updated after, one not found inserted after); a counter whose reservation
    /// another writer overtook before the read is reserved again alone (the values of the
    /// first reservation stay unused).
    fn reserve_many<'a>(
        &'a self,
        wanted: &'a [(CounterKey, u64)],
        bounds: Bounds,
    ) -> BoxFuture<'a, Vec<Result<Reservation>>> {
        Box::pin(async move {
            let mut results = Vec::with_capacity(wanted.len());
            for (key, n) in wanted {
                results.push(self.reserve(key, *n, bounds, None).await);
            }
            results
        })
    }

    /// Like [`reserve`](Self::reserve), above `floor` at least: moves the last issued value up
    /// to `floor` if it is below (never down), then reserves the next `n` values. This is how a
    /// counter skips past IDs that are already stored (imported documents, another writer).
    /// Fails with [`Error::Exhausted`](crate::Error::Exhausted) when fewer than `n` values are
    /// left above `floor`.
    ///
    /// The provided implementation [`raise`](Self::raise)s, then reserves: two steps, each
    /// atomic, so a concurrent reservation may come in between (which only moves the counter
    /// further up). `MongoStore` and `MemoryStore` do both in one.
    fn reserve_above<'a>(
        &'a self,
        key: &'a CounterKey,
        n: u64,
        bounds: Bounds,
        floor: i64,
        mut session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Reservation>> {
        Box::pin(async move {
            self.raise(key, floor, bounds, session.as_deref_mut())
                .await?;
            self.reserve(key, n, bounds, session).await
        })
    }

    /// Moves the last issued value of `key` up to `last` if it is below, creating the counter
    /// there if it does not exist; never moves it down, so a concurrent move further up is
    /// kept. Returns the last issued value before (`None` if the counter did not exist).
    ///
    /// The provided implementation reads the counter and moves it with
    /// [`compare_and_set`](Self::compare_and_set) (or creates it with
    /// [`set_last_issued`](Self::set_last_issued)), again until one of them holds.
    fn raise<'a>(
        &'a self,
        key: &'a CounterKey,
        last: i64,
        bounds: Bounds,
        mut session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Option<i64>>> {
        Box::pin(async move {
            loop {
                match self
                    .last_issued(key, bounds, session.as_deref_mut())
                    .await?
                {
                    Some(current) if current >= last => return Ok(Some(current)),
                    Some(current) => {
                        let set = self.compare_and_set(key, current, last, session.as_deref_mut());
                        if set.await? {
                            return Ok(Some(current));
                        }
                    }
                    None => {
                        let created =
                            self.set_last_issued(key, last, false, bounds, session.as_deref_mut());
                        match created.await {
                            Ok(()) => return Ok(None),
                            // Created meanwhile, further up: read it again.
                            Err(Error::WouldMoveBackwards { .. }) => {}
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
        })
    }

    /// Waits until no transaction of another session holds the counter `key` (one that
    /// updated it and has not committed or aborted yet), so that a transaction that met it
    /// starts again when it can go through instead of colliding again. The provided
    /// implementation returns at once: a store without transactions has none to wait for.
    fn wait_for_transactions<'a>(&'a self, key: &'a CounterKey) -> BoxFuture<'a, Result<()>> {
        let _ = key;
        Box::pin(async { Ok(()) })
    }

    /// The last value issued, or `None` if the counter does not exist; read in `session` if
    /// given.
    fn last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Option<i64>>>;

    /// Sets the last issued value, in `session` if given. Unless `force`, refuses with
    /// [`Error::WouldMoveBackwards`](crate::Error::WouldMoveBackwards) to go below the stored value.
    fn set_last_issued<'a>(
        &'a self,
        key: &'a CounterKey,
        last: i64,
        force: bool,
        bounds: Bounds,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<()>>;

    /// Compare-and-set: moves the last issued value from `expected` to `new` only if it is still
    /// `expected`, in `session` if given. Returns whether it did.
    fn compare_and_set<'a>(
        &'a self,
        key: &'a CounterKey,
        expected: i64,
        new: i64,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<bool>>;

    /// Deletes the counter, in `session` if given. Returns whether it existed.
    fn delete<'a>(
        &'a self,
        key: &'a CounterKey,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<bool>>;

    /// Deletes the counters of sequence `name` whose canonical period sorts before `period`
    /// (keys made by [`CounterKey::of`]), in every scope, and returns how many it deleted.
    /// Counters of other sequences, unscoped plain counters and later periods are left alone.
    /// In `session` if given.
    ///
    /// The provided implementation refuses with [`Error::StoreUnsupported`].
    fn delete_periods_before<'a>(
        &'a self,
        name: &'a str,
        period: &'a str,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<u64>> {
        let _ = (name, period, session);
        cannot(self.location(), "delete old periods")
    }

    /// How many counters [`delete_periods_before`](Self::delete_periods_before) would delete.
    ///
    /// The provided implementation refuses with [`Error::StoreUnsupported`].
    fn count_periods_before<'a>(
        &'a self,
        name: &'a str,
        period: &'a str,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<u64>> {
        let _ = (name, period, session);
        cannot(self.location(), "count old periods")
    }

    /// Where the counters are kept, for messages (for example `app.counters`).
    fn location(&self) -> String;

    /// Tells stores apart: two stores of equal identity hold the same counters in the same
    /// layout, so that the callers of one counter through either share reservations (see
    /// [`Sequence::next`](crate::Sequence::next)).
    ///
    /// The provided implementation is this store's address, which no other store shares.
    fn identity(&self) -> String {
        format!("{:p}", self)
    }
}

/// The refusal of a store at `location` that cannot do `what`.
fn cannot<'a, T: Send + 'a>(location: String, what: &'static str) -> BoxFuture<'a, Result<T>> {
    let e = Error::StoreUnsupported {
        store: location,
        operation: what,
    };
    Box::pin(async move { Err(e) })
}

/// What is done with the counters of the periods before a given one: the two operations
/// behind [`CounterStore::delete_periods_before`] and
/// [`CounterStore::count_periods_before`], which select the same counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PastPeriods {
    /// Count them.
    Count,
    /// Delete them.
    Delete,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    /// The provided `reserve_many` answers each counter as `reserve` would, in order: a
    /// counter without room fails alone.
    #[tokio::test]
    async fn several_counters_are_each_answered_as_alone() {
        let store = MemoryStore::new();
        let bounds = Bounds::new(1, 5).unwrap();
        let full = CounterKey::named("full");
        store.reserve(&full, 5, bounds, None).await.unwrap();
        let wanted = [
            (CounterKey::named("a"), 3),
            (full, 1),
            (CounterKey::named("b"), 1),
        ];
        let results = store.reserve_many(&wanted, bounds).await;
        assert_eq!(results.len(), 3);
        assert_eq!(
            results[0].as_ref().unwrap().range,
            IdRange::new(1, 3).unwrap()
        );
        assert!(
            matches!(results[1], Err(Error::Exhausted { last: 5, .. })),
            "{:?}",
            results[1]
        );
        assert_eq!(
            results[2].as_ref().unwrap().range,
            IdRange::new(1, 1).unwrap()
        );
    }
}
