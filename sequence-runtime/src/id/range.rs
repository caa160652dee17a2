//! Contiguous ranges of IDs, as reserved from a counter.

use std::fmt;

/// A non-empty, contiguous, inclusive range of IDs reserved in one round trip.
///
/// ```
/// # use sequence_runtime::id::IdRange;
/// let range = IdRange::new(41, 43).unwrap();
/// assert_eq!(range.len(), 3);
/// assert_eq!(range.iter().collect::<Vec<_>>(), vec![41, 42, 43]);
/// ```
///
/// It serializes (with `serde`) as `{ "first": …, "last": … }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct IdRange {
    first: i64,
    last: i64,
}

impl IdRange {
    /// The range `first..=last`, or `None` if it would be empty.
    pub fn new(first: i64, last: i64) -> Option<Self> {
        (first <= last).then_some(IdRange { first, last })
    }

    /// The first ID of the range.
    pub fn first(&self) -> i64 {
        self.first
    }

    /// The last ID of the range.
    pub fn last(&self) -> i64 {
        self.last
    }

    /// How many IDs the range holds (at least 1; `u64::MAX` for the one range, all of `i64`,
    /// whose size does not fit).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u64 {
        self.last.abs_diff(self.first).saturating_add(1)
    }

    /// Whether `id` lies in the range.
    pub fn contains(&self, id: i64) -> bool {
        self.first <= id && id <= self.last
    }

    /// The IDs in ascending order.
    pub fn iter(&self) -> std::ops::RangeInclusive<i64> {
        self.first..=self.last
    }

    /// The IDs above `value`, if any.
    pub(crate) fn above(self, value: i64) -> Option<IdRange> {
        match value.checked_add(1) {
            Some(first) => IdRange::new(first.max(self.first), self.last),
            None => None,
        }
    }

    /// Splits off the first `n` IDs (`n >= 1`); the rest, if any, is returned second.
    pub(crate) fn split_first(self, n: u64) -> (IdRange, Option<IdRange>) {
        if n >= self.len() {
            return (self, None);
        }
        // n < len <= 2^64, and first + n - 1 < last, so this stays in range.
        let head_last = self.first + (n as i64 - 1);
        (
            IdRange {
                first: self.first,
                last: head_last,
            },
            Some(IdRange {
                first: head_last + 1,
                last: self.last,
            }),
        )
    }
}

impl IntoIterator for IdRange {
    type Item = i64;
    type IntoIter = std::ops::RangeInclusive<i64>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Display for IdRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..={}", self.first, self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basics() {
        assert!(IdRange::new(5, 4).is_none());
        assert_eq!(IdRange::new(0, i64::MAX).unwrap().len(), 1 << 63);
        assert_eq!(
            IdRange::new(i64::MIN + 1, i64::MAX).unwrap().len(),
            u64::MAX
        );
        assert_eq!(IdRange::new(i64::MIN, i64::MAX).unwrap().len(), u64::MAX);
        let r = IdRange::new(1, 10).unwrap();
        assert!(r.contains(1) && r.contains(10) && !r.contains(11));
        assert_eq!(r.to_string(), "1..=10");
    }

    #[test]
    fn above() {
        let r = IdRange::new(5, 10).unwrap();
        assert_eq!(r.above(7), IdRange::new(8, 10));
        assert_eq!(r.above(1), Some(r));
        assert_eq!(r.above(10), None);
        assert_eq!(r.above(i64::MAX), None);
    }

    #[test]
    fn split() {
        let r = IdRange::new(1, 10).unwrap();
        let (a, b) = r.split_first(3);
        assert_eq!((a.first(), a.last()), (1, 3));
        assert_eq!(b.map(|b| (b.first(), b.last())), Some((4, 10)));
        let (a, b) = r.split_first(10);
        assert_eq!(a, r);
        assert!(b.is_none());
    }
}
