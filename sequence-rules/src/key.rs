//! The keys of `#[seq(...)]`, and which strategies each applies to.

use std::fmt;

use crate::strategy::Strategy;

/// The one declaration of every key of a struct-level `#[seq(...)]`: its variant of [`Key`],
/// the field that holds it (in [`Spec`](crate::Spec), in the derive's parsed attributes, in the
/// runtime's `SequenceConfig` and `SequenceOptions`, and the name of their setters), its name
/// as written, its form and type, its default, the strategies it applies to, and its doc line.
///
/// `for_each_key!(callback)` calls `callback! { name { .. } keys { .. } derive_only { .. } }`
/// with the rows of each group: `name` (the counter's name, given to every constructor),
/// `keys` (the options), `derive_only` (keys only the derive reads). Each row reads
/// `#[doc = ".."] Variant field "name": form [Type] = [default] => Strategies;`, where the form
/// says how the value is held:
///
/// | form       | `Spec<'a>`         | `SequenceConfig`         | `SequenceOptions` |
/// |------------|--------------------|--------------------------|-------------------|
/// | `text`     | `Option<&'a str>`  | `&'static str`           | `String`          |
/// | `opt_text` | `Option<&'a str>`  | `Option<&'static str>`   | `Option<String>`  |
/// | `names`    | `Vec<&'a str>`     | `&'static [&'static str]`| `Vec<String>`     |
/// | `copy`     | `Option<Type>`     | `Type`                   | `Type`            |
/// | `into`     | `Option<Type>`     | `Type`                   | `Type` (its setter takes `impl Into<Type>`) |
/// | `opt`      | `Option<Type>`     | `Option<Type>`           | `Option<Type>`    |
///
/// A key counts as given in a `Spec` when it is `Some` (or, for `names`, not empty); the runtime
/// gives the `Spec` of its options only the values that differ from the default.
///
/// Adding a key is adding its row here, plus what it means: its rules in `check`, and where the
/// runtime uses its value.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_key {
    ($callback:ident) => {
        $callback! {
            name {
                /// The counter's name: the `_id` of its counter document.
                Name name "name";
            }
            keys {
                /// Values reserved per round trip and handed out from memory: `25`, or
                /// `10..=1000` to adapt between those bounds to the rate of use.
                Batch batch "batch": into [$crate::Batch] = [$crate::Batch::DEFAULT] => COUNTERS;
                /// Period prefix pattern (`"YYMMDD"`, `"INV-YYYYMM-"`): date tokens `YYYY`,
                /// `YY`, `MM`, `DD`, `HH`, other characters (or text in single quotes) literal;
                /// each period of the finest date token has a counter of its own.
                Prefix prefix "prefix": opt_text [] = [] => COUNTER;
                /// IANA time zone in which periods begin and end (default UTC).
                Tz tz "tz": opt_text [] = [] => COUNTER;
                /// Digits of the zero-padded counter part of an ID (default 6 with a `prefix`).
                Width width "width": opt [u8] = [] => COUNTER;
                /// Exact number of digits of every ID, without a prefix.
                Digits digits "digits": opt [u8] = [] => NUMBERS;
                /// The first value a new counter issues.
                Start start "start": copy [i64] = [$crate::defaults::START] => NUMBERS;
                /// The largest value ever issued.
                Max max "max": copy [i64] = [$crate::defaults::MAX] => NUMBERS;
                /// How IDs are made.
                Strategy strategy "strategy": copy [$crate::Strategy] = [$crate::Strategy::Counter] => ALL;
                /// Counter documents of the ranges strategy, each owning a slice of the IDs.
                Shards shards "shards": copy [u32] = [$crate::defaults::SHARDS] => RANGES;
                /// Draws of the random strategy after a collision, before giving up.
                Retries retries "retries": copy [u32] = [$crate::defaults::RETRIES] => RANDOM;
                /// Fields of the document whose values each get a counter of their own.
                Scope scope "scope": names [] = [] => COUNTER;
                /// The collection holding the counters, in the target collection's database.
                Counters counters "counters": text [] = [$crate::defaults::COUNTERS] => COUNTERS;
                /// How counter documents are found: by `_id`, or mongoose-sequence's way.
                Layout layout "layout": copy [$crate::Layout] = [$crate::Layout::Default] => COUNTERS;
                /// The name of the counter field.
                Field field "field": text [] = [$crate::defaults::COUNTER_FIELD] => COUNTERS;
                /// What the counter field holds: the last value issued, or the next free one.
                Stores stores "stores": copy [$crate::Stores] = [$crate::Stores::LastIssued] => COUNTERS;
                /// What keeps two documents from holding one ID: a unique index on the target
                /// collection, or a proxy collection of claims written in the insert's
                /// transaction (for collections that cannot have that index, such as sharded
                /// ones).
                Unique unique "unique": copy [$crate::Unique] = [$crate::Unique::Index] => ALL;
                /// The proxy collection of `unique = "proxy"`, in the target collection's
                /// database (default `<collection>.claims.<ID field>`).
                Proxy proxy "proxy": opt_text [] = [] => ALL;
                /// Whether the counter update and the insert share one transaction, so that an
                /// insert that fails consumes no number.
                Gapless gapless "gapless": copy [bool] = [false] => COUNTER;
                /// How long a gapless insert retries transient transaction errors.
                TransactionTimeout transaction_timeout "transaction_timeout": copy [::core::time::Duration] = [$crate::defaults::TRANSACTION_TIMEOUT] => COUNTER;
            }
            derive_only {
                /// The path of the `mongo-sequence` crate, for code that renames it.
                Crate krate "crate";
            }
        }
    };
}

/// Declares [`Key`] from the rows of [`for_each_key!`].
macro_rules! declare_keys {
    (
        name { $(#[doc = $ndoc:literal])* $nv:ident $nf:ident $nname:literal; }
        keys { $($(#[doc = $doc:literal])* $v:ident $f:ident $name:literal: $form:ident [$($ty:tt)*] = [$($default:tt)*] => $strategies:ident;)* }
        derive_only { $($(#[doc = $ddoc:literal])* $dv:ident $df:ident $dname:literal;)* }
    ) => {
        /// A key of a struct-level `#[seq(...)]`; the runtime's `SequenceOptions` has the same
        /// options under the same names. Declared, with everything else about each key, in
        /// one table (`for_each_key!`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Key {
            $(#[doc = $ndoc])* $nv,
            $($(#[doc = $doc])* $v,)*
            $($(#[doc = $ddoc])* $dv,)*
        }

        impl Key {
            /// Every key, in the order messages list them.
            pub const ALL: &'static [Key] = &[Key::$nv, $(Key::$v,)* $(Key::$dv,)*];

            /// The key as written.
            pub const fn name(self) -> &'static str {
                match self {
                    Key::$nv => $nname,
                    $(Key::$v => $name,)*
                    $(Key::$dv => $dname,)*
                }
            }

            /// The strategies the key applies to.
            pub const fn strategies(self) -> &'static [Strategy] {
                match self {
                    Key::$nv => ALL,
                    $(Key::$v => $strategies,)*
                    $(Key::$dv => ALL,)*
                }
            }
        }
    };
}

crate::for_each_key!(declare_keys);

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
    /// use mongo_sequence_rules::Key;
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
