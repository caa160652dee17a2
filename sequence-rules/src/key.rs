//! The keys of `#[seq(...)]`, and which strategies each applies to.

use std::fmt;

use crate::strategy::Strategy;

/// A key of a struct-level `#[seq(...)]`; [`SequenceOptions`] has the same options under
/// the same names.
///
/// Exhaustive on purpose: the derive matches every key, so that a key added here cannot be
/// left out of its parser.
///
/// [`SequenceOptions`]: https://docs.rs/mongo-sequence/latest/mongo_sequence/struct.SequenceOptions.html
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `name = "..."`: the counter's name.
    Name,
    /// `batch = N` or `batch = "auto"`.
    Batch,
    /// `batch_min = N`, with `batch = "auto"`.
    BatchMin,
    /// `batch_max = N`, with `batch = "auto"`.
    BatchMax,
    /// `prefix = "..."`: a period prefix pattern.
    Prefix,
    /// `tz = "..."`: the time zone of periods.
    Tz,
    /// `width = N`: digits of the zero-padded counter part.
    Width,
    /// `digits = N`: exact digits of every ID.
    Digits,
    /// `start = N`: the first value.
    Start,
    /// `max = N`: the largest value.
    Max,
    /// `strategy = "..."`.
    Strategy,
    /// `shards = N`, with `strategy = "ranges"`.
    Shards,
    /// `retries = N`, with `strategy = "random"`.
    Retries,
    /// `scope = "field"` or `scope = ["a", "b"]`.
    Scope,
    /// `counters = "..."`: the counters collection.
    Counters,
    /// `layout = "..."`: the shape of the counter documents.
    Layout,
    /// `field = "..."`: the name of the counter field.
    Field,
    /// `stores = "..."`: what the counter field holds.
    Stores,
    /// `gapless`: the counter update and the insert in one transaction.
    Gapless,
    /// `timeout_ms = N`, with `gapless`.
    TimeoutMs,
    /// `crate = "..."`: the path of the `mongo-sequence` crate (derive only).
    Crate,
}

/// Which strategies a key applies to.
const COUNTERS: &[Strategy] = &[Strategy::Counter, Strategy::Ranges];
const NUMBERS: &[Strategy] = &[Strategy::Counter, Strategy::Ranges, Strategy::Random];
const COUNTER: &[Strategy] = &[Strategy::Counter];

impl Key {
    /// Every key, in the order messages list them.
    pub const ALL: [Key; 21] = [
        Key::Name,
        Key::Batch,
        Key::BatchMin,
        Key::BatchMax,
        Key::Prefix,
        Key::Tz,
        Key::Width,
        Key::Digits,
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
        Key::Gapless,
        Key::TimeoutMs,
        Key::Crate,
    ];

    /// The key as written.
    pub const fn name(self) -> &'static str {
        match self {
            Key::Name => "name",
            Key::Batch => "batch",
            Key::BatchMin => "batch_min",
            Key::BatchMax => "batch_max",
            Key::Prefix => "prefix",
            Key::Tz => "tz",
            Key::Width => "width",
            Key::Digits => "digits",
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
            Key::Gapless => "gapless",
            Key::TimeoutMs => "timeout_ms",
            Key::Crate => "crate",
        }
    }

    /// The key written `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Every key as written, quoted and separated by commas, for messages.
    pub fn expected() -> String {
        list(Self::ALL.iter().map(|k| k.name()))
    }

    /// The strategies the key applies to.
    pub const fn strategies(self) -> &'static [Strategy] {
        match self {
            Key::Batch
            | Key::BatchMin
            | Key::BatchMax
            | Key::Counters
            | Key::Layout
            | Key::Field
            | Key::Stores => COUNTERS,
            Key::Start | Key::Max | Key::Digits => NUMBERS,
            Key::Shards => &[Strategy::Ranges],
            Key::Retries => &[Strategy::Random],
            Key::Prefix | Key::Tz | Key::Width | Key::Scope | Key::Gapless | Key::TimeoutMs => {
                COUNTER
            }
            Key::Name | Key::Strategy | Key::Crate => &Strategy::ALL,
        }
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
    fn names_round_trip() {
        for key in Key::ALL {
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
