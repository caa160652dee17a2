//! [`SequenceOptions`] and its builder.

use std::sync::Arc;
use std::time::Duration;

use mongo_sequence_rules::{self as rules, defaults, LayoutConfig, Spec, Stores, Strategy};
use mongodb::options::WriteConcern;

use super::batch::{AdaptiveBatch, Batch};
use super::layout::CounterLayout;
use crate::error::Result;
use crate::values::{Bounds, Clock, Format, SystemClock};

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
    /// The largest value ever issued (default `i64::MAX`); past it, [`Error::Exhausted`](crate::Error::Exhausted).
    pub max: i64,
    /// Write concern of counter updates (default `majority`; `None` uses the collection's).
    pub write_concern: Option<WriteConcern>,
    /// Shape of the counter documents.
    pub layout: CounterLayout,
    /// How IDs are made (default [`Strategy::Counter`]).
    pub strategy: Strategy,
    /// Counter documents of the ranges strategy, each owning a slice of `start..=max`
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
    /// Whether the counter update and the insert share one transaction, so that an insert
    /// that fails consumes no number (default `false`). A gapless sequence hands out numbers
    /// only inside a session: [`Sequence::next`](crate::Sequence::next) and
    /// [`Sequence::reserve`](crate::Sequence::reserve) refuse.
    pub gapless: bool,
    /// How long a gapless insert retries transient transaction errors (default 30 s).
    pub transaction_timeout: Duration,
}

impl SequenceOptions {
    /// A builder for a sequence named `name`, with every other option at its default.
    pub fn builder(name: impl Into<String>) -> SequenceOptionsBuilder {
        SequenceOptionsBuilder {
            options: SequenceOptions {
                name: name.into(),
                counters: defaults::COUNTERS.to_owned(),
                batch: Batch::default(),
                prefetch_at: defaults::PREFETCH_AT,
                start: defaults::START,
                max: defaults::MAX,
                write_concern: Some(WriteConcern::majority()),
                layout: CounterLayout::default(),
                strategy: Strategy::default(),
                shards: defaults::SHARDS,
                retries: defaults::RETRIES,
                prefix: None,
                tz: None,
                width: None,
                digits: None,
                scope: Vec::new(),
                clock: Arc::new(SystemClock),
                gapless: false,
                transaction_timeout: Duration::from_millis(defaults::TRANSACTION_TIMEOUT_MS),
            },
        }
    }

    /// Checks every option with the rules `#[derive(SequentialId)]` checks at compile time;
    /// returns the bounds they describe. Fails with [`Error::InvalidName`](crate::Error::InvalidName) or
    /// [`Error::InvalidConfig`](crate::Error::InvalidConfig), the first rule broken.
    pub fn validate(&self) -> Result<Bounds> {
        self.checked().map(|(bounds, _)| bounds)
    }

    /// Checks every option; returns the bounds and the format they describe.
    pub(crate) fn checked(&self) -> Result<(Bounds, Format)> {
        let checked = rules::check(&self.spec()).map_err(|mut broken| broken.swap_remove(0))?;
        let bounds = Bounds::new(checked.start, checked.max)?;
        let format = Format::new(&self.name, checked.pattern, checked.tz, checked.width);
        Ok((bounds, format))
    }

    /// The options as the rules see them: an option counts as given when it differs from its
    /// default.
    fn spec(&self) -> Spec<'_> {
        let (batch, batch_min, batch_max) = match self.batch {
            Batch::Fixed(n) => (
                given(n, defaults::BATCH).map(rules::Batch::Fixed),
                None,
                None,
            ),
            Batch::Adaptive(a) => (Some(rules::Batch::Auto), Some(a.min), Some(a.max)),
        };
        let timeout_ms = self.transaction_timeout.as_millis();
        Spec {
            counters: given(self.counters.as_str(), defaults::COUNTERS),
            batch,
            batch_min,
            batch_max,
            prefix: self.prefix.as_deref(),
            tz: self.tz.as_deref(),
            width: self.width.map(u64::from),
            digits: self.digits.map(u64::from),
            start: given(self.start, defaults::START),
            max: given(self.max, defaults::MAX),
            strategy: given(self.strategy, Strategy::default()),
            shards: given(self.shards, defaults::SHARDS).map(u64::from),
            retries: given(self.retries, defaults::RETRIES).map(u64::from),
            scope: self.scope.iter().map(String::as_str).collect(),
            layout: self.layout.is_mongoose().then_some(LayoutConfig::Mongoose),
            counter_field: given(self.layout.field.as_str(), defaults::COUNTER_FIELD),
            stores: given(self.layout.stores, Stores::default()),
            gapless: self.gapless.then_some(true),
            timeout_ms: given(timeout_ms, u128::from(defaults::TRANSACTION_TIMEOUT_MS))
                .map(|ms| u64::try_from(ms).unwrap_or(u64::MAX)),
            prefetch_at: Some(self.prefetch_at),
            ..Spec::new(&self.name)
        }
    }
}

/// `value`, unless it is the default.
fn given<T: PartialEq>(value: T, default: T) -> Option<T> {
    (value != default).then_some(value)
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

    /// Makes IDs with the ranges strategy: `shards` counter documents, each owning a slice of
    /// the space, one picked at random per reservation.
    ///
    /// ```
    /// # use mongo_sequence_runtime::{SequenceOptions, Strategy};
    /// let opts = SequenceOptions::builder("account").ranges(1000).digits(12).build();
    /// assert_eq!((opts.strategy, opts.shards), (Strategy::Ranges, 1000));
    /// ```
    pub fn ranges(mut self, shards: u32) -> Self {
        self.options.strategy = Strategy::Ranges;
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

    /// Makes the sequence gapless (see [`SequenceOptions::gapless`]).
    pub fn gapless(mut self, gapless: bool) -> Self {
        self.options.gapless = gapless;
        self
    }

    /// Sets how long a gapless insert retries transient transaction errors.
    pub fn transaction_timeout(mut self, timeout: Duration) -> Self {
        self.options.transaction_timeout = timeout;
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
    use crate::error::Error;

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
        assert!(SequenceOptions::builder("x").build().validate().is_ok());
    }

    #[test]
    fn only_options_that_differ_from_their_default_count_as_given() {
        let defaults = SequenceOptions::builder("x").build();
        let spec = defaults.spec();
        for key in rules::Key::ALL {
            assert_eq!(spec.given(key), key == rules::Key::Name, "{key}");
        }
        let o = SequenceOptions::builder("x")
            .ranges(4)
            .layout(CounterLayout::mongoose())
            .transaction_timeout(Duration::from_secs(5))
            .build();
        let spec = o.spec();
        assert_eq!(spec.shards, Some(4));
        assert_eq!(spec.layout, Some(LayoutConfig::Mongoose));
        assert_eq!(spec.timeout_ms, Some(5_000));
        assert_eq!(spec.counter_field, None);
    }
}
