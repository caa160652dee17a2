//! The keys of `#[seq(...)]`, and which strategies each applies to.

use std::fmt;

use crate::strategy::Strategy;

/// A key of a struct-level `#[seq(...)]`; the runtime's `SequenceOptions` has the same
/// options under the same names.
///
/// A new key is a variant here, with its name and strategies below; every place that holds
/// the keys (`Spec`, the derive's parsed attributes and generated configuration, the runtime's
/// `SequenceOptions` and `SequenceConfig`) matches or destructures them without `..`, so the
/// compiler lists each place it is still missing from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// The counter's name: the `_id` of its counter document.
    Name,
    /// Values reserved per round trip and handed out from memory: `25`, or `10..=1000` to
    /// adapt between those bounds to the rate of use.
    Batch,
    /// Period prefix pattern (`"YYMMDD"`, `"INV-YYYYMM-"`): date tokens `YYYY`, `YY`, `MM`,
    /// `DD`, `HH`, other characters (or text in single quotes) literal; each period of the
    /// finest date token has a counter of its own.
    Prefix,
    /// IANA time zone in which periods begin and end (default UTC).
    Tz,
    /// Digits of the zero-padded counter part of an ID (default 6 with a `prefix`).
    Width,
    /// Exact number of digits of every ID, without a prefix.
    Digits,
    /// A template that places the number, its check digits and the period in the ID:
    /// `"ACC-{n:08}-{check}"`, `"{YYYY}/{n:05}/EU"` (instead of `prefix` and `width`).
    Format,
    /// Check digits after the number: `"luhn"`, `"damm"`, `"mod97"` (two digits, as in
    /// IBANs), or `"crockford"` (the check symbol of a Crockford base 32 code).
    CheckDigit,
    /// How the number is written: `"decimal"` (the default), `"crockford32"` or `"sqids"`.
    Encoding,
    /// The alphabet of `encoding = "sqids"`.
    Alphabet,
    /// The shortest Sqids ID, in characters (0 to 255).
    MinLength,
    /// The first value a new counter issues.
    Start,
    /// The largest value ever issued.
    Max,
    /// How IDs are made.
    Strategy,
    /// Counter documents of the ranges strategy, each owning a slice of the IDs.
    Shards,
    /// Draws of the random strategy after a collision, before giving up.
    Retries,
    /// Fields of the document whose values each get a counter of their own.
    Scope,
    /// The collection holding the counters, in the target collection's database.
    Counters,
    /// Which convention the counter documents follow: this crate's, or mongoose-sequence's,
    /// typegoose's or mongoose-auto-increment's.
    Layout,
    /// The name of the counter field.
    Field,
    /// What the counter field holds: the last value issued, or the next free one.
    Stores,
    /// Counter documents found by a filter of fields (a convention of one's own):
    /// `filter(prefix = period as number)`.
    Filter,
    /// What keeps two documents from holding one ID: a unique index on the target collection,
    /// or a proxy collection of claims written in the insert's transaction (for collections
    /// that cannot have that index, such as sharded ones).
    Unique,
    /// The proxy collection of `unique = "proxy"`, in the target collection's database
    /// (default `<collection>.claims.<ID field>`).
    Proxy,
    /// Whether the counter update and the insert share one transaction, so that an insert
    /// that fails consumes no number.
    Gapless,
    /// How long a gapless insert retries transient transaction errors.
    TransactionTimeout,
    /// The path of the `mongo-sequence` crate, for code that renames it (the derive's alone).
    Crate,
}

