//! The next call's numbers of a sequence whose model inserts in bulk again and again
//! (`insert_many_with_ids`): while one call inserts its documents, the numbers of the next
//! call are reserved in the background, so that the next call does not wait for its counter
//! round trip.
//!
//! Bounded: at most one reservation is held ahead, of the size of the last call, so an idle
//! process holds no more than one call's worth (`Sequence::release` gives it back). The first
//! call of a sequence in a process reserves only its own numbers; reserving ahead starts with
//! the second. A call takes the reservation made for it when it is for the same counter (the
//! same period) and at least as large as the call; it uses the first values, and the rest
//! count as wasted. Otherwise the reservation's values are wasted and the call reserves its
//! own.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::task::JoinHandle;

use crate::error::Result;
use crate::id::{IdRange, Slot};
use crate::store::Reservation;

/// What the bulk calls of one sequence share: the reservation made for the next call.
#[derive(Debug, Default)]
pub(crate) struct BulkAhead {
    state: Mutex<Ahead>,
}

#[derive(Debug, Default)]
struct Ahead {
    /// Bulk calls so far (reserving ahead starts with the second).
    calls: u64,
    /// The reservation for the next call, in flight or done.
    next: Option<Pending>,
}

/// A reservation of `size` values of `slot`'s counter, made in the background.
#[derive(Debug)]
struct Pending {
    slot: Arc<Slot>,
    task: JoinHandle<Result<Reservation>>,
}

/// What a bulk call got: its values, and how many values reserved ahead it could not use.
#[derive(Debug)]
pub(crate) struct Taken {
    /// The call's values: exactly the `n` it asked for.
    pub(crate) reservation: Reservation,
    /// Whether they were reserved ahead (no round trip waited for).
    pub(crate) ahead: bool,
    /// Values of a reservation made ahead that the call did not use (of another period, or
    /// beyond the call's size).
    pub(crate) unused: u64,
    /// The values of the reservation made ahead that this call found done, used or not (for
    /// the statistics).
    pub(crate) reserved_ahead: u64,
}

impl BulkAhead {
    fn lock(&self) -> std::sync::MutexGuard<'_, Ahead> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `n` contiguous values of `slot`'s counter for a bulk call: the reservation made ahead
    /// for it when it fits, else one made now with `reserve`; then, from the second call on,
    /// starts the reservation of the next call's `n` values with `reserve` in the background.
    pub(crate) async fn take<F, Fut>(&self, n: u64, slot: &Arc<Slot>, reserve: F) -> Result<Taken>
    where
        F: Fn(Arc<Slot>, u64) -> Fut,
        Fut: Future<Output = Result<Reservation>> + Send + 'static,
    {
        let pending = {
            let mut ahead = self.lock();
            ahead.calls += 1;
            ahead.next.take()
        };
        let mut taken = None;
        let mut unused = 0;
        let mut reserved_ahead = 0;
        if let Some(pending) = pending {
            // A reservation that failed or was cancelled leaves nothing: the call reserves
            // its own, and reports that reservation's error if it fails too.
            if let Ok(Ok(r)) = pending.task.await {
                let len = r.range.len();
                reserved_ahead = len;
                if len >= n && pending.slot.key == slot.key {
                    unused = len - n;
                    let (range, _) = r.range.split_first(n);
                    taken = Some(Reservation { range, ..r });
                } else {
                    unused = len;
                }
            }
        }
        let ahead = taken.is_some();
        let reservation = match taken {
            Some(r) => r,
            None => reserve(slot.clone(), n).await?,
        };
        {
            let mut state = self.lock();
            if state.calls >= 2 && state.next.is_none() {
                state.next = Some(Pending {
                    slot: slot.clone(),
                    task: tokio::spawn(reserve(slot.clone(), n)),
                });
            }
        }
        Ok(Taken {
            reservation,
            ahead,
            unused,
            reserved_ahead,
        })
    }

