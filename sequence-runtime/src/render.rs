//! How a counter value becomes an ID: the period's prefix, the counter zero-padded to `width`,
//! and the value range that `width` and `digits` allow.

use std::fmt::Write;

use crate::bounds::Bounds;
use crate::error::{Error, Result};
use crate::options::SequenceOptions;

/// Width of the counter part after a `prefix` when none is given.
pub const DEFAULT_WIDTH: u8 = 6;

/// Largest `width` or `digits`: 18 digits always fit in an `i64`.
pub const MAX_DIGITS: u8 = 18;

/// How the counter values of one period render: `"{prefix}{value zero-padded to width}"` as
/// text, or the same digits as a number.
///
/// ```
/// # use mongo_sequence_runtime::{IdValue, Rendering};
/// let r = Rendering::new("INV-251122-", Some(4));
/// assert_eq!(String::render(7, &r).unwrap(), "INV-251122-0007");
/// let r = Rendering::new("251122", Some(6));
/// assert_eq!(i64::render(7, &r).unwrap(), 251_122_000_007);
/// assert_eq!(String::render(7, &r).unwrap(), "251122000007");
/// assert_eq!(i64::render(7, &Rendering::plain()).unwrap(), 7);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendering {
    prefix: String,
    /// The prefix as a number, when it is all ASCII digits.
    prefix_number: Option<i64>,
    width: Option<u8>,
}

impl Rendering {
    /// No prefix, no padding: the counter value itself.
    pub fn plain() -> Self {
        Rendering::default()
    }

    /// `prefix` (possibly empty) followed by the counter zero-padded to `width` digits.
    pub fn new(prefix: impl Into<String>, width: Option<u8>) -> Self {
        let prefix = prefix.into();
        let prefix_number = (!prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()))
            .then(|| prefix.parse::<i64>().ok())
            .flatten();
        Rendering {
            prefix,
            prefix_number,
            width,
        }
    }

    /// The prefix text.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The width of the counter part, if it is padded.
    pub fn width(&self) -> Option<u8> {
        self.width
    }

    /// Whether values render as themselves.
    pub fn is_plain(&self) -> bool {
        self.prefix.is_empty() && self.width.is_none()
    }

    /// The ID of counter value `value` as text.
    pub fn text(&self, value: i64) -> String {
        let width = usize::from(self.width.unwrap_or(0));
        let mut out = String::with_capacity(self.prefix.len() + width.max(20));
        out.push_str(&self.prefix);
        // Writing to a String cannot fail.
        let _ = write!(out, "{value:0width$}");
        out
    }

    /// The ID of counter value `value` as a number: the prefix's digits followed by the counter's
    /// `width` digits. `target` names the ID type for errors.
    pub fn number(&self, value: i64, target: &'static str) -> Result<i64> {
        if self.prefix.is_empty() {
            return Ok(value);
        }
        let Some(prefix) = self.prefix_number else {
            return Err(Error::InvalidOptions(format!(
                "an ID of type `{target}` cannot hold the prefix \"{}\"; use a `String` ID field \
                 or a prefix of date tokens only",
                self.prefix
            )));
        };
        let width = u32::from(self.width.unwrap_or(DEFAULT_WIDTH));
        10_i64
            .checked_pow(width)
            .and_then(|scale| prefix.checked_mul(scale))
            .and_then(|head| head.checked_add(value))
            .ok_or(Error::IdOutOfRange { value, target })
    }
}

/// `10^n`, for `n <= 18`.
pub(crate) fn pow10(n: u8) -> i64 {
    10_i64.pow(u32::from(n))
}

