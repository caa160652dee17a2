//! How many values one round trip reserves.

use std::time::Duration;

use mongo_sequence_rules::{defaults, BatchConfig};

/// How many values one round trip to the counter reserves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Batch {
    /// Always this many (at least 1). `Fixed(1)` caches nothing: at most one round trip per
    /// ID, shared by the callers that wait for the counter together.
    Fixed(u64),
    /// Adapts to the rate of use; see [`AdaptiveBatch`].
    Adaptive(AdaptiveBatch),
}

impl Default for Batch {
    fn default() -> Self {
        Batch::Fixed(defaults::BATCH)
    }
}

impl From<BatchConfig> for Batch {
    fn from(b: BatchConfig) -> Self {
        match b {
            BatchConfig::Fixed(n) => Batch::Fixed(n),
            BatchConfig::Auto { min, max } => Batch::Adaptive(AdaptiveBatch::new(min, max)),
        }
    }
}

/// An adaptive reservation size (the rule of Meituan Leaf's segment mode).
///
/// The first range holds `min` values. Each time a range is used up, the time it lasted decides
/// the next size: under `grow_below` the size doubles (up to `max`), over `shrink_above` it
/// halves (down to `min`), otherwise it stays. A busy process thus makes few round trips, and a
/// quiet one holds (and, if it crashes, loses) few values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    pub fn new(min: u64, max: u64) -> Self {
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
}