impl Key {
    /// Every key, in the order messages list them.
    pub const ALL: &'static [Key] = &[
        Key::Name,
        Key::Batch,
        Key::Prefix,
        Key::Tz,
        Key::Width,
        Key::Digits,
        Key::Format,
        Key::CheckDigit,
        Key::Encoding,
        Key::Alphabet,
        Key::MinLength,
        Key::Start,
        Key::Max,
        Key::Strategy,
        Key::Shards,
        Key::Retries,
        Key::Scope,
        Key::Counters,
        Key::Layout,
        Key::Field,
        Key::Stores,
        Key::Filter,
        Key::Unique,
        Key::Proxy,
        Key::Gapless,
        Key::TransactionTimeout,
        Key::Crate,
    ];

    /// The key as written.
    pub const fn name(self) -> &'static str {
        match self {
            Key::Name => "name",
            Key::Batch => "batch",
            Key::Prefix => "prefix",
            Key::Tz => "tz",
            Key::Width => "width",
            Key::Digits => "digits",
            Key::Format => "format",
            Key::CheckDigit => "check_digit",
            Key::Encoding => "encoding",
            Key::Alphabet => "alphabet",
            Key::MinLength => "min_length",
            Key::Start => "start",
            Key::Max => "max",
            Key::Strategy => "strategy",
            Key::Shards => "shards",
            Key::Retries => "retries",
            Key::Scope => "scope",
            Key::Counters => "counters",
            Key::Layout => "layout",
            Key::Field => "field",
            Key::Stores => "stores",
            Key::Filter => "filter",
            Key::Unique => "unique",
            Key::Proxy => "proxy",
            Key::Gapless => "gapless",
            Key::TransactionTimeout => "transaction_timeout",
            Key::Crate => "crate",
        }
    }

    /// The strategies the key applies to.
    pub const fn strategies(self) -> &'static [Strategy] {
        match self {
            Key::Name | Key::Strategy | Key::Unique | Key::Proxy | Key::Crate => ALL,
            Key::Batch
            | Key::Counters
            | Key::Layout
            | Key::Field
            | Key::Stores
            | Key::CheckDigit
            | Key::Encoding
            | Key::Alphabet
            | Key::MinLength => COUNTERS,
            Key::Digits | Key::Start | Key::Max => NUMBERS,
            Key::Prefix
            | Key::Tz
            | Key::Width
            | Key::Format
            | Key::Scope
            | Key::Filter
            | Key::Gapless
            | Key::TransactionTimeout => COUNTER,
            Key::Shards => RANGES,
            Key::Retries => RANDOM,
        }
    }
}

// Which strategies a key applies to, as the table names them.
const ALL: &[Strategy] = &Strategy::ALL;
const COUNTERS: &[Strategy] = &[Strategy::Counter, Strategy::Ranges];
const NUMBERS: &[Strategy] = &[Strategy::Counter, Strategy::Ranges, Strategy::Random];
const COUNTER: &[Strategy] = &[Strategy::Counter];
const RANGES: &[Strategy] = &[Strategy::Ranges];
const RANDOM: &[Strategy] = &[Strategy::Random];

impl Key {
    /// The key written `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// What a key of an earlier version, no longer accepted, is written as now.
    ///
    /// ```
    /// use sequence_rules::Key;
    /// assert!(Key::renamed("timeout_ms").unwrap().contains("transaction_timeout = \"30s\""));
    /// assert_eq!(Key::renamed("bach"), None);
    /// ```
    pub fn renamed(written: &str) -> Option<&'static str> {
        match written {
            "timeout_ms" => Some(
                "`timeout_ms` is now `transaction_timeout`, a duration with its unit: \
                 `transaction_timeout = \"30s\"`",
            ),
            "batch_min" | "batch_max" => Some(
                "the bounds of an adaptive batch are now written in `batch`, both included: \
                 `batch = 10..=10000`",
            ),
            _ => None,
        }
    }

    /// Every key as written, quoted and separated by commas, for messages.
    pub fn expected() -> String {
        list(Self::ALL.iter().map(|k| k.name()))
    }

    /// Whether the key applies to `strategy`.
    pub fn applies_to(self, strategy: Strategy) -> bool {
        self.strategies().contains(&strategy)
    }

    /// Why the key does not apply to `strategy`, if it does not.
    pub(crate) fn misplaced(self, strategy: Strategy) -> Option<String> {
        if self.applies_to(strategy) {
            return None;
        }
        Some(match self.strategies() {
            [only] if *only != Strategy::Counter => {
                format!("`{self}` needs `strategy = \"{only}\"`")
            }
            strategies => format!(
                "`{self}` does not apply to strategy \"{strategy}\", only to: {}",
                list(strategies.iter().map(|s| s.name()))
            ),
        })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `` `a`, `b`, `c` ``.
pub(crate) fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    items
        .into_iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_key_once_in_declaration_order() {
        for (i, key) in Key::ALL.iter().enumerate() {
            assert_eq!(*key as usize, i, "{key}");
        }
        assert_eq!(Key::ALL.len(), Key::Crate as usize + 1);
    }

    #[test]
    fn names_round_trip() {
        for &key in Key::ALL {
            assert_eq!(Key::from_name(key.name()), Some(key));
        }
        assert_eq!(Key::from_name("bach"), None);
        assert!(Key::expected().starts_with("`name`, `batch`, "));
    }

    #[test]
    fn misplaced_keys() {
        assert_eq!(
            Key::Shards.misplaced(Strategy::Counter).unwrap(),
            "`shards` needs `strategy = \"ranges\"`"
        );
        assert_eq!(
            Key::Layout.misplaced(Strategy::Random).unwrap(),
            "`layout` does not apply to strategy \"random\", only to: `counter`, `ranges`"
        );
        assert!(Key::Layout.misplaced(Strategy::Ranges).is_none());
        assert!(Key::Scope.misplaced(Strategy::Ranges).is_some());
        for s in Strategy::ALL {
            assert!(Key::Name.applies_to(s) && Key::Crate.applies_to(s));
        }
    }
}
