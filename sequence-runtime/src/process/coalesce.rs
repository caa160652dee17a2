//! Coalesced reservations: the callers of a sequence in a process that each need values from a
//! round trip (one value: `batch = 1`, the first calls of scope values; a batch: the refills of
//! scope values' caches) are served together.
//!
//! The first caller while no round trip is in flight makes its round trip itself; callers
//! arriving while one is in flight queue for the next one, which a round task makes once it
//! lands. Each round reserves, for every counter with callers queued when it starts, as many
//! values as its callers ask (at most [`ROUND_CAP`] in all, and each caller's whole) — one
//! `findAndModify` of `$inc: k` for one counter, one reservation of several counters at once
//! ([`CounterStore::reserve_many`](crate::store::CounterStore::reserve_many)) for the first
//! values of many scope values — and hands them out in arrival order, each caller's contiguous.
//! Nothing is kept once the queued callers are served: a crash loses at most the values of the
//! callers in flight, and each counter's `seq` stays the last value handed out. When a
//! reservation gives fewer values than callers (near the counter's end, or a shard's), the
//! callers left over stay first in line for the next round, which gives them the counter's
//! exhaustion error (or values of another shard).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use crate::error::Result;
use crate::id::IdRange;
use crate::observability::StatsCell;
use crate::observability::Timer;
use crate::store::Reservation;
use crate::strategy::Origin;

/// The most values one round reserves.
const ROUND_CAP: usize = 1000;

/// The callers waiting for the next round of one sequence in this process.
#[derive(Debug)]
pub(crate) struct Coalescer {
    queues: Mutex<Queues>,
    /// The sequence's statistics.
    stats: Arc<StatsCell>,
}

#[derive(Debug, Default)]
struct Queues {
    /// Whether a round trip is in flight: callers arriving meanwhile queue for the next round.
    busy: bool,
    /// The callers waiting, per origin (a queue exists while it has callers).
    waiting: HashMap<String, OriginQueue>,
}

#[derive(Debug)]
struct OriginQueue {
    origin: Origin,
    waiters: VecDeque<Waiter>,
}

/// A caller waiting for `n` values, and where they go.
#[derive(Debug)]
struct Waiter {
    n: u64,
    tx: oneshot::Sender<Result<IdRange>>,
}

/// What a caller of [`Coalescer::range`] does: waits for a round, or makes its own round trip
/// (holding the guard that hands the callers queued meanwhile to a round task; `None` without
/// a runtime).
enum Turn {
    Queued(oneshot::Receiver<Result<IdRange>>),
    Alone(Option<CoalescerHandOff>),
}

/// Ends the round trip of a caller that went alone, however it ends (done, failed, or dropped):
/// the callers that queued meanwhile get a round task, or the coalescer is idle again if none
/// did.
struct CoalescerHandOff {
    coalescer: Arc<Coalescer>,
    runtime: tokio::runtime::Handle,
}

impl Drop for CoalescerHandOff {
    fn drop(&mut self) {
        let mut queues = self.coalescer.lock();
        if queues.waiting.is_empty() {
            queues.busy = false;
        } else {
            drop(queues);
            self.runtime.spawn(self.coalescer.clone().rounds());
        }
    }
}

impl Coalescer {
    /// Queues counting into `stats`.
    pub(crate) fn new(stats: Arc<StatsCell>) -> Self {
        Coalescer {
            queues: Mutex::default(),
            stats,
        }
    }

    /// How many counters have callers queued now (each queue removed once it empties).
    pub(crate) fn queues(&self) -> usize {
        self.lock().waiting.len()
    }

    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One value of `origin`, from the round that serves the callers queued with this one.
    pub(crate) async fn one(self: &Arc<Self>, origin: Origin) -> Result<i64> {
        let timer = Timer::start();
        let result = self.range(origin, 1).await.map(|r| r.range.first());
        self.stats.issued(u64::from(result.is_ok()));
        self.stats.waited(timer.elapsed());
        result
    }

    /// `n` contiguous values of `origin` (fewer near its end), from the round that serves the
    /// callers queued with this one.
    pub(crate) async fn range(self: &Arc<Self>, origin: Origin, n: u64) -> Result<Reservation> {
        match self.join(&origin, n) {
            Turn::Queued(rx) => match rx.await {
                Ok(result) => result.map(|range| Reservation::new(range, 0)),
                // The round task ended without an answer (its runtime shut down): whatever it
                // reserved for this caller is lost, as on a crash; reserve anew.
                Err(_) => origin.coalesced(&self.stats, n).await,
            },
            // Nothing is in flight: this caller's round trip is the one, made by the caller
            // itself; those arriving meanwhile queue for the next.
            Turn::Alone(_next) => origin.coalesced(&self.stats, n).await,
        }
    }