/// The values a sequence may issue once `width` and `digits` are taken into account: with a
/// prefix or a width, at most `10^width - 1` per period; with `digits = d`, exactly `d` digits
/// (`start` below `10^(d-1)`, such as the default 1, is raised to it).
pub(crate) fn bounds(o: &SequenceOptions) -> Result<Bounds> {
    let invalid = |msg: String| Err(Error::InvalidOptions(msg));
    let (mut start, mut max) = (o.start, o.max);
    if let Some(d) = o.digits {
        if o.prefix.is_some() {
            return invalid(
                "`digits` cannot be combined with `prefix`; `width` sets the digits after a prefix"
                    .into(),
            );
        }
        if o.width.is_some() {
            return invalid("`digits` cannot be combined with `width`".into());
        }
        if !(1..=MAX_DIGITS).contains(&d) {
            return invalid(format!("`digits` must be between 1 and 18, got {d}"));
        }
        let Bounds { start: lo, max: hi } = Bounds::digits(d)?;
        if start > hi {
            return invalid(format!("`start` ({start}) has more than {d} digits"));
        }
        if max < lo {
            return invalid(format!("`max` ({max}) has fewer than {d} digits"));
        }
        start = start.max(lo);
        max = max.min(hi);
    }
    let width = o.width.or(o.prefix.as_ref().map(|_| DEFAULT_WIDTH));
    if let Some(w) = width {
        if !(1..=MAX_DIGITS).contains(&w) {
            return invalid(format!("`width` must be between 1 and 18, got {w}"));
        }
        if start < 0 {
            return invalid(format!(
                "`start` ({start}) is negative, which a zero-padded counter cannot show"
            ));
        }
        let hi = pow10(w) - 1;
        if start > hi {
            return invalid(format!(
                "`start` ({start}) has more digits than `width` ({w})"
            ));
        }
        max = max.min(hi);
    }
    Bounds::new(start, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::IdValue;

    fn opts() -> crate::options::SequenceOptionsBuilder {
        SequenceOptions::builder("x")
    }

    #[test]
    fn text_and_numbers() {
        let r = Rendering::new("251122", Some(6));
        assert_eq!(r.text(7), "251122000007");
        assert_eq!(r.number(7, "i64").unwrap(), 251_122_000_007);
        assert_eq!(r.number(999_999, "i64").unwrap(), 251_122_999_999);
        let r = Rendering::new("", Some(4));
        assert_eq!(r.text(42), "0042");
        assert_eq!(r.number(42, "i64").unwrap(), 42);
        let r = Rendering::new("INV-", Some(3));
        assert!(matches!(
            r.number(1, "i64"),
            Err(Error::InvalidOptions(m)) if m.contains("`String`")
        ));
        let r = Rendering::new("9999999999", Some(18));
        assert!(matches!(
            r.number(1, "i64"),
            Err(Error::IdOutOfRange { target: "i64", .. })
        ));
        assert!(matches!(
            i32::render(1, &Rendering::new("251122", Some(6))),
            Err(Error::IdOutOfRange { target: "i32", .. })
        ));
    }

    #[test]
    fn width_and_digits_bound_the_counter() {
        let b = bounds(&opts().prefix("YYMMDD").build()).unwrap();
        assert_eq!((b.start, b.max), (1, 999_999));
        let b = bounds(&opts().prefix("YYMMDD").width(2).max(50).build()).unwrap();
        assert_eq!((b.start, b.max), (1, 50));
        let b = bounds(&opts().digits(12).build()).unwrap();
        assert_eq!((b.start, b.max), (100_000_000_000, 999_999_999_999));
        let b = bounds(&opts().digits(3).start(500).max(600).build()).unwrap();
        assert_eq!((b.start, b.max), (500, 600));
        for bad in [
            opts().digits(3).prefix("YY"),
            opts().digits(3).width(3),
            opts().digits(0),
            opts().digits(19),
            opts().digits(3).start(1000),
            opts().digits(3).max(99),
            opts().width(0),
            opts().width(3).start(-1),
            opts().width(3).start(1000),
        ] {
            assert!(matches!(
                bounds(&bad.build()),
                Err(Error::InvalidOptions(_))
            ));
        }
    }
}
