//! [`SequenceOptions`] and its builder: the keys of `#[seq(...)]` under the same names, and the
//! options only the runtime has.

use std::time::Duration;

use mongodb::options::WriteConcern;
use sequence_rules::encoding::{CheckDigit, Encoding};
use sequence_rules::{
    self as rules, defaults, Batch, FilterField, Layout, Spec, Stores, Strategy, Unique,
};

use crate::error::Result;
use crate::id::{Bounds, Format, Limit, Spelling};

/// Options of one sequence (one counter): the keys of `#[seq(...)]` under the same names, each
/// at its default until set, and the options only the runtime has.
///
/// ```
/// # use sequence_runtime::{SequenceOptions, Batch};
/// let opts = SequenceOptions::builder("userid").batch(25).start(1000).build();
/// assert_eq!(opts.batch, Batch::Fixed(25));
/// assert_eq!(opts.counters, "counters");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SequenceOptions {
    /// The counter's name: the `_id` of its counter document.
    pub name: String,
    /// Values reserved per round trip and handed out from memory: `25`, or `10..=1000` to
    /// adapt between those bounds to the rate of use (default 1).
    pub batch: Batch,
    /// Period prefix pattern (`"YYMMDD"`, `"INV-YYYYMM-"`): date tokens `YYYY`, `YY`, `MM`,
    /// `DD`, `HH`, other characters (or text in single quotes) literal; each period of the
    /// finest date token has a counter of its own.
    pub prefix: Option<String>,
    /// IANA time zone in which periods begin and end (default UTC).
    pub tz: Option<String>,
    /// Digits of the zero-padded counter part of an ID (default 6 with a `prefix`).
    pub width: Option<u8>,
    /// Exact number of digits of every ID, without a prefix.
    pub digits: Option<u8>,
    /// A template that places the number, its check digits and the period in the ID, instead
    /// of `prefix` and `width`: `"ACC-{n:08}-{check}"`, `"{YYYY}/{n:05}/EU"`. `{n}` (or
    /// `{n:08}`, zero-padded) once; `{check}` after it; the date fields `{YYYY}`, `{YY}`,
    /// `{MM}`, `{DD}`, `{HH}` before it; other characters are text (`{{`, `}}` for braces).
    pub format: Option<String>,
    /// Check digits after the number (or where the `format` places `{check}`): Luhn, Damm,
    /// MOD 97-10 over every decimal digit of the ID before them, or Crockford's check symbol
    /// of a Crockford base 32 code.
    pub check_digit: Option<CheckDigit>,
    /// How the number is written: decimal (the default), Crockford base 32 or Sqids.
    pub encoding: Encoding,
    /// The alphabet of `encoding = Sqids` (default: Sqids' own, `a-zA-Z0-9` shuffled).
    pub alphabet: Option<String>,
    /// The shortest Sqids ID, in characters (0 to 255; default 0).
    pub min_length: u32,
    /// The first value a new counter issues (default 1).
    pub start: i64,
    /// The largest value ever issued (default `i64::MAX`).
    pub max: i64,
    /// How IDs are made (default [`Strategy::Counter`]).
    pub strategy: Strategy,
    /// Counter documents of the ranges strategy, each owning a slice of the IDs (default 16).
    pub shards: u32,
    /// Draws of the random strategy after a collision, before giving up (default 10).
    pub retries: u32,
    /// Fields of the document whose values each get a counter of their own.
    pub scope: Vec<String>,
    /// The collection holding the counters, in the target collection's database (default
    /// `counters`).
    pub counters: String,
    /// Which convention the counter documents follow: this crate's, or mongoose-sequence's,
    /// typegoose's or mongoose-auto-increment's (to share a counter with a program using that
    /// library). Setting it sets `counters` and `field` to the layout's, unless they were set.
    pub layout: Layout,
    /// The name of the counter field (default `seq`; `count` in the typegoose and
    /// mongoose-auto-increment layouts).
    pub field: String,
    /// What the counter field holds: the last value issued, or the next free one.
    pub stores: Stores,
    /// The filter that finds counter documents, for a convention of one's own (empty: the
    /// layout's): see [`filter`](crate::options::filter).
    pub filter: Vec<FilterField>,
    /// What keeps two documents from holding one ID: a unique index on the target collection,
    /// or a proxy collection of claims written in the insert's transaction (for collections
    /// that cannot have that index, such as sharded ones).
    pub unique: Unique,
    /// The proxy collection of `unique = "proxy"`, in the target collection's database
    /// (default `<collection>.claims.<ID field>`).
    pub proxy: Option<String>,
    /// Whether the counter update and the insert share one transaction, so that an insert
    /// that fails consumes no number.
    pub gapless: bool,
    /// How long a gapless insert retries transient transaction errors (default 30 s).
    pub transaction_timeout: Duration,
    /// Share of the current range after which the next range is reserved in the background
    /// (0.0 to 1.0; default 0.1). Only used when more than one value is reserved at a time.
    pub prefetch_at: f64,
    /// Write concern of counter updates (default `majority`; `None` uses the collection's).
    pub write_concern: Option<WriteConcern>,
    /// The name the documents store the ID under (default `_id`): what the typegoose and
    /// mongoose-auto-increment layouts, and `id_field` in a filter, put in the counter's
    /// filter. A derived model sets it from its ID field.
    pub id_field: String,
}

