//! The range in use of a cache, handed out without the cache's lock: a caller takes the next
//! value with one atomic add on the count of values taken. The lock is taken at the range's end
//! (to install the next range), at its prefetch mark (to start the prefetch) and when the period,
//! the clock or the cached values change. The count is also the statistic of the IDs the range
//! handed out, so that a cached ID writes to nothing shared but that count.
//!
//! A range is retired under the lock by [`Segment::close`], one atomic swap: every add before it
//! took a value that the close counts as handed out, every add after it takes none, so no value
//! is handed out twice or counted wrongly when a range is replaced while callers take from it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::clock::Clock;
use crate::id::{Format, IdRange, Slot};

/// The count of a closed range: far above any range's length, so that the adds of callers that
/// still reach it take nothing (and cannot overflow the count in any life of a process).
const CLOSED: u64 = 1 << 62;

/// The range in use of a cache, with the counter its values belong to and the clock that tells
/// whether that counter is still the one in use.
#[derive(Debug)]
pub(super) struct Segment {
    /// Values taken so far, each the offset of one value into the range; [`CLOSED`] and above
    /// once the range is retired.
    taken: Padded,
    first: i64,
    len: u64,
    /// The offset whose taker checks, under the lock, whether the prefetch of the next range
    /// is due.
    mark: AtomicU64,
    /// The counter (period) of the values.
    pub(super) slot: Arc<Slot>,
    /// The sequence's clock when the range was put in use (`None`: the system's).
    clock: Option<Arc<dyn Clock>>,
}

/// The count of values taken, alone in its cache lines: the callers of every core write it, and
/// would otherwise take from each other's cache the fields that only change with the range
/// (two lines: adjacent lines are fetched in pairs).
#[derive(Debug)]
#[repr(align(128))]
struct Padded(AtomicU64);

/// A value a caller took from a [`Segment`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Taken {
    pub(crate) value: i64,
    /// Whether it is the value at the prefetch mark: its taker checks whether the prefetch is
    /// due.
    pub(crate) at_mark: bool,
}

impl Segment {
    /// The range `range` of the counter of `slot`, its prefetch checked at offset `mark`.
    pub(super) fn new(
        range: IdRange,
        mark: u64,
        slot: Arc<Slot>,
        clock: Option<Arc<dyn Clock>>,
    ) -> Self {
        Segment {
            first: range.first(),
            len: range.len(),
            taken: Padded(AtomicU64::new(0)),
            mark: AtomicU64::new(mark),
            slot,
            clock,
        }
    }

    /// Whether the counter of this range is the one `format` uses now (the clock read for a
    /// format with periods).
    pub(super) fn serves(&self, format: &Format) -> bool {
        format.serves(&self.slot, || super::now(self.clock.as_ref()))
    }

    /// Takes the next value; `None` if the range is spent or retired.
    #[inline]
    pub(super) fn take(&self) -> Option<Taken> {
        let offset = self.taken.0.fetch_add(1, Relaxed);
        (offset < self.len).then(|| Taken {
            value: self.first + offset as i64,
            at_mark: offset == self.mark.load(Relaxed),
        })
    }

    /// The range's length.
    #[cfg(feature = "metrics")]
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The values handed out so far.
    pub(super) fn handed_out(&self) -> u64 {
        self.taken.0.load(Relaxed).min(self.len)
    }

    /// What is left of the range, as seen now.
    pub(super) fn left(&self) -> Option<IdRange> {
        self.rest(self.handed_out())
    }

    /// The range's values from offset `from` on.
    fn rest(&self, from: u64) -> Option<IdRange> {
        (from < self.len).then(|| {
            IdRange::new(self.first + from as i64, self.first + (self.len - 1) as i64)
                .expect("a non-empty rest")
        })
    }

    /// Moves the prefetch mark to `mark`, or to the next value taken if that is already past.
    pub(super) fn rearm(&self, mark: u64) {
        let next = self.taken.0.load(Relaxed);
        self.mark.store(mark.max(next), Relaxed);
    }

    /// Retires the range: no value is taken from it after this. Returns how many values it
    /// handed out and what is left.
    pub(super) fn close(&self) -> (u64, Option<IdRange>) {
        let taken = self.taken.0.swap(CLOSED, Relaxed).min(self.len);
        (taken, self.rest(taken))
    }
}

