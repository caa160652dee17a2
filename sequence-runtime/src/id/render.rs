//! How a counter value becomes an ID: the period's prefix and the counter zero-padded to
//! `width`.

use std::fmt::Write;

use sequence_rules::defaults;

use crate::error::{Error, Result};

/// How the counter values of one period render: `"{prefix}{value zero-padded to width}"` as
/// text, or the same digits as a number.
///
/// ```
/// # use sequence_runtime::{IdValue, id::Rendering};
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
            return Err(Error::InvalidConfig {
                key: "prefix",
                message: format!(
                    "an ID of type `{target}` cannot hold the prefix \"{}\"; use a `String` ID \
                     field or a prefix of date tokens only",
                    self.prefix
                ),
            });
        };
        let width = u32::from(self.width.unwrap_or(defaults::WIDTH));
        10_i64
            .checked_pow(width)
            .and_then(|scale| prefix.checked_mul(scale))
            .and_then(|head| head.checked_add(value))
            .ok_or(Error::IdOutOfRange { value, target })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::IdValue;

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
            Err(Error::InvalidConfig { key: "prefix", message }) if message.contains("`String`")
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
}
