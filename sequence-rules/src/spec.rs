//! A configuration as written: [`Spec`], every key optional.

use std::time::Duration;

use crate::batch::Batch;
use crate::encoding::{CheckDigit, Encoding};
use crate::filter::FilterField;
use crate::id::IdField;
use crate::key::Key;
use crate::layout::Layout;
use crate::strategy::{Stores, Strategy, Unique};

/// A configuration as written: every key that was not given is `None` (or empty) and takes its
/// default from [`defaults`](crate::defaults).
///
/// The derive fills it from `#[seq(...)]`; the runtime from its options, where an option counts
/// as given when it differs from its default. Each field is the [`Key`] of the same name.
///
/// Build one with struct update syntax from [`Spec::new`], so that keys added later keep their
/// defaults.
#[derive(Clone, Debug, Default)]
pub struct Spec<'a> {
    /// The counter's name: the `_id` of its counter document.
    pub name: &'a str,
    /// Values reserved per round trip: `25`, or the bounds of an adaptive batch.
    pub batch: Option<Batch>,
    /// The period prefix pattern.
    pub prefix: Option<&'a str>,
    /// The IANA time zone of periods.
    pub tz: Option<&'a str>,
    /// Digits of the zero-padded counter part of an ID.
    pub width: Option<u8>,
    /// Exact number of digits of every ID, without a prefix.
    pub digits: Option<u8>,
    /// The template that places the number, its check digits and the period.
    pub format: Option<&'a str>,
    /// Check digits after the number.
    pub check_digit: Option<CheckDigit>,
    /// How the number is written.
    pub encoding: Option<Encoding>,
    /// The alphabet of Sqids.
    pub alphabet: Option<&'a str>,
    /// The shortest Sqids ID.
    pub min_length: Option<u32>,
    /// The first value a new counter issues.
    pub start: Option<i64>,
    /// The largest value ever issued.
    pub max: Option<i64>,
    /// How IDs are made.
    pub strategy: Option<Strategy>,
    /// Counter documents of the ranges strategy.
    pub shards: Option<u32>,
    /// Draws of the random strategy after a collision.
    pub retries: Option<u32>,
    /// Fields of the document whose values each get a counter of their own.
    pub scope: Vec<&'a str>,
    /// The collection holding the counters.
    pub counters: Option<&'a str>,
    /// How counter documents are found.
    pub layout: Option<Layout>,
    /// The name of the counter field.
    pub field: Option<&'a str>,
    /// What the counter field holds.
    pub stores: Option<Stores>,
    /// The filter that finds counter documents (empty: the layout's).
    pub filter: Vec<FilterField<&'a str>>,
    /// What keeps two documents from holding one ID.
    pub unique: Option<Unique>,
    /// The proxy collection of `unique = "proxy"`.
    pub proxy: Option<&'a str>,
    /// Whether the counter update and the insert share one transaction.
    pub gapless: Option<bool>,
    /// How long a gapless insert retries transient transaction errors.
    pub transaction_timeout: Option<Duration>,
    /// The share of a range after which the next one is prefetched (runtime only).
    pub prefetch_at: Option<f64>,
    /// The ID field, when the configuration belongs to a model.
    pub id: Option<IdField<'a>>,
}

impl<'a> Spec<'a> {
    /// A configuration named `name` with no other key given.
    pub fn new(name: &'a str) -> Self {
        Spec {
            name,
            ..Spec::default()
        }
    }

    /// Whether `key` was given.
    pub fn given(&self, key: Key) -> bool {
        match key {
            Key::Name => true,
            Key::Batch => self.batch.is_some(),
            Key::Prefix => self.prefix.is_some(),
            Key::Tz => self.tz.is_some(),
            Key::Width => self.width.is_some(),
            Key::Digits => self.digits.is_some(),
            Key::Format => self.format.is_some(),
            Key::CheckDigit => self.check_digit.is_some(),
            Key::Encoding => self.encoding.is_some(),
            Key::Alphabet => self.alphabet.is_some(),
            Key::MinLength => self.min_length.is_some(),
            Key::Start => self.start.is_some(),
            Key::Max => self.max.is_some(),
            Key::Strategy => self.strategy.is_some(),
            Key::Shards => self.shards.is_some(),
            Key::Retries => self.retries.is_some(),
            Key::Scope => !self.scope.is_empty(),
            Key::Counters => self.counters.is_some(),
            Key::Layout => self.layout.is_some(),
            Key::Field => self.field.is_some(),
            Key::Stores => self.stores.is_some(),
            Key::Filter => !self.filter.is_empty(),
            Key::Unique => self.unique.is_some(),
            Key::Proxy => self.proxy.is_some(),
            Key::Gapless => self.gapless.is_some(),
            Key::TransactionTimeout => self.transaction_timeout.is_some(),
            Key::Crate => false,
        }
    }
}