/// The offset of a range of `len` values whose taker checks the prefetch: where `prefetch_at`
/// of the range installed with `installed_len` values will have been used, counting what that
/// range handed out before the values of this one (a range put back after a trim or a clock
/// change is what is left of the one installed).
pub(super) fn prefetch_mark(installed_len: u64, len: u64, prefetch_at: f64) -> u64 {
    let due_at = (prefetch_at * installed_len as f64).ceil() as u64;
    let used_before = installed_len.saturating_sub(len);
    due_at.saturating_sub(used_before).saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Barrier;

    use super::*;

    fn segment(first: i64, last: i64, mark: u64) -> Segment {
        let format = Format::new("s", None, None, None);
        let slot = format.constant().expect("no periods").clone();
        Segment::new(IdRange::new(first, last).unwrap(), mark, slot, None)
    }

    fn taken(value: i64, at_mark: bool) -> Option<Taken> {
        Some(Taken { value, at_mark })
    }

    #[test]
    fn values_come_in_order_with_the_mark_once_then_nothing() {
        let s = segment(10, 14, 2);
        let taken: Vec<_> = (0..7)
            .map(|_| match s.take() {
                Some(Taken {
                    value,
                    at_mark: false,
                }) => format!("{value}"),
                Some(Taken {
                    value,
                    at_mark: true,
                }) => format!("{value}!"),
                None => "-".to_owned(),
            })
            .collect();
        assert_eq!(taken, ["10", "11", "12!", "13", "14", "-", "-"]);
        assert_eq!(s.handed_out(), 5);
        assert_eq!(s.left(), None);
        assert_eq!(s.close(), (5, None));
    }

    #[test]
    fn a_closed_range_hands_out_nothing_and_gives_back_the_rest() {
        let s = segment(1, 100, 50);
        for _ in 0..30 {
            assert!(matches!(s.take(), Some(Taken { at_mark: false, .. })));
        }
        assert_eq!(s.left(), IdRange::new(31, 100));
        assert_eq!(s.close(), (30, IdRange::new(31, 100)));
        assert_eq!(s.take(), None);
        // Adds after the close do not count as handed out.
        assert_eq!(s.handed_out(), 100.min(s.len));
    }

    #[test]
    fn the_mark_is_where_the_installed_range_reaches_prefetch_at() {
        // A range of 100 installed whole: at half, the 50th value (offset 49) checks.
        assert_eq!(prefetch_mark(100, 100, 0.5), 49);
        // What is left of it after 30 values: the 20th of the rest.
        assert_eq!(prefetch_mark(100, 70, 0.5), 19);
        // Past the mark already: the next value checks.
        assert_eq!(prefetch_mark(100, 40, 0.5), 0);
        // A batch of one: its one value checks.
        assert_eq!(prefetch_mark(1, 1, 0.5), 0);
        assert_eq!(prefetch_mark(1000, 1000, 0.0), 0);
    }

    #[test]
    fn a_rearmed_mark_is_never_behind_the_values_taken() {
        let s = segment(1, 10, 0);
        assert_eq!(s.take(), taken(1, true));
        assert_eq!(s.take(), taken(2, false));
        s.rearm(0);
        assert_eq!(s.take(), taken(3, true));
        s.rearm(6);
        assert_eq!(s.take(), taken(4, false));
        assert_eq!(s.take(), taken(5, false));
        assert_eq!(s.take(), taken(6, false));
        assert_eq!(s.take(), taken(7, true));
    }

    /// Threads take from one range while another closes it: every value is taken once, the
    /// close counts exactly the values taken, and the rest it gives back is every value not
    /// taken.
    #[test]
    fn takers_racing_a_close_never_share_or_lose_a_value() {
        const THREADS: usize = 4;
        for round in 0..50 {
            let s = segment(1, 20_000, 10_000);
            let start = Barrier::new(THREADS + 1);
            let (taken, (handed_out, rest)) = std::thread::scope(|scope| {
                let takers: Vec<_> = (0..THREADS)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            let mut mine = Vec::new();
                            loop {
                                match s.take() {
                                    Some(Taken { value, .. }) => mine.push(value),
                                    None => return mine,
                                }
                            }
                        })
                    })
                    .collect();
                start.wait();
                // Close while the takers run (after a share of the range, varied by round).
                while s.handed_out() < 200 * round {
                    std::hint::spin_loop();
                }
                let closed = s.close();
                let taken: Vec<i64> = takers.into_iter().flat_map(|t| t.join().unwrap()).collect();
                (taken, closed)
            });
            let unique: HashSet<_> = taken.iter().copied().collect();
            assert_eq!(unique.len(), taken.len(), "a value taken twice");
            assert_eq!(taken.len() as u64, handed_out, "round {round}");
            let mut all: Vec<i64> = taken;
            all.extend(rest.map(|r| r.iter()).into_iter().flatten());
            all.sort_unstable();
            assert_eq!(all, (1..=20_000).collect::<Vec<_>>(), "round {round}");
        }
    }
}
