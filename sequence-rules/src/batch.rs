//! `batch`: how many values one round trip reserves.

use std::ops::RangeInclusive;
use std::time::Duration;

use crate::defaults;

/// How many values one round trip to the counter reserves: `batch = 25` (fixed) or
/// `batch = 10..=1000` (adaptive between the bounds).
///
/// ```
/// use sequence_rules::{AdaptiveBatch, Batch};
/// assert_eq!(Batch::from(25), Batch::Fixed(25));
/// assert_eq!(Batch::from(10..=1000), Batch::Adaptive(AdaptiveBatch::new(10, 1000)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Batch {
    /// Always this many (at least 1). `Fixed(1)` caches nothing: at most one round trip per
    /// ID, shared by the callers that wait for the counter together.
    Fixed(u64),
    /// Adapts to the rate of use; see [`AdaptiveBatch`].
    Adaptive(AdaptiveBatch),
}

impl Default for Batch {
    fn default() -> Self {
        Batch::DEFAULT
    }
}

impl From<u64> for Batch {
    fn from(n: u64) -> Self {
        Batch::Fixed(n)
    }
}

impl From<AdaptiveBatch> for Batch {
    fn from(adaptive: AdaptiveBatch) -> Self {
        Batch::Adaptive(adaptive)
    }
}

impl From<RangeInclusive<u64>> for Batch {
    fn from(bounds: RangeInclusive<u64>) -> Self {
        Batch::Adaptive(AdaptiveBatch::new(*bounds.start(), *bounds.end()))
    }
}

impl Batch {
    /// The default: [`defaults::BATCH`], nothing cached.
    pub const DEFAULT: Batch = Batch::Fixed(defaults::BATCH);

    /// Whether values are cached in the process: more than one reserved per round trip.
    pub const fn is_cached(self) -> bool {
        !matches!(self, Batch::Fixed(0 | 1))
    }

    /// The fixed batch size from which a busy cache reserves several batches ahead: when the
    /// values of one batch would run out within a few counter round trips, the next
    /// reservation takes as many batches (in one round trip) as the rate of use needs, up to
    /// [`MAX_AHEAD`](Self::MAX_AHEAD), so that callers do not wait for the counter.
    pub const AHEAD_FROM: u64 = 10;

    /// The most batches one reservation of the cache takes ahead. A process holds at most two
    /// reservations (the one in use and the next), so a crash loses at most
    /// `2 × MAX_AHEAD × batch` values of a batch of [`AHEAD_FROM`](Self::AHEAD_FROM) or more.
    pub const MAX_AHEAD: u64 = 256;

    /// How many batches of `batch` values the next reservation takes, after a reservation of
    /// `len` values lasted `lasted` and the last round trip took `trip`, `ahead` being the
    /// current count: enough that the values left when the next reservation starts (90% of
    /// it) last four round trips at the rate of the last one, never less than half the current
    /// count (so that a pause does not undo it at once), between 1 and
    /// [`MAX_AHEAD`](Self::MAX_AHEAD).
    pub fn ahead(batch: u64, ahead: u64, len: u64, lasted: Duration, trip: Duration) -> u64 {
        let lasted = lasted.as_secs_f64().max(1e-6);
        let per_trip = len as f64 * trip.as_secs_f64() / lasted;
        let wanted = (4.0 * per_trip / (0.9 * batch as f64)).ceil();
        let wanted = if wanted.is_finite() {
            wanted.min(Self::MAX_AHEAD as f64) as u64
        } else {
            Self::MAX_AHEAD
        };
        wanted.max(ahead / 2).clamp(1, Self::MAX_AHEAD)
    }
}

/// An adaptive reservation size (the rule of Meituan Leaf's segment mode).
///
/// The first range holds `min` values. Each time a range is used up, the time it lasted decides
/// the next size: under `grow_below` the size doubles (up to `max`), over `shrink_above` it
/// halves (down to `min`), otherwise it stays. A busy process thus makes few round trips, and a
/// quiet one holds (and, if it crashes, loses) few values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AdaptiveBatch {
    /// Smallest and first reservation size.
    pub min: u64,
    /// Largest reservation size.
    pub max: u64,
    /// A range used up faster than this doubles the next one.
    pub grow_below: Duration,
    /// A range that lasted longer than this halves the next one.
    pub shrink_above: Duration,
}

impl AdaptiveBatch {
    /// Sizes between `min` and `max`; grows below 15 s, shrinks above 60 s per range.
    pub const fn new(min: u64, max: u64) -> Self {
        AdaptiveBatch {
            min,
            max,
            grow_below: Duration::from_secs(defaults::AUTO_GROW_BELOW_SECS),
            shrink_above: Duration::from_secs(defaults::AUTO_SHRINK_ABOVE_SECS),
        }
    }

    /// Sets the duration under which a used-up range doubles the next one.
    pub fn grow_below(mut self, d: Duration) -> Self {
        self.grow_below = d;
        self
    }

    /// Sets the duration over which a used-up range halves the next one.
    pub fn shrink_above(mut self, d: Duration) -> Self {
        self.shrink_above = d;
        self
    }

    /// The size after a range of `size` values lasted `lasted`.
    pub fn next_size(&self, size: u64, lasted: Duration) -> u64 {
        if lasted < self.grow_below {
            size.saturating_mul(2).min(self.max)
        } else if lasted > self.shrink_above {
            (size / 2).max(self.min)
        } else {
            size
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_rule() {
        let a = AdaptiveBatch::new(10, 100);
        assert_eq!(a.next_size(10, Duration::from_secs(1)), 20);
        assert_eq!(a.next_size(80, Duration::from_secs(1)), 100);
        assert_eq!(a.next_size(40, Duration::from_secs(30)), 40);
        assert_eq!(a.next_size(40, Duration::from_secs(90)), 20);
        assert_eq!(a.next_size(10, Duration::from_secs(90)), 10);
    }

    #[test]
    fn ranges_ahead_follow_the_rate() {
        let ms = Duration::from_millis;
        // 1000 values in 100 ms, round trips of 1 ms: 10 values per trip, one batch is plenty.
        assert_eq!(Batch::ahead(1000, 1, 1000, ms(100), ms(1)), 1);
        // 1000 values in 1 ms: 1000 per trip; 4 trips' worth is 4.4 batches.
        assert_eq!(Batch::ahead(1000, 1, 1000, ms(1), ms(1)), 5);
        // Faster still: bounded.
        assert_eq!(
            Batch::ahead(1000, 1, 1000, Duration::ZERO, ms(1)),
            Batch::MAX_AHEAD
        );
        // A pause halves the count, one step at a time.
        assert_eq!(
            Batch::ahead(1000, 16, 16_000, Duration::from_secs(60), ms(1)),
            8
        );
        assert_eq!(
            Batch::ahead(1000, 2, 2000, Duration::from_secs(60), ms(1)),
            1
        );
    }
}
