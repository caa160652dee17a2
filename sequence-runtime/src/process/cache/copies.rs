//! Each thread's copies of the ranges in use of the caches it took values from last: a caller
//! takes a value from its thread's copy, without the cache's lock and without reading anything
//! shared but the range's count of values taken. A copy is never wrong, only stale: a range is
//! closed when it is taken out of use (see [`Segment::close`]), so a stale copy hands out
//! nothing, and the caller takes the lock, which gives it the range in use now.
//!
//! A caller that keeps a place of its own per thread (the hot path of models, beside the
//! model's sequence) keeps its copy there instead, as a [`RangeCopy`], and takes from it without
//! looking it up among the thread's copies.

use std::cell::RefCell;
use std::sync::Arc;

use super::segment::{Segment, Taken};
use crate::id::Format;

/// How many caches each thread keeps a copy of the range in use of.
const CAPACITY: usize = 8;

thread_local! {
    /// Ranges in use by cache (see `ProcessState::id`), the most recently remembered last.
    static COPIES: RefCell<Vec<(u64, Arc<Segment>)>> = const { RefCell::new(Vec::new()) };
}

/// A copy of the range in use of one cache, kept by its holder rather than among the thread's
/// copies: as stale-safe as those, since it is the same range.
#[derive(Debug, Default)]
pub(crate) struct RangeCopy(Option<Copied>);

#[derive(Debug)]
struct Copied {
    cache: u64,
    segment: Arc<Segment>,
    /// Whether the range serves every call of the cache's callers: its counter is the one of a
    /// format without periods, so no clock is read before a value is taken.
    timeless: bool,
}

impl RangeCopy {
    /// No copy yet.
    pub(crate) const fn new() -> Self {
        RangeCopy(None)
    }

    /// The next value of the copied range, if it serves every call and has one left: one atomic
    /// add, with nothing else read (the hot path of models). The value at the range's prefetch
    /// mark goes on to [`ProcessState::look`](super::ProcessState::look), which checks the
    /// prefetch. `None` takes nothing, and the caller looks at the cache. Counting the value in
    /// the sequence's series (with `metrics`) is the cache's: with the feature, this takes
    /// nothing.
    #[inline]
    pub(crate) fn take(&self) -> Option<Taken> {
        if cfg!(feature = "metrics") {
            return None;
        }
        let copied = self.0.as_ref().filter(|c| c.timeless)?;
        copied.segment.take()
    }

    /// The copy of the range in use of the cache `cache`, if this is one.
    #[inline]
    pub(super) fn of(&self, cache: u64) -> Option<&Arc<Segment>> {
        match &self.0 {
            Some(c) if c.cache == cache => Some(&c.segment),
            _ => None,
        }
    }

    /// Makes `segment` the copy of the range in use of the cache `cache` (`None`: it has none),
    /// whose callers' values are of `format`.
    pub(super) fn set(&mut self, cache: u64, segment: Option<Arc<Segment>>, format: &Format) {
        self.0 = segment.map(|segment| Copied {
            cache,
            timeless: format
                .constant()
                .is_some_and(|slot| Arc::ptr_eq(slot, &segment.slot)),
            segment,
        });
    }
}

/// What `f` makes of this thread's copy of the range in use of the cache `cache`; `None` if the
/// thread has none (or is ending).
#[inline]
pub(super) fn with_copy<R>(cache: u64, f: impl FnOnce(&Arc<Segment>) -> R) -> Option<R> {
    COPIES
        .try_with(|copies| {
            let copies = copies.borrow();
            let (_, segment) = copies.iter().rev().find(|(c, _)| *c == cache)?;
            Some(f(segment))
        })
        .ok()
        .flatten()
}

/// Makes `segment` this thread's copy of the range in use of the cache `cache` (`None`: it has
/// none), forgetting the oldest copy if the thread keeps [`CAPACITY`] already.
pub(super) fn remember(cache: u64, segment: Option<Arc<Segment>>) {
    let _ = COPIES.try_with(|copies| {
        let mut copies = copies.borrow_mut();
        let at = copies.iter().position(|(c, _)| *c == cache);
        match (at, segment) {
            (Some(i), Some(segment)) => copies[i].1 = segment,
            (Some(i), None) => {
                copies.remove(i);
            }
            (None, Some(segment)) => {
                if copies.len() == CAPACITY {
                    copies.remove(0);
                }
                copies.push((cache, segment));
            }
            (None, None) => {}
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::{Format, IdRange};

    fn segment(first: i64) -> Arc<Segment> {
        segment_of(&Format::new("copies", None, None, None), first)
    }

    /// Ten values from `first`, of the counter of `format`, the prefetch mark at offset 5.
    fn segment_of(format: &Format, first: i64) -> Arc<Segment> {
        let slot = format.constant().expect("no periods").clone();
        let range = IdRange::new(first, first + 9).unwrap();
        Arc::new(Segment::new(range, 5, slot, None))
    }

    fn first_of(cache: u64) -> Option<i64> {
        with_copy(cache, |s| s.left().map(|r| r.first())).flatten()
    }

    #[test]
    fn each_cache_has_its_own_copy_and_the_oldest_is_forgotten() {
        // Cache numbers of this test only (the process's caches count from 1).
        let base = u64::MAX - 100;
        for i in 0..CAPACITY as u64 {
            remember(base + i, Some(segment(100 * i as i64)));
        }
        assert_eq!(first_of(base + 3), Some(300));
        // A new copy of a remembered cache replaces its old one.
        remember(base + 3, Some(segment(7)));
        assert_eq!(first_of(base + 3), Some(7));
        // One cache more than the thread keeps: the first remembered is forgotten.
        remember(base + 50, Some(segment(5000)));
        assert_eq!(first_of(base), None);
        assert_eq!(first_of(base + 1), Some(100));
        assert_eq!(first_of(base + 50), Some(5000));
        remember(base + 50, None);
        assert_eq!(first_of(base + 50), None);
        // Another thread has copies of its own.
        std::thread::spawn(move || assert_eq!(first_of(base + 1), None))
            .join()
            .unwrap();
    }

    #[test]
    fn a_range_copy_takes_without_the_cache_only_from_a_timeless_range() {
        let format = Format::new("copies", None, None, None);
        let mut copy = RangeCopy::new();
        assert!(copy.take().is_none(), "no copy yet");
        // The counter of the format: values are taken, the one at the mark told apart.
        copy.set(7, Some(segment_of(&format, 10)), &format);
        let taken: Vec<_> = std::iter::from_fn(|| copy.take())
            .map(|t| (t.value, t.at_mark))
            .collect();
        if cfg!(feature = "metrics") {
            assert!(
                taken.is_empty(),
                "with metrics the cache counts every value"
            );
            return;
        }
        let expected: Vec<_> = (10..=19).map(|v| (v, v == 15)).collect();
        assert_eq!(taken, expected, "the range once, the mark at offset 5");
        assert!(copy.of(7).is_some() && copy.of(8).is_none());
        // Another format's counter (a scope's, a period's): nothing taken, the caller looks
        // at the cache, which checks the period.
        let other = Format::new("other", None, None, None);
        let range = segment_of(&format, 100);
        copy.set(7, Some(range.clone()), &other);
        assert!(copy.take().is_none());
        assert_eq!(
            range.handed_out(),
            0,
            "nothing taken from a range not timeless"
        );
        // A retired range hands out nothing.
        let range = segment_of(&format, 200);
        copy.set(7, Some(range.clone()), &format);
        range.close();
        assert!(copy.take().is_none());
        copy.set(7, None, &format);
        assert!(copy.of(7).is_none());
    }
}
