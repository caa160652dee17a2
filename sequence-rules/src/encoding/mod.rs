//! The arithmetic of human-facing ID encodings, shared by the derive macro (which validates a
//! configuration at compile time) and the runtime (which formats and parses IDs).
//!
//! - [`check_digit`]: a check digit (Luhn, Damm) or two (ISO 7064 MOD 97-10) appended to a
//!   decimal number, so that a mistyped number is refused before any lookup.
//! - [`crockford`]: Crockford base 32, for short codes that are read aloud and typed back:
//!   case and the look-alikes `O`/`0`, `I`/`L`/`1` do not matter, hyphens are ignored, and an
//!   optional check symbol catches typing errors.
//! - [`sqids`]: the rules of a Sqids alphabet and minimum length, for public IDs that do not
//!   reveal the counter behind them. Sqids is obfuscation, not encryption: whoever knows the
//!   alphabet can decode an ID.
//!
//! Sort order: a decimal number of fixed width (zero-padded, its check digits after it) and a
//! Crockford code of fixed width ([`crockford::encode`]'s `width`) sort as text like their
//! numbers, so an index on the ID keeps issue order; the check digits after a fixed-width
//! number do not change that order. Codes of varying width do not sort (`"9"` comes after
//! `"10"`). Sqids IDs do not sort like their numbers at all: that is their point.

use std::fmt;

pub mod check_digit;
pub mod crockford;
mod damm;
mod luhn;
mod mod97;
pub mod sqids;

pub use check_digit::{Check, CheckDigit, CheckDigitError, UnknownCheckDigit};
pub use crockford::CrockfordError;

/// How the counter part of an ID is written, as named in configuration (`encoding = "..."`).
///
/// ```
/// use sequence_rules::encoding::Encoding;
/// assert_eq!(Encoding::from_name("crockford32"), Some(Encoding::Crockford32));
/// assert_eq!(Encoding::default(), Encoding::Decimal);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Encoding {
    /// Decimal digits (zero-padded to `width` when it is given): the default.
    #[default]
    Decimal,
    /// Crockford base 32 ([`crockford`]), upper case, zero-padded to `width` when it is given.
    Crockford32,
    /// Sqids ([`sqids`]): short, URL-safe, not revealing the counter; needs a `String` ID.
    Sqids,
}

impl Encoding {
    /// Every value, in the order messages list them.
    pub const ALL: [Encoding; 3] = [Encoding::Decimal, Encoding::Crockford32, Encoding::Sqids];

    /// The name, as written in `#[seq(encoding = "...")]`.
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Decimal => "decimal",
            Encoding::Crockford32 => "crockford32",
            Encoding::Sqids => "sqids",
        }
    }

    /// The name of the Rust variant, for generated code.
    pub const fn variant(self) -> &'static str {
        match self {
            Encoding::Decimal => "Decimal",
            Encoding::Crockford32 => "Crockford32",
            Encoding::Sqids => "Sqids",
        }
    }

    /// The value named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether IDs of this encoding sort as text like their numbers when they have a fixed
    /// width (decimal and Crockford: their digits are in ASCII order). Sqids IDs never do.
    pub const fn sorts_at_fixed_width(self) -> bool {
        !matches!(self, Encoding::Sqids)
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
