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

pub mod check_digit;
pub mod crockford;
mod damm;
mod luhn;
mod mod97;
pub mod sqids;

pub use check_digit::{CheckDigit, CheckDigitError, UnknownCheckDigit};
pub use crockford::CrockfordError;