    /// Removes the reservation made ahead, waiting for it if it is in flight, and returns its
    /// values and their slot (for `release`). Reserving ahead starts again with the second
    /// call after this one.
    pub(crate) async fn take_all(&self) -> Option<(IdRange, Arc<Slot>)> {
        let pending = {
            let mut ahead = self.lock();
            ahead.calls = 0;
            ahead.next.take()
        }?;
        match pending.task.await {
            Ok(Ok(r)) => Some((r.range, pending.slot)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;
    use crate::id::Format;

    /// What a reservation returns here: at once.
    type Reserved = std::future::Ready<Result<Reservation>>;

    /// A counter in memory: each reservation takes the next `n` values.
    fn counter() -> (Arc<AtomicI64>, impl Fn(Arc<Slot>, u64) -> Reserved) {
        let last = Arc::new(AtomicI64::new(0));
        let l = last.clone();
        let reserve = move |_slot: Arc<Slot>, n: u64| {
            let first = l.fetch_add(n as i64, Ordering::SeqCst) + 1;
            let range = IdRange::new(first, first + n as i64 - 1).unwrap();
            std::future::ready(Ok(Reservation::new(range, 0)))
        };
        (last, reserve)
    }

    fn slot(name: &str) -> Arc<Slot> {
        Format::new(name, None, None, None)
            .constant()
            .unwrap()
            .clone()
    }

    fn values(t: &Taken) -> (i64, i64) {
        (t.reservation.range.first(), t.reservation.range.last())
    }

    #[tokio::test]
    async fn the_second_call_reserves_the_third_calls_values_ahead() {
        let (last, reserve) = counter();
        let (bulk, s) = (BulkAhead::default(), slot("a"));
        let first = bulk.take(10, &s, &reserve).await.unwrap();
        assert_eq!((values(&first), first.ahead), ((1, 10), false));
        tokio::task::yield_now().await;
        assert_eq!(
            last.load(Ordering::SeqCst),
            10,
            "the first call reserves only its own"
        );
        let second = bulk.take(10, &s, &reserve).await.unwrap();
        assert_eq!((values(&second), second.ahead), ((11, 20), false));
        let third = bulk.take(10, &s, &reserve).await.unwrap();
        assert_eq!(
            (values(&third), third.ahead, third.unused),
            ((21, 30), true, 0)
        );
        assert_eq!(third.reserved_ahead, 10);
        // The fourth call's values are reserved ahead: one call's worth, given back by release.
        let held = bulk.take_all().await.unwrap();
        assert_eq!((held.0.first(), held.0.last()), (31, 40));
        assert!(
            bulk.take_all().await.is_none(),
            "nothing held after release"
        );
    }

    #[tokio::test]
    async fn a_smaller_call_uses_the_first_values_and_a_larger_one_its_own() {
        let (_, reserve) = counter();
        let (bulk, s) = (BulkAhead::default(), slot("a"));
        bulk.take(10, &s, &reserve).await.unwrap();
        bulk.take(10, &s, &reserve).await.unwrap(); // 11..=20, reserves 21..=30 ahead
        let smaller = bulk.take(4, &s, &reserve).await.unwrap();
        assert_eq!(
            (values(&smaller), smaller.ahead, smaller.unused),
            ((21, 24), true, 6)
        );
        // 31..=34 were reserved ahead for a call of 4: a call of 8 takes its own.
        let larger = bulk.take(8, &s, &reserve).await.unwrap();
        assert_eq!(
            (values(&larger), larger.ahead, larger.unused),
            ((35, 42), false, 4)
        );
    }

    #[tokio::test]
    async fn values_reserved_for_another_counter_are_not_used() {
        let (_, reserve) = counter();
        let bulk = BulkAhead::default();
        let (day1, day2) = (slot("2025-11-25"), slot("2025-11-26"));
        bulk.take(5, &day1, &reserve).await.unwrap();
        bulk.take(5, &day1, &reserve).await.unwrap(); // reserves 11..=15 ahead for day 1
        let next_day = bulk.take(5, &day2, &reserve).await.unwrap();
        assert_eq!((values(&next_day), next_day.ahead), ((16, 20), false));
        assert_eq!(next_day.unused, 5, "the other period's values are wasted");
    }
}
