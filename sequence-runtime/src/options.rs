//! Options of a sequence, with a builder in the driver's fluent style.

use std::sync::Arc;
use std::time::Duration;

use mongodb::options::WriteConcern;

use crate::bounds::Bounds;
use crate::clock::{Clock, SystemClock};
use crate::config::Strategy;
use crate::error::{Error, Result};
use crate::layout::CounterLayout;
use crate::names::{check_collection_name, check_counter_name, check_field_name};
use crate::period::Format;

/// How many values one round trip to the counter reserves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Batch {
    /// Always this many (at least 1). `Fixed(1)` caches nothing: one round trip per ID.
    Fixed(u64),
    /// Adapts to the rate of use; see [`AdaptiveBatch`].
    Adaptive(AdaptiveBatch),
}

impl Default for Batch {
    fn default() -> Self {
        Batch::Fixed(1)
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
            grow_below: Duration::from_secs(15),
            shrink_above: Duration::from_secs(60),
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

/// Options of one sequence (one counter).
///
/// ```
/// # use mongo_sequence_runtime::{SequenceOptions, Batch};
/// let opts = SequenceOptions::builder("userid").batch(25).start(1000).build();
/// assert_eq!(opts.batch, Batch::Fixed(25));
/// assert_eq!(opts.counters, "counters");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SequenceOptions {
    /// The counter's name: the `_id` of its counter document.
    pub name: String,
    /// The collection holding the counters, in the target collection's database.
    pub counters: String,
    /// Values reserved per round trip.
    pub batch: Batch,
    /// Share of the current range after which the next range is reserved in the background
    /// (0.0 to 1.0; default 0.1). Only used when more than one value is reserved at a time.
    pub prefetch_at: f64,
    /// The first value a new counter issues (default 1).
    pub start: i64,
    /// The largest value ever issued (default `i64::MAX`); past it, [`Error::Exhausted`].
    pub max: i64,
    /// Write concern of counter updates (default `majority`; `None` uses the collection's).
    pub write_concern: Option<WriteConcern>,
    /// Shape of the counter documents.
    pub layout: CounterLayout,
    /// How IDs are made (default [`Strategy::Counter`]).
    pub strategy: Strategy,
    /// Counter documents of the sharded strategy, each owning a slice of `start..=max`
    /// (default 16).
    pub shards: u32,
    /// Draws of the random strategy after a collision, before giving up (default 10).
    pub retries: u32,
    /// Period prefix pattern (`"YYMMDD"`, `"INV-YYYYMM-"`): date tokens `YYYY`, `YY`, `MM`,
    /// `DD`, `HH`, other characters (or text in single quotes) literal. Each period of the
    /// finest date token has a counter of its own. Default: none.
    pub prefix: Option<String>,
    /// IANA time zone in which periods begin and end (default UTC).
    pub tz: Option<String>,
    /// Digits of the counter part of an ID, zero-padded (default 6 with a `prefix`); the counter
    /// stops at `10^width - 1` per period.
    pub width: Option<u8>,
    /// Exact number of digits of every ID, without a prefix: values run from `10^(digits-1)`
    /// to `10^digits - 1` (for the sharded and random strategies: their space).
    pub digits: Option<u8>,
    /// Fields of the document whose values each get a counter of their own (see
    /// [`Sequence::in_scope`](crate::Sequence::in_scope)).
    pub scope: Vec<String>,
    /// Where the current time comes from, for periods (default [`SystemClock`]).
    pub clock: Arc<dyn Clock>,
}

/// The default of [`SequenceOptions::prefetch_at`].
pub(crate) const DEFAULT_PREFETCH_AT: f64 = 0.1;

impl SequenceOptions {
    /// A builder for a sequence named `name`, with every other option at its default.
    pub fn builder(name: impl Into<String>) -> SequenceOptionsBuilder {
        SequenceOptionsBuilder {
            options: SequenceOptions {
                name: name.into(),
                counters: "counters".to_owned(),
                batch: Batch::default(),
                prefetch_at: DEFAULT_PREFETCH_AT,
                start: 1,
                max: i64::MAX,
                write_concern: Some(WriteConcern::majority()),
                layout: CounterLayout::default(),
                strategy: Strategy::Counter,
                shards: 16,
                retries: 10,
                prefix: None,
                tz: None,
                width: None,
                digits: None,
                scope: Vec::new(),
                clock: Arc::new(SystemClock),
            },
        }
    }

    /// Checks every option; returns the bounds they describe.
    pub fn validate(&self) -> Result<Bounds> {
        self.checked().map(|(bounds, _)| bounds)
    }

