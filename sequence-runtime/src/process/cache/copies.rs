//! Each thread's copies of the ranges in use of the caches it took values from last: a caller
//! takes a value from its thread's copy, without the cache's lock and without reading anything
//! shared but the range's count of values taken. A copy is never wrong, only stale: a range is
//! closed when it is taken out of use (see [`Segment::close`]), so a stale copy hands out
//! nothing, and the caller takes the lock, which gives it the range in use now.

use std::cell::RefCell;
use std::sync::Arc;

use super::segment::Segment;

/// How many caches each thread keeps a copy of the range in use of.
const CAPACITY: usize = 8;

thread_local! {
    /// Ranges in use by cache (see `ProcessState::id`), the most recently remembered last.
    static COPIES: RefCell<Vec<(u64, Arc<Segment>)>> = const { RefCell::new(Vec::new()) };
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
        let format = Format::new("copies", None, None, None);
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
}
