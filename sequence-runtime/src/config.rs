//! The compile-time configuration a `#[derive(SequentialId)]` model carries.

use mongodb::Database;

use crate::layout::CounterLayout;
use crate::options::{AdaptiveBatch, Batch, SequenceOptions};
use crate::sequence::Sequence;

/// The configuration of a model's sequence, as written in its `#[seq(...)]` attributes.
///
/// It is a constant ([`SequentialId::SEQUENCE`](crate::SequentialId::SEQUENCE)), built with
/// `const` methods, so generic code can read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SequenceConfig {
    /// Counter name.
    pub name: &'static str,
    /// Counters collection.
    pub counters: &'static str,
    /// Values reserved per round trip.
    pub batch: BatchConfig,
    /// First value issued.
    pub start: i64,
    /// Largest value issued.
    pub max: i64,
    /// Period prefix pattern (`"YYMMDD"`, `"INV-YYYYMM-"`).
    pub prefix: Option<&'static str>,
    /// IANA time zone that decides when a period ends (default UTC).
    pub tz: Option<&'static str>,
    /// Digits of the counter part of a formatted ID.
    pub width: Option<u8>,
    /// Exact number of digits of every ID (no prefix).
    pub digits: Option<u8>,
    /// How IDs are made.
    pub strategy: Strategy,
    /// Counter documents of the sharded strategy.
    pub shards: Option<u32>,
    /// Draws of the random strategy after a collision, before giving up.
    pub retries: Option<u32>,
    /// Fields whose values each get a counter of their own.
    pub scope: &'static [&'static str],
    /// Shape of the counter documents.
    pub layout: LayoutConfig,
    /// Whether the counter update and the insert share one transaction.
    pub gapless: bool,
    /// How long a gapless insert retries transient transaction errors, in milliseconds
    /// (default 30 s).
    pub timeout_ms: Option<u64>,
}

/// `strategy = "..."`: how IDs are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Strategy {
    /// One counter document, optionally with cached batches.
    #[default]
    Counter,
    /// Several counter documents, each owning a slice of the ID space.
    Sharded,
    /// Random IDs, uniqueness enforced by the database.
    Random,
    /// UUID version 4.
    Uuid,
    /// UUID version 7.
    UuidV7,
    /// ObjectId.
    ObjectId,
}

/// `layout = "..."`: the shape of the counter documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LayoutConfig {
    /// `{ _id: <key>, seq: <last issued> }`.
    #[default]
    Default,
    /// mongoose-sequence's `{ id, reference_value, seq }`.
    Mongoose,
}

/// `batch = N` or `batch = "auto"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchConfig {
    /// A fixed size.
    Fixed(u64),
    /// Adaptive between `min` and `max`.
    Auto {
        /// Smallest size.
        min: u64,
        /// Largest size.
        max: u64,
    },
}

impl SequenceConfig {
    /// A configuration named `name` with every other key at its default.
    pub const fn new(name: &'static str) -> Self {
        SequenceConfig {
            name,
            counters: "counters",
            batch: BatchConfig::Fixed(1),
            start: 1,
            max: i64::MAX,
            prefix: None,
            tz: None,
            width: None,
            digits: None,
            strategy: Strategy::Counter,
            shards: None,
            retries: None,
            scope: &[],
            layout: LayoutConfig::Default,
            gapless: false,
            timeout_ms: None,
        }
    }

    /// Sets the counters collection.
    pub const fn counters(mut self, counters: &'static str) -> Self {
        self.counters = counters;
        self
    }

    /// Sets a fixed batch size.
    pub const fn batch(mut self, n: u64) -> Self {
        self.batch = BatchConfig::Fixed(n);
        self
    }

    /// Sets an adaptive batch size.
    pub const fn batch_auto(mut self, min: u64, max: u64) -> Self {
        self.batch = BatchConfig::Auto { min, max };
        self
    }

    /// Sets the first value.
    pub const fn start(mut self, start: i64) -> Self {
        self.start = start;
        self
    }

    /// Sets the largest value.
    pub const fn max(mut self, max: i64) -> Self {
        self.max = max;
        self
    }

    /// Sets the period prefix pattern.
    pub const fn prefix(mut self, prefix: &'static str) -> Self {
        self.prefix = Some(prefix);
        self
    }

    /// Sets the time zone of periods.
    pub const fn tz(mut self, tz: &'static str) -> Self {
        self.tz = Some(tz);
        self
    }

    /// Sets the width of the counter part.
    pub const fn width(mut self, width: u8) -> Self {
        self.width = Some(width);
        self
    }

    /// Sets the exact number of digits.
    pub const fn digits(mut self, digits: u8) -> Self {
        self.digits = Some(digits);
        self
    }

    /// Sets the strategy.
    pub const fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Sets the number of shards.
    pub const fn shards(mut self, shards: u32) -> Self {
        self.shards = Some(shards);
        self
    }

    /// Sets the number of draws after a collision.
    pub const fn retries(mut self, retries: u32) -> Self {
        self.retries = Some(retries);
        self
    }

    /// Sets the scope fields.
    pub const fn scope(mut self, scope: &'static [&'static str]) -> Self {
        self.scope = scope;
        self
    }

    /// Sets the counter layout.
    pub const fn layout(mut self, layout: LayoutConfig) -> Self {
        self.layout = layout;
        self
    }

    /// Makes the sequence gapless.
    pub const fn gapless(mut self, gapless: bool) -> Self {
        self.gapless = gapless;
        self
    }

    /// Sets how long a gapless insert retries transient transaction errors.
    pub const fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// How long a gapless insert retries transient transaction errors.
    pub fn transaction_timeout(&self) -> std::time::Duration {
        self.timeout_ms.map_or(
            crate::gapless::DEFAULT_TRANSACTION_TIMEOUT,
            std::time::Duration::from_millis,
        )
    }

    /// The runtime options this configuration describes.
    ///
    /// (The cached path of `SequentialId::next_id` relies on the counter key being the name
    /// and `prefetch_at` its default; keep them in step.)
    pub fn options(&self) -> SequenceOptions {
        let mut options = SequenceOptions::builder(self.name)
            .counters(self.counters)
            .start(self.start)
            .max(self.max)
            .build();
        options.batch = self.batch.into();
        options.strategy = self.strategy;
        if let Some(shards) = self.shards {
            options.shards = shards;
        }
        if let Some(retries) = self.retries {
            options.retries = retries;
        }
        options.prefix = self.prefix.map(str::to_owned);
        options.tz = self.tz.map(str::to_owned);
        options.width = self.width;
        options.digits = self.digits;
        options.scope = self.scope.iter().map(|f| (*f).to_owned()).collect();
        if self.layout == LayoutConfig::Mongoose {
            options.layout = CounterLayout::mongoose();
        }
        options
    }

    /// The sequence of this configuration in `db`. An invalid configuration (which the derive
    /// rules out at compile time) yields a sequence whose every operation returns the error.
    pub fn sequence(&self, db: &Database) -> Sequence {
        Sequence::new(db, self.options()).unwrap_or_else(Sequence::failing)
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
