//! The compile-time configuration a `#[derive(SequentialId)]` model carries.

use std::time::Duration;

use mongo_sequence_rules::{defaults, LayoutConfig, Stores, Strategy};

use super::batch::{AdaptiveBatch, Batch};
use super::layout::CounterLayout;
use super::sequence_options::SequenceOptions;

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
    pub batch: Batch,
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
    /// Counter documents of the ranges strategy.
    pub shards: Option<u32>,
    /// Draws of the random strategy after a collision, before giving up.
    pub retries: Option<u32>,
    /// Fields whose values each get a counter of their own.
    pub scope: &'static [&'static str],
    /// Shape of the counter documents.
    pub layout: LayoutConfig,
    /// The counter field's name (default `seq`).
    pub field: Option<&'static str>,
    /// What the counter field holds.
    pub stores: Stores,
    /// Whether the counter update and the insert share one transaction.
    pub gapless: bool,
    /// How long a gapless insert retries transient transaction errors (default 30 s).
    pub transaction_timeout: Duration,
    /// The name the documents store the ID under (default `_id`): where inserts that meet
    /// stored IDs, and `sync_counters`, look for them.
    pub id_field: &'static str,
    /// The names the documents store the `scope` fields under, in `scope` order (empty: the
    /// `scope` names themselves).
    pub scope_fields: &'static [&'static str],
}

impl SequenceConfig {
    /// A configuration named `name` with every other key at its default.
    pub const fn new(name: &'static str) -> Self {
        SequenceConfig {
            name,
            counters: defaults::COUNTERS,
            batch: Batch::Fixed(defaults::BATCH),
            start: defaults::START,
            max: defaults::MAX,
            prefix: None,
            tz: None,
            width: None,
            digits: None,
            strategy: Strategy::Counter,
            shards: None,
            retries: None,
            scope: &[],
            layout: LayoutConfig::Default,
            field: None,
            stores: Stores::LastIssued,
            gapless: false,
            transaction_timeout: Duration::from_millis(defaults::TRANSACTION_TIMEOUT_MS),
            id_field: "_id",
            scope_fields: &[],
        }
    }

    /// Sets the counters collection.
    pub const fn counters(mut self, counters: &'static str) -> Self {
        self.counters = counters;
        self
    }

    /// Sets a fixed batch size.
    pub const fn batch(mut self, n: u64) -> Self {
        self.batch = Batch::Fixed(n);
        self
    }

    /// Sets an adaptive batch size.
    pub const fn adaptive_batch(mut self, min: u64, max: u64) -> Self {
        self.batch = Batch::Adaptive(AdaptiveBatch::new(min, max));
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

    /// Sets the counter field's name.
    pub const fn field(mut self, field: &'static str) -> Self {
        self.field = Some(field);
        self
    }

    /// Sets what the counter field holds.
    pub const fn stores(mut self, stores: Stores) -> Self {
        self.stores = stores;
        self
    }

    /// Makes the sequence gapless.
    pub const fn gapless(mut self, gapless: bool) -> Self {
        self.gapless = gapless;
        self
    }

    /// Sets how long a gapless insert retries transient transaction errors.
    pub const fn transaction_timeout(mut self, timeout: Duration) -> Self {
        self.transaction_timeout = timeout;
        self
    }

    /// Sets the name the documents store the ID under.
    pub const fn id_field(mut self, field: &'static str) -> Self {
        self.id_field = field;
        self
    }

    /// Sets the names the documents store the `scope` fields under, in `scope` order.
    pub const fn scope_fields(mut self, fields: &'static [&'static str]) -> Self {
        self.scope_fields = fields;
        self
    }

    /// The names the documents store the `scope` fields under, with the `scope` names they
    /// stand for.
    pub(crate) fn stored_scope(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
        let stored = if self.scope_fields.len() == self.scope.len() {
            self.scope_fields
        } else {
            self.scope
        };
        self.scope.iter().copied().zip(stored.iter().copied())
    }

    /// The runtime options this configuration describes.
    pub fn options(&self) -> SequenceOptions {
        let mut options = SequenceOptions::builder(self.name)
            .counters(self.counters)
            .start(self.start)
            .max(self.max)
            .strategy(self.strategy)
            .scope(self.scope.iter().copied())
            .gapless(self.gapless)
            .transaction_timeout(self.transaction_timeout)
            .build();
        options.batch = self.batch;
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
        if self.layout == LayoutConfig::Mongoose {
            options.layout = CounterLayout::mongoose();
        }
        if let Some(field) = self.field {
            options.layout.field = field.to_owned();
        }
        options.layout.stores = self.stores;
        options
    }

    /// The batch of a sequence whose values [`options`](Self::options) makes a plain counter
    /// keyed by its name alone (no period, scope, padding or shard) and cached in the process:
    /// derived models take such values straight from the process's cache of the counter.
    pub(crate) fn cached_batch(&self) -> Option<Batch> {
        let plain = self.strategy == Strategy::Counter
            && self.scope.is_empty()
            && self.prefix.is_none()
            && self.width.is_none()
            && !self.gapless;
        let cached = !matches!(self.batch, Batch::Fixed(1));
        (plain && cached).then_some(self.batch)
    }
}