impl SequenceOptions {
    /// A builder for a sequence named `name`, with every other option at its default.
    pub fn builder(name: impl Into<String>) -> SequenceOptionsBuilder {
        SequenceOptionsBuilder {
            options: SequenceOptions {
                name: name.into(),
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
                scope: Vec::new(),
                counters: defaults::COUNTERS.to_owned(),
                layout: Layout::Default,
                field: defaults::COUNTER_FIELD.to_owned(),
                stores: Stores::LastIssued,
                filter: Vec::new(),
                unique: Unique::Index,
                proxy: None,
                gapless: false,
                transaction_timeout: defaults::TRANSACTION_TIMEOUT,
                prefetch_at: defaults::PREFETCH_AT,
                write_concern: Some(WriteConcern::majority()),
                id_field: "_id".to_owned(),
            },
            counters_set: false,
            field_set: false,
        }
    }

    /// The options as the rules see them: an option counts as given when it differs from its
    /// default.
    fn spec(&self) -> Spec<'_> {
        let SequenceOptions {
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
            prefetch_at,
            write_concern: _,
            id_field: _,
        } = self;
        Spec {
            name,
            batch: given(*batch, Batch::DEFAULT),
            prefix: prefix.as_deref(),
            tz: tz.as_deref(),
            width: *width,
            digits: *digits,
            format: format.as_deref(),
            check_digit: *check_digit,
            encoding: given(*encoding, Encoding::Decimal),
            alphabet: alphabet.as_deref(),
            min_length: given(*min_length, 0),
            start: given(*start, defaults::START),
            max: given(*max, defaults::MAX),
            strategy: given(*strategy, Strategy::Counter),
            shards: given(*shards, defaults::SHARDS),
            retries: given(*retries, defaults::RETRIES),
            scope: scope.iter().map(String::as_str).collect(),
            counters: given(counters.as_str(), defaults::COUNTERS),
            layout: given(*layout, Layout::Default),
            field: given(field.as_str(), defaults::COUNTER_FIELD),
            stores: given(*stores, Stores::LastIssued),
            filter: filter.iter().map(FilterField::as_str).collect(),
            unique: given(*unique, Unique::Index),
            proxy: proxy.as_deref(),
            gapless: given(*gapless, false),
            transaction_timeout: given(*transaction_timeout, defaults::TRANSACTION_TIMEOUT),
            prefetch_at: Some(*prefetch_at),
            id: None,
        }
    }
}

impl SequenceOptions {
    /// Checks every option with the rules `#[derive(SequentialId)]` checks at compile time;
    /// returns the bounds they describe. Fails with [`Error::InvalidName`](crate::Error::InvalidName) or
    /// [`Error::InvalidConfig`](crate::Error::InvalidConfig), the first rule broken.
    pub fn validate(&self) -> Result<Bounds> {
        self.checked().map(|(bounds, _)| bounds)
    }

    /// Checks every option; returns the bounds and the format they describe.
    pub(crate) fn checked(&self) -> Result<(Bounds, Format)> {
        let checked = rules::check(&self.spec()).map_err(|mut broken| broken.swap_remove(0))?;
        // Below the `max` given, `width` or `digits` set the largest value.
        let limit = if checked.max >= self.max {
            Limit::Max
        } else if self.digits.is_some() {
            Limit::Digits
        } else {
            Limit::Width
        };
        let bounds = Bounds::new(checked.start, checked.max)?.limited_by(limit);
        let spelling = Spelling::of(&checked)?;
        let format =
            Format::new(&self.name, checked.pattern, checked.tz, checked.width).spelled(spelling);
        Ok((bounds, format))
    }
}

/// `value`, unless it is the default.
fn given<T: PartialEq>(value: T, default: T) -> Option<T> {
    (value != default).then_some(value)
}