    /// Queues a caller of `n` values of `origin` behind the round trip in flight, or, when
    /// there is none, lets it make its own, the coalescer busy meanwhile.
    fn join(self: &Arc<Self>, origin: &Origin, n: u64) -> Turn {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Turn::Alone(None); // no runtime to run rounds on: each caller alone
        };
        let mut queues = self.lock();
        if !queues.busy {
            queues.busy = true;
            return Turn::Alone(Some(CoalescerHandOff {
                coalescer: self.clone(),
                runtime,
            }));
        }
        let (tx, rx) = oneshot::channel();
        queue_of(&mut queues.waiting, origin).push_back(Waiter { n, tx });
        Turn::Queued(rx)
    }

    /// Serves the queued callers round after round, until none is left; idle then.
    async fn rounds(self: Arc<Self>) {
        loop {
            let round = {
                let mut queues = self.lock();
                let round = next_round(&mut queues.waiting);
                if round.is_empty() {
                    queues.busy = false;
                    return;
                }
                round
            };
            let wanted: Vec<(Origin, u64)> = round
                .iter()
                .map(|(origin, waiters)| (origin.clone(), waiters.iter().map(|w| w.n).sum()))
                .collect();
            let results = match wanted.as_slice() {
                [(origin, n)] => vec![origin.coalesced(&self.stats, *n).await],
                _ => Origin::observed_together(&self.stats, &wanted).await,
            };
            for ((origin, waiters), result) in round.into_iter().zip(results) {
                self.hand_out(&origin, waiters, result);
            }
        }
    }

    /// Hands the values of `result` to `waiters` in order, each its own contiguous values (the
    /// last served may get fewer than it asked, near the counter's end); those left without
    /// any go back to the front of their queue.
    fn hand_out(&self, origin: &Origin, waiters: Vec<Waiter>, result: Result<Reservation>) {
        let r = match result {
            Ok(r) => r,
            Err(e) => {
                for waiter in waiters {
                    let _ = waiter.tx.send(Err(e.clone()));
                }
                return;
            }
        };
        let mut next = Some(r.range.first());
        let mut left = Vec::new();
        for waiter in waiters {
            let Some(first) = next else {
                left.push(waiter);
                continue;
            };
            let last = first
                .saturating_add(waiter.n as i64 - 1)
                .min(r.range.last());
            next = (last < r.range.last()).then(|| last + 1);
            let range = IdRange::new(first, last).expect("first <= last");
            if waiter.tx.send(Ok(range)).is_err() {
                self.stats.wasted(range.len()); // the caller gave up meanwhile
            }
        }
        if !left.is_empty() {
            let mut queues = self.lock();
            let queue = queue_of(&mut queues.waiting, origin);
            for waiter in left.into_iter().rev() {
                queue.push_front(waiter);
            }
        }
    }
}

/// The queue of the callers of `origin`, made if it has none.
fn queue_of<'a>(
    waiting: &'a mut HashMap<String, OriginQueue>,
    origin: &Origin,
) -> &'a mut VecDeque<Waiter> {
    &mut waiting
        .entry(origin.id().to_owned())
        .or_insert_with(|| OriginQueue {
            origin: origin.clone(),
            waiters: VecDeque::new(),
        })
        .waiters
}

