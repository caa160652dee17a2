//! The compile-time configuration a `#[derive(SequentialId)]` model carries.

use std::time::Duration;

use sequence_rules::encoding::{CheckDigit, Encoding};
use sequence_rules::template::Template;
use sequence_rules::{
    self as rules, defaults, Batch, FilterField, Layout, Stores, Strategy, Unique,
};

use super::sequence_options::SequenceOptions;

/// The configuration of a model's sequence, as written in its `#[seq(...)]` attributes: the
/// keys of [`SequenceOptions`] under the same names, each at its default unless written, and
/// where the documents store the ID and the scope fields.
///
/// It is a constant ([`SequentialId::SEQUENCE`](crate::SequentialId::SEQUENCE)), built with
/// `const` setters, so generic code can read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SequenceConfig {
    /// The counter's name: the `_id` of its counter document.
    pub name: &'static str,
    /// Values reserved per round trip and handed out from memory.
    pub batch: Batch,
    /// Period prefix pattern.
    pub prefix: Option<&'static str>,
    /// IANA time zone in which periods begin and end.
    pub tz: Option<&'static str>,
    /// Digits of the zero-padded counter part of an ID.
    pub width: Option<u8>,
    /// Exact number of digits of every ID, without a prefix.
    pub digits: Option<u8>,
    /// The template that places the number, its check digits and the period.
    pub format: Option<&'static str>,
    /// Check digits after the number.
    pub check_digit: Option<CheckDigit>,
    /// How the number is written.
    pub encoding: Encoding,
    /// The alphabet of `encoding = "sqids"` (`None`: Sqids' default).
    pub alphabet: Option<&'static str>,
    /// The shortest Sqids ID, in characters.
    pub min_length: u32,
    /// The first value a new counter issues.
    pub start: i64,
    /// The largest value ever issued.
    pub max: i64,
    /// How IDs are made.
    pub strategy: Strategy,
    /// Counter documents of the ranges strategy.
    pub shards: u32,
    /// Draws of the random strategy after a collision, before giving up.
    pub retries: u32,
    /// Fields of the document whose values each get a counter of their own.
    pub scope: &'static [&'static str],
    /// The collection holding the counters.
    pub counters: &'static str,
    /// How counter documents are found.
    pub layout: Layout,
    /// The name of the counter field.
    pub field: &'static str,
    /// What the counter field holds.
    pub stores: Stores,
    /// The filter that finds counter documents (empty: the layout's).
    pub filter: &'static [FilterField<&'static str>],
    /// What keeps two documents from holding one ID.
    pub unique: Unique,
    /// The proxy collection of `unique = "proxy"`.
    pub proxy: Option<&'static str>,
    /// Whether the counter update and the insert share one transaction.
    pub gapless: bool,
    /// How long a gapless insert retries transient transaction errors.
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
            batch: Batch::DEFAULT,
            prefix: None,
            tz: None,
            width: None,
            digits: None,
            format: None,
            check_digit: None,
            encoding: Encoding::Decimal,
            alphabet: None,
            min_length: 0,
            start: defaults::START,
            max: defaults::MAX,
            strategy: Strategy::Counter,
            shards: defaults::SHARDS,
            retries: defaults::RETRIES,
            scope: &[],
            counters: defaults::COUNTERS,
            layout: Layout::Default,
            field: defaults::COUNTER_FIELD,
            stores: Stores::LastIssued,
            filter: &[],
            unique: Unique::Index,
            proxy: None,
            gapless: false,
            transaction_timeout: defaults::TRANSACTION_TIMEOUT,
            id_field: "_id",
            scope_fields: &[],
        }
    }

    /// Sets the values reserved per round trip.
    pub const fn batch(mut self, batch: Batch) -> Self {
        self.batch = batch;
        self
    }

    /// Sets the period prefix pattern.
    pub const fn prefix(mut self, pattern: &'static str) -> Self {
        self.prefix = Some(pattern);
        self
    }

    /// Sets the IANA time zone of periods.
    pub const fn tz(mut self, zone: &'static str) -> Self {
        self.tz = Some(zone);
        self
    }

    /// Sets the digits of the zero-padded counter part of an ID.
    pub const fn width(mut self, digits: u8) -> Self {
        self.width = Some(digits);
        self
    }

    /// Sets the exact number of digits of every ID.
    pub const fn digits(mut self, digits: u8) -> Self {
        self.digits = Some(digits);
        self
    }

    /// Sets the template that places the number, its check digits and the period.
    pub const fn format(mut self, template: &'static str) -> Self {
        self.format = Some(template);
        self
    }

    /// Sets the check digits after the number.
    pub const fn check_digit(mut self, algorithm: CheckDigit) -> Self {
        self.check_digit = Some(algorithm);
        self
    }

    /// Sets how the number is written.
    pub const fn encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        self
    }

    /// Sets the alphabet of `encoding = "sqids"`.
    pub const fn alphabet(mut self, alphabet: &'static str) -> Self {
        self.alphabet = Some(alphabet);
        self
    }

    /// Sets the shortest Sqids ID, in characters.
    pub const fn min_length(mut self, min_length: u32) -> Self {
        self.min_length = min_length;
        self
    }

    /// Sets the first value a new counter issues.
    pub const fn start(mut self, start: i64) -> Self {
        self.start = start;
        self
    }

    /// Sets the largest value ever issued.
    pub const fn max(mut self, max: i64) -> Self {
        self.max = max;
        self
    }

    /// Sets how IDs are made.
    pub const fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Sets the number of counter documents of the ranges strategy.
    pub const fn shards(mut self, shards: u32) -> Self {
        self.shards = shards;
        self
    }

    /// Sets the draws of the random strategy after a collision.
    pub const fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// Sets the fields of the document whose values each get a counter of their own.
    pub const fn scope(mut self, fields: &'static [&'static str]) -> Self {
        self.scope = fields;
        self
    }

    /// Sets the collection holding the counters.
    pub const fn counters(mut self, collection: &'static str) -> Self {
        self.counters = collection;
        self
    }

    /// Sets which convention the counter documents follow; `counters` and `field` become the
    /// layout's, unless they were set to something else already.
    pub const fn layout(mut self, layout: Layout) -> Self {
        if const_eq(self.counters, self.layout.counters()) {
            self.counters = layout.counters();
        }
        if const_eq(self.field, self.layout.field()) {
            self.field = layout.field();
        }
        self.layout = layout;
        self
    }

    /// Sets the name of the counter field.
    pub const fn field(mut self, field: &'static str) -> Self {
        self.field = field;
        self
    }

    /// Sets what the counter field holds.
    pub const fn stores(mut self, stores: Stores) -> Self {
        self.stores = stores;
        self
    }

    /// Sets the filter that finds counter documents.
    pub const fn filter(mut self, fields: &'static [FilterField<&'static str>]) -> Self {
        self.filter = fields;
        self
    }

    /// Sets what keeps two documents from holding one ID.
    pub const fn unique(mut self, unique: Unique) -> Self {
        self.unique = unique;
        self
    }

    /// Sets the proxy collection of `unique = "proxy"`.
    pub const fn proxy(mut self, collection: &'static str) -> Self {
        self.proxy = Some(collection);
        self
    }

    /// Sets whether the counter update and the insert share one transaction.
    pub const fn gapless(mut self, gapless: bool) -> Self {
        self.gapless = gapless;
        self
    }

    /// Sets how long a gapless insert retries transient transaction errors.
    pub const fn transaction_timeout(mut self, timeout: Duration) -> Self {
        self.transaction_timeout = timeout;
        self
    }

    /// The runtime options this configuration describes.
    pub fn options(&self) -> SequenceOptions {
        let SequenceConfig {
            name,
            batch,
            prefix,
            tz,
            width,
            digits,
            format,
            check_digit,
            encoding,
            alphabet,
            min_length,
            start,
            max,
            strategy,
            shards,
            retries,
            scope,
            counters,
            layout,
            field,
            stores,
            filter,
            unique,
            proxy,
            gapless,
            transaction_timeout,
            id_field,
            scope_fields: _,
        } = *self;
        let mut options = SequenceOptions::builder(name).build();
        // Every option, so that a key added to one struct and not the other does not compile.
        let SequenceOptions {
            name: _,
            batch: o_batch,
            prefix: o_prefix,
            tz: o_tz,
            width: o_width,
            digits: o_digits,
            format: o_format,
            check_digit: o_check_digit,
            encoding: o_encoding,
            alphabet: o_alphabet,
            min_length: o_min_length,
            start: o_start,
            max: o_max,
            strategy: o_strategy,
            shards: o_shards,
            retries: o_retries,
            scope: o_scope,
            counters: o_counters,
            layout: o_layout,
            field: o_field,
            stores: o_stores,
            filter: o_filter,
            unique: o_unique,
            proxy: o_proxy,
            gapless: o_gapless,
            transaction_timeout: o_transaction_timeout,
            prefetch_at: _,
            write_concern: _,
            id_field: o_id_field,
        } = &mut options;
        *o_batch = batch;
        *o_prefix = prefix.map(str::to_owned);
        *o_tz = tz.map(str::to_owned);
        *o_width = width;
        *o_digits = digits;
        *o_format = format.map(str::to_owned);
        *o_check_digit = check_digit;
        *o_encoding = encoding;
        *o_alphabet = alphabet.map(str::to_owned);
        *o_min_length = min_length;
        *o_start = start;
        *o_max = max;
        *o_strategy = strategy;
        *o_shards = shards;
        *o_retries = retries;
        *o_scope = scope.iter().map(|s| (*s).to_owned()).collect();
        *o_counters = counters.to_owned();
        *o_layout = layout;
        *o_field = field.to_owned();
        *o_stores = stores;
        *o_filter = filter.iter().map(FilterField::to_owned).collect();
        *o_unique = unique;
        *o_proxy = proxy.map(str::to_owned);
        *o_gapless = gapless;
        *o_transaction_timeout = transaction_timeout;
        *o_id_field = id_field.to_owned();
        options
    }
}