/// Builds [`SequenceOptions`]; see [`SequenceOptions::builder`]. It has a setter for every
/// option, named as the option.
#[derive(Clone, Debug)]
#[must_use]
pub struct SequenceOptionsBuilder {
    options: SequenceOptions,
    /// Whether `counters` and `field` were set, which a layout set later keeps.
    counters_set: bool,
    field_set: bool,
}

impl SequenceOptionsBuilder {
    /// Sets the values reserved per round trip: `25`, or `10..=1000` for an adaptive batch.
    pub fn batch(mut self, batch: impl Into<Batch>) -> Self {
        self.options.batch = batch.into();
        self
    }

    /// Sets the period prefix pattern (`"YYMMDD"`, `"INV-YYYYMM-"`).
    pub fn prefix(mut self, pattern: impl Into<String>) -> Self {
        self.options.prefix = Some(pattern.into());
        self
    }

    /// Sets the IANA time zone in which periods begin and end.
    pub fn tz(mut self, zone: impl Into<String>) -> Self {
        self.options.tz = Some(zone.into());
        self
    }

    /// Sets the digits of the zero-padded counter part of an ID.
    pub fn width(mut self, digits: u8) -> Self {
        self.options.width = Some(digits);
        self
    }

    /// Sets the exact number of digits of every ID, without a prefix.
    pub fn digits(mut self, digits: u8) -> Self {
        self.options.digits = Some(digits);
        self
    }

    /// Sets the template that places the number, its check digits and the period in the ID
    /// (`"ACC-{n:08}-{check}"`), instead of `prefix` and `width`.
    pub fn format(mut self, template: impl Into<String>) -> Self {
        self.options.format = Some(template.into());
        self
    }

    /// Sets the check digits after the number.
    pub fn check_digit(mut self, algorithm: CheckDigit) -> Self {
        self.options.check_digit = Some(algorithm);
        self
    }

    /// Sets how the number is written.
    pub fn encoding(mut self, encoding: Encoding) -> Self {
        self.options.encoding = encoding;
        self
    }

    /// Sets the alphabet of `encoding = Sqids`.
    pub fn alphabet(mut self, alphabet: impl Into<String>) -> Self {
        self.options.alphabet = Some(alphabet.into());
        self
    }

    /// Sets the shortest Sqids ID, in characters.
    pub fn min_length(mut self, min_length: u32) -> Self {
        self.options.min_length = min_length;
        self
    }

    /// Sets the first value a new counter issues.
    pub fn start(mut self, start: i64) -> Self {
        self.options.start = start;
        self
    }

    /// Sets the largest value ever issued.
    pub fn max(mut self, max: i64) -> Self {
        self.options.max = max;
        self
    }