    /// Checks every option; returns the bounds and the parsed format.
    pub(crate) fn checked(&self) -> Result<(Bounds, Format)> {
        check_counter_name(&self.name)?;
        check_collection_name(&self.counters)?;
        self.layout.validate()?;
        match self.batch {
            Batch::Fixed(0) => {
                return Err(Error::InvalidOptions("`batch` must be at least 1".into()))
            }
            Batch::Adaptive(a) if a.min == 0 || a.min > a.max => {
                return Err(Error::InvalidOptions(format!(
                    "adaptive batch needs 1 <= min <= max, got min {} and max {}",
                    a.min, a.max
                )))
            }
            _ => {}
        }
        if !(0.0..=1.0).contains(&self.prefetch_at) {
            return Err(Error::InvalidOptions(format!(
                "`prefetch_at` must be between 0.0 and 1.0, got {}",
                self.prefetch_at
            )));
        }
        if !self.scope.is_empty() && self.batch != Batch::Fixed(1) {
            return Err(Error::InvalidOptions(
                "`batch` must be 1 with `scope`: scoped counters are reserved per call".into(),
            ));
        }
        for field in &self.scope {
            check_field_name(field)?;
        }
        let space = crate::render::bounds(self)?;
        crate::strategy::validate(self, space)?;
        Ok((space, Format::new(self)?))
    }
}

/// Builds [`SequenceOptions`]; see [`SequenceOptions::builder`].
#[derive(Clone, Debug)]
#[must_use]
pub struct SequenceOptionsBuilder {
    options: SequenceOptions,
}

impl SequenceOptionsBuilder {
    /// Sets the counters collection (default `counters`).
    pub fn counters(mut self, collection: impl Into<String>) -> Self {
        self.options.counters = collection.into();
        self
    }

    /// Reserves `n` values per round trip and hands them out from memory.
    pub fn batch(mut self, n: u64) -> Self {
        self.options.batch = Batch::Fixed(n);
        self
    }

    /// Sets an adaptive reservation size.
    pub fn adaptive_batch(mut self, adaptive: AdaptiveBatch) -> Self {
        self.options.batch = Batch::Adaptive(adaptive);
        self
    }

    /// Sets the share of a range after which the next one is prefetched.
    pub fn prefetch_at(mut self, share: f64) -> Self {
        self.options.prefetch_at = share;
        self
    }

    /// Sets the first value of a new counter.
    pub fn start(mut self, start: i64) -> Self {
        self.options.start = start;
        self
    }

    /// Sets the largest value ever issued.
    pub fn max(mut self, max: i64) -> Self {
        self.options.max = max;
        self
    }

    /// Sets the write concern of counter updates (`None`: the collection's own).
    pub fn write_concern(mut self, wc: Option<WriteConcern>) -> Self {
        self.options.write_concern = wc;
        self
    }

    /// Sets the shape of the counter documents.
    pub fn layout(mut self, layout: CounterLayout) -> Self {
        self.options.layout = layout;
        self
    }

    /// Sets how IDs are made.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.options.strategy = strategy;
        self
    }

    /// Makes IDs with the sharded strategy: `shards` counter documents, each owning a slice of
    /// the space, one picked at random per reservation.
    ///
    /// ```
    /// # use mongo_sequence_runtime::{SequenceOptions, Strategy};
    /// let opts = SequenceOptions::builder("account").sharded(1000).digits(12).build();
    /// assert_eq!((opts.strategy, opts.shards), (Strategy::Sharded, 1000));
    /// ```
    pub fn sharded(mut self, shards: u32) -> Self {
        self.options.strategy = Strategy::Sharded;
        self.options.shards = shards;
        self
    }

    /// Sets how many times the random strategy draws again after a collision.
    pub fn retries(mut self, retries: u32) -> Self {
        self.options.retries = retries;
        self
    }

    /// Sets the period prefix pattern (see [`SequenceOptions::prefix`]).
    pub fn prefix(mut self, pattern: impl Into<String>) -> Self {
        self.options.prefix = Some(pattern.into());
        self
    }

    /// Sets the IANA time zone of periods (default UTC).
    pub fn tz(mut self, tz: impl Into<String>) -> Self {
        self.options.tz = Some(tz.into());
        self
    }

    /// Sets the digits of the zero-padded counter part.
    pub fn width(mut self, width: u8) -> Self {
        self.options.width = Some(width);
        self
    }

    /// Makes every ID exactly `digits` digits long.
    pub fn digits(mut self, digits: u8) -> Self {
        self.options.digits = Some(digits);
        self
    }

    /// Sets the fields whose values each get a counter of their own.
    pub fn scope<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.options.scope = fields.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the clock that decides the current period.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.options.clock = clock;
        self
    }

    /// The options.
    pub fn build(self) -> SequenceOptions {
        self.options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_says_what_is_wrong() {
        let bad = SequenceOptions::builder("x").batch(0).build();
        assert!(bad.validate().unwrap_err().to_string().contains("`batch`"));
        let bad = SequenceOptions::builder("x").start(10).max(5).build();
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("`start` (10)"));
        let bad = SequenceOptions::builder("$x").build();
        assert!(matches!(bad.validate(), Err(Error::InvalidName { .. })));
        let bad = SequenceOptions::builder("x").prefetch_at(1.5).build();
        assert!(bad.validate().is_err());
        let bad = SequenceOptions::builder("x")
            .adaptive_batch(AdaptiveBatch::new(10, 5))
            .build();
        assert!(bad.validate().is_err());
        assert!(SequenceOptions::builder("x").validate_ok());
    }

    impl SequenceOptionsBuilder {
        fn validate_ok(self) -> bool {
            self.build().validate().is_ok()
        }
    }

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