/// The callers of the next round, per origin, asking at most [`ROUND_CAP`] values in all (at
/// least one caller, whatever it asks); the queues emptied are removed, and callers that gave up
/// (their future dropped) take no value.
fn next_round(waiting: &mut HashMap<String, OriginQueue>) -> Vec<(Origin, Vec<Waiter>)> {
    let mut room = ROUND_CAP as u64;
    let mut round = Vec::new();
    let mut first = true;
    for queue in waiting.values_mut() {
        queue.waiters.retain(|w| !w.tx.is_closed());
        let mut k = 0;
        while let Some(waiter) = queue.waiters.get(k) {
            if waiter.n > room && !first {
                break;
            }
            room = room.saturating_sub(waiter.n);
            first = false;
            k += 1;
        }
        if k > 0 {
            round.push((queue.origin.clone(), queue.waiters.drain(..k).collect()));
        }
    }
    waiting.retain(|_, queue| !queue.waiters.is_empty());
    round
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use futures_util::FutureExt;

    use crate::{Error, Scope, Sequence, SequenceOptions};

    /// `n` tasks each ask `seq` for one value at once; their results in task order.
    async fn at_once(seq: &Sequence, n: usize) -> Vec<crate::Result<i64>> {
        let tasks: Vec<_> = (0..n)
            .map(|_| {
                let seq = seq.clone();
                tokio::spawn(async move { seq.next().await })
            })
            .collect();
        let mut results = Vec::new();
        for t in tasks {
            results.push(t.await.unwrap());
        }
        results
    }

    // The in-memory store answers at once, so callers on one thread never wait together; the
    // tests of callers that do are in `tests/it/allocator.rs`, with a store that takes its time.

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_value_is_handed_out_once_across_threads() {
        let seq = Sequence::in_memory(SequenceOptions::builder("c").build()).unwrap();
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let seq = seq.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    for _ in 0..500 {
                        got.push(seq.next().await.unwrap());
                    }
                    got
                })
            })
            .collect();
        let mut all = HashSet::new();
        for t in tasks {
            for v in t.await.unwrap() {
                assert!(all.insert(v), "{v} handed out twice");
            }
        }
        assert_eq!(all, (1..=4000).collect::<HashSet<_>>());
        let stats = seq.stats();
        assert_eq!(
            (stats.reserved, stats.issued, stats.waits),
            (4000, 4000, 4000)
        );
        assert_eq!(seq.current().await.unwrap(), Some(4000));
    }

    #[tokio::test]
    async fn near_the_end_the_callers_that_fit_are_served_and_the_rest_get_the_exhaustion() {
        let seq = Sequence::in_memory(SequenceOptions::builder("c").max(10).build()).unwrap();
        seq.set_next(8).await.unwrap();
        let results = at_once(&seq, 5).await;
        let served: Vec<i64> = results
            .iter()
            .filter_map(|r| r.as_ref().ok().copied())
            .collect();
        assert_eq!(served, [8, 9, 10]);
        for r in &results[3..] {
            assert!(
                matches!(
                    r,
                    Err(Error::Exhausted {
                        last: 10,
                        max: 10,
                        ..
                    })
                ),
                "{r:?}"
            );
        }
        assert_eq!(
            seq.current().await.unwrap(),
            Some(10),
            "nothing beyond the end"
        );
    }

    #[tokio::test]
    async fn the_counters_of_different_scopes_are_served_apart() {
        let seq = Sequence::in_memory(SequenceOptions::builder("c").scope(["t"]).build()).unwrap();
        let a = seq.in_scope(Scope::new().with("t", "a")).unwrap();
        let b = seq.in_scope(Scope::new().with("t", "b")).unwrap();
        let tasks: Vec<_> = (0..20)
            .map(|i| {
                let seq = if i % 2 == 0 { a.clone() } else { b.clone() };
                tokio::spawn(async move { seq.next().await.unwrap() })
            })
            .collect();
        let mut got = (Vec::new(), Vec::new());
        for (i, t) in tasks.into_iter().enumerate() {
            let v = t.await.unwrap();
            if i % 2 == 0 {
                got.0.push(v)
            } else {
                got.1.push(v)
            }
        }
        assert_eq!(got.0, (1..=10).collect::<Vec<_>>());
        assert_eq!(got.1, (1..=10).collect::<Vec<_>>());
    }

    /// A scoped sequence numbering 100,000 tenants keeps no queue per tenant: each is removed
    /// once its callers are served.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hundred_thousand_scopes_leave_no_queue_behind() {
        let seq = Sequence::in_memory(SequenceOptions::builder("c").scope(["t"]).build()).unwrap();
        let tasks: Vec<_> = (0..4)
            .map(|task| {
                let seq = seq.clone();
                tokio::spawn(async move {
                    for tenant in (task..100_000).step_by(4) {
                        let scoped = seq.in_scope(Scope::new().with("t", tenant)).unwrap();
                        assert_eq!(scoped.next().await.unwrap(), 1);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(seq.stats().issued, 100_000);
        assert_eq!(seq.coalescer_queues(), 0);
    }

    #[test]
    fn without_a_runtime_each_caller_reserves_alone() {
        let seq = Sequence::in_memory(SequenceOptions::builder("c").build()).unwrap();
        // The in-memory store answers at once: one poll completes each call.
        let next = || seq.next().now_or_never().expect("no wait").unwrap();
        assert_eq!((next(), next()), (1, 2));
        assert_eq!(seq.stats().reservations, 2);
    }
}