    /// Sets how IDs are made.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.options.strategy = strategy;
        self
    }

    /// Sets the number of counter documents of the ranges strategy.
    pub fn shards(mut self, shards: u32) -> Self {
        self.options.shards = shards;
        self
    }

    /// Sets the draws of the random strategy after a collision, before giving up.
    pub fn retries(mut self, retries: u32) -> Self {
        self.options.retries = retries;
        self
    }

    /// Sets the fields of the document whose values each get a counter of their own.
    pub fn scope<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.options.scope = fields.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the collection holding the counters.
    pub fn counters(mut self, collection: impl Into<String>) -> Self {
        self.options.counters = collection.into();
        self.counters_set = true;
        self
    }

    /// Sets which convention the counter documents follow; `counters` and `field` become the
    /// layout's, unless they were set (before or after, even to another layout's names).
    pub fn layout(mut self, layout: Layout) -> Self {
        let options = &mut self.options;
        if !self.counters_set {
            options.counters = layout.counters().to_owned();
        }
        if !self.field_set {
            options.field = layout.field().to_owned();
        }
        options.layout = layout;
        self
    }

    /// Sets the name of the counter field.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.options.field = field.into();
        self.field_set = true;
        self
    }

    /// Sets what the counter field holds.
    pub fn stores(mut self, stores: Stores) -> Self {
        self.options.stores = stores;
        self
    }

    /// Sets the filter that finds counter documents, for a convention of one's own.
    ///
    /// ```
    /// use sequence_runtime::options::filter;
    /// use sequence_runtime::SequenceOptions;
    ///
    /// // Seed 001's daily counters: `{ prefix: 251125, count: <last issued> }` in `ids`.
    /// let options = SequenceOptions::builder("daily")
    ///     .counters("ids")
    ///     .field("count")
    ///     .prefix("YYMMDD")
    ///     .filter(filter::parse("prefix = period as number").unwrap())
    ///     .build();
    /// assert!(options.validate().is_ok());
    /// ```
    pub fn filter(mut self, fields: impl IntoIterator<Item = FilterField>) -> Self {
        self.options.filter = fields.into_iter().collect();
        self
    }

    /// Sets what keeps two documents from holding one ID.
    pub fn unique(mut self, unique: Unique) -> Self {
        self.options.unique = unique;
        self
    }

    /// Sets the proxy collection of `unique = "proxy"`.
    pub fn proxy(mut self, collection: impl Into<String>) -> Self {
        self.options.proxy = Some(collection.into());
        self
    }

    /// Sets whether the counter update and the insert share one transaction.
    pub fn gapless(mut self, gapless: bool) -> Self {
        self.options.gapless = gapless;
        self
    }

    /// Sets how long a gapless insert retries transient transaction errors.
    pub fn transaction_timeout(mut self, timeout: Duration) -> Self {
        self.options.transaction_timeout = timeout;
        self
    }

    /// Sets the share of a range after which the next one is prefetched.
    pub fn prefetch_at(mut self, share: f64) -> Self {
        self.options.prefetch_at = share;
        self
    }

    /// Sets the write concern of counter updates (`None`: the collection's own).
    pub fn write_concern(mut self, wc: Option<WriteConcern>) -> Self {
        self.options.write_concern = wc;
        self
    }

    /// Sets the name the documents store the ID under.
    pub fn id_field(mut self, field: impl Into<String>) -> Self {
        self.options.id_field = field.into();
        self
    }

    /// Makes IDs with the ranges strategy: `shards` counter documents, each owning a slice of
    /// the space, one picked at random per reservation.
    ///
    /// ```
    /// # use sequence_runtime::{SequenceOptions, Strategy};
    /// let opts = SequenceOptions::builder("account").ranges(1000).digits(12).build();
    /// assert_eq!((opts.strategy, opts.shards), (Strategy::Ranges, 1000));
    /// ```
    pub fn ranges(self, shards: u32) -> Self {
        self.strategy(rules::Strategy::Ranges).shards(shards)
    }

    /// Sets fields of the options in place: for the crate's own readers of stored options,
    /// which copy optional fields as they are rather than one setter call each.
    pub(crate) fn edit(mut self, edit: impl FnOnce(&mut SequenceOptions)) -> Self {
        edit(&mut self.options);
        self
    }

    /// The options.
    pub fn build(self) -> SequenceOptions {
        self.options
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::error::Error;
    use sequence_rules::{Batch, Layout};

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
            .batch(sequence_rules::AdaptiveBatch::new(10, 5))
            .build();
        assert!(bad.validate().is_err());
        assert!(SequenceOptions::builder("x").build().validate().is_ok());
    }

    #[test]
    fn a_layout_keeps_the_counters_and_field_that_were_set() {
        let named = |b: SequenceOptionsBuilder| {
            let o = b.build();
            (o.counters, o.field)
        };
        let typegoose = || SequenceOptions::builder("x");
        let layout = Layout::Typegoose;
        let (counters, field) = (layout.counters().to_owned(), layout.field().to_owned());
        assert_eq!(
            named(typegoose().layout(layout)),
            (counters.clone(), field.clone())
        );
        assert_eq!(
            named(typegoose().counters("counters").field("seq").layout(layout)),
            ("counters".to_owned(), "seq".to_owned()),
            "set to this crate's names, which are also the defaults"
        );
        assert_eq!(
            named(typegoose().counters("ids").layout(layout)),
            ("ids".to_owned(), field.clone())
        );
        assert_eq!(
            named(typegoose().layout(layout).field("n")),
            (counters, "n".to_owned())
        );
        assert_eq!(
            named(typegoose().layout(layout).layout(Layout::default())),
            ("counters".to_owned(), "seq".to_owned()),
            "a layout set again brings its own names"
        );
    }

    #[test]
    fn only_options_that_differ_from_their_default_count_as_given() {
        let defaults = SequenceOptions::builder("x").build();
        let spec = defaults.spec();
        for &key in rules::Key::ALL {
            assert_eq!(spec.given(key), key == rules::Key::Name, "{key}");
        }
        let o = SequenceOptions::builder("x")
            .ranges(4)
            .layout(Layout::MongooseSequence)
            .batch(10..=100)
            .transaction_timeout(Duration::from_secs(5))
            .build();
        let spec = o.spec();
        assert_eq!(spec.shards, Some(4));
        assert_eq!(spec.layout, Some(Layout::MongooseSequence));
        assert_eq!(spec.batch, Some(Batch::from(10..=100)));
        assert_eq!(spec.transaction_timeout, Some(Duration::from_secs(5)));
        assert_eq!(spec.field, None);
    }
}
