//! The arithmetic every counter store shares: which stored values are valid, and which
//! range a reservation of `n` values yields.

use sequence_rules::limits;

use super::range::IdRange;
use crate::error::{Error, Result};

/// The values a counter may issue: `start..=max`.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// The first value issued by a new counter.
    pub start: i64,
    /// The largest value ever issued.
    pub max: i64,
    /// The option that sets `max`, for the fix a message of exhaustion gives.
    pub(crate) limit: Limit,
}

/// Bounds are equal when their values are: what set them does not count.
impl PartialEq for Bounds {
    fn eq(&self, other: &Self) -> bool {
        (self.start, self.max) == (other.start, other.max)
    }
}

impl Eq for Bounds {}

/// The option that sets the largest value of a counter: what to raise when it is reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// `max` (or its default, `i64::MAX`).
    #[default]
    Max,
    /// `width`: the digits of the zero-padded counter part.
    Width,
    /// `digits`: the exact number of digits of every ID.
    Digits,
}

impl Limit {
    /// The option's name, as written in `#[seq(...)]`.
    pub const fn key(self) -> &'static str {
        match self {
            Limit::Max => "max",
            Limit::Width => "width",
            Limit::Digits => "digits",
        }
    }
}

impl Bounds {
    /// Bounds `start..=max`; `start` must be above `i64::MIN` and not above `max`.
    pub fn new(start: i64, max: i64) -> Result<Self> {
        match limits::space_problem(start, max) {
            Some(message) => Err(Error::InvalidConfig {
                key: "start",
                message,
            }),
            None => Ok(Bounds {
                start,
                max,
                limit: Limit::Max,
            }),
        }
    }

    /// The IDs of exactly `digits` decimal digits: `10^(digits-1) ..= 10^digits - 1`, for
    /// `digits` from 1 to 18 (`digits = 12` is `100_000_000_000..=999_999_999_999`).
    ///
    /// ```
    /// # use sequence_runtime::id::Bounds;
    /// let b = Bounds::digits(2).unwrap();
    /// assert_eq!((b.start, b.max), (10, 99));
    /// assert!(Bounds::digits(19).is_err());
    /// ```
    pub fn digits(digits: u8) -> Result<Self> {
        let (start, max) = limits::digits_range(digits).ok_or_else(|| Error::InvalidConfig {
            key: "digits",
            message: format!("`digits` must be between 1 and 18, got {digits}"),
        })?;
        Ok(Bounds {
            start,
            max,
            limit: Limit::Digits,
        })
    }

    /// The same values, with `limit` the option that sets `max`.
    pub fn limited_by(self, limit: Limit) -> Self {
        Bounds { limit, ..self }
    }

    /// The option that sets `max`.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// How many values `start..=max` holds (at most `u64::MAX`, since `start > i64::MIN`).
    pub fn size(&self) -> u64 {
        self.max.abs_diff(self.start) + 1
    }

    /// The "last issued" value of a counter that has issued nothing: `start - 1`.
    pub fn before_start(&self) -> i64 {
        self.start - 1
    }

    /// The largest last-issued value from which `n` more values still fit, if any.
    pub fn highest_last_for(&self, n: u64) -> Option<i64> {
        let n = i64::try_from(n).ok()?;
        let highest = self.max.checked_sub(n)?;
        (highest >= self.before_start()).then_some(highest)
    }

    /// Why a stored last-issued value is unusable, if it is.
    pub fn corruption(&self, last: i64) -> Option<String> {
        if last < self.before_start() {
            if last < 0 {
                Some(format!("the counter value {last} is negative"))
            } else {
                Some(format!(
                    "the counter value {last} is below `start` - 1 ({})",
                    self.before_start()
                ))
            }
        } else if last > self.max {
            Some(format!(
                "the counter value {last} is beyond `max` ({})",
                self.max
            ))
        } else {
            None
        }
    }

    /// The range that `n` values after `last` cover, or [`Error::Exhausted`].
    pub fn range_after(&self, counter: &str, last: i64, n: u64) -> Result<IdRange> {
        match self.highest_last_for(n) {
            Some(highest) if last <= highest => {
                Ok(IdRange::new(last + 1, last + n as i64).expect("n >= 1"))
            }
            _ => Err(Error::Exhausted {
                counter: counter.to_owned(),
                requested: n,
                last,
                max: self.max,
                limit: self.limit.key(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_contradictions() {
        assert!(Bounds::new(10, 9).is_err());
        assert!(Bounds::new(i64::MIN, 0).is_err());
        assert!(Bounds::new(5, 5).is_ok());
    }

    #[test]
    fn ranges_and_exhaustion() {
        let b = Bounds::new(1, 10).unwrap();
        assert_eq!(
            b.range_after("c", 0, 3).unwrap(),
            IdRange::new(1, 3).unwrap()
        );
        assert_eq!(
            b.range_after("c", 7, 3).unwrap(),
            IdRange::new(8, 10).unwrap()
        );
        assert!(matches!(
            b.range_after("c", 8, 3),
            Err(Error::Exhausted {
                last: 8,
                max: 10,
                requested: 3,
                ..
            })
        ));
        assert!(b.range_after("c", 10, 1).is_err());
    }

    #[test]
    fn no_overflow_at_i64_max() {
        let b = Bounds::new(1, i64::MAX).unwrap();
        assert_eq!(
            b.range_after("c", i64::MAX - 1, 1).unwrap(),
            IdRange::new(i64::MAX, i64::MAX).unwrap()
        );
        assert!(b.range_after("c", i64::MAX, 1).is_err());
        assert!(b.range_after("c", 0, u64::MAX).is_err());
    }

    #[test]
    fn digit_ranges() {
        let b = Bounds::digits(1).unwrap();
        assert_eq!((b.start, b.max, b.size()), (1, 9, 9));
        let b = Bounds::digits(12).unwrap();
        assert_eq!((b.start, b.max), (100_000_000_000, 999_999_999_999));
        let b = Bounds::digits(18).unwrap();
        assert_eq!((b.start, b.max), (10_i64.pow(17), 10_i64.pow(18) - 1));
        assert!(Bounds::digits(0).is_err());
        assert_eq!(
            Bounds::new(i64::MIN + 1, i64::MAX).unwrap().size(),
            u64::MAX
        );
    }

    #[test]
    fn corruption_reasons() {
        let b = Bounds::new(1, 100).unwrap();
        assert!(b.corruption(0).is_none());
        assert!(b.corruption(100).is_none());
        assert!(b.corruption(-1).unwrap().contains("negative"));
        assert!(b.corruption(101).unwrap().contains("beyond `max`"));
        let b = Bounds::new(1000, 2000).unwrap();
        assert!(b.corruption(5).unwrap().contains("below `start`"));
    }
}