impl SequenceConfig {
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

    /// The proxy collection of `unique = "proxy"` for the target collection `collection`:
    /// `proxy`, or `<collection>.claims.<ID field>`.
    pub(crate) fn proxy_collection(&self, collection: &str) -> String {
        match self.proxy {
            Some(name) => name.to_owned(),
            None => rules::default_proxy(collection, self.id_field),
        }
    }

    /// Where a claim of the proxy collection holds the ID, and the scope values in `scope`
    /// order: its `_id`, or with a scope `_id.id` and `_id.<stored scope field>`.
    pub(crate) fn claim_fields(&self) -> (&'static str, Vec<String>) {
        if self.scope.is_empty() {
            return ("_id", Vec::new());
        }
        let scope = self
            .stored_scope()
            .map(|(_, stored)| format!("_id.{stored}"))
            .collect();
        ("_id.id", scope)
    }

    /// For a sequence whose values [`options`](Self::options) makes a counter keyed by its
    /// name alone (no period, scope or shard) and cached in the process (derived models take
    /// such values straight from the process's cache of the counter): whether the IDs are more
    /// than the value (padding, check digits, an encoding, a template without date fields),
    /// which [`SequentialId`](crate::SequentialId)'s inserts then render. `None` for other
    /// sequences.
    pub(crate) const fn cached_rendering(&self) -> Option<bool> {
        let dated = match self.format {
            Some(template) => Template::has_date_field(template),
            None => false,
        };
        let one_counter = matches!(self.strategy, rules::Strategy::Counter)
            && self.scope.is_empty()
            && self.prefix.is_none()
            && !dated
            && !self.gapless;
        let rendered = self.width.is_some()
            || self.format.is_some()
            || self.check_digit.is_some()
            || !matches!(self.encoding, Encoding::Decimal);
        if one_counter && self.batch.is_cached() {
            Some(rendered)
        } else {
            None
        }
    }
}

/// Whether two texts are equal, in a `const fn`.
const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
