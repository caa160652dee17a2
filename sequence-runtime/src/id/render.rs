//! How a counter value becomes an ID: the period's prefix and the counter zero-padded to
//! `width`, and where a sequence has them, its encoding, check digits and template text.

use std::fmt::Write;
use std::sync::Arc;

use sequence_rules::defaults;
use sequence_rules::encoding::{crockford, Encoding};

use super::spelling::{self, Spelling};
use crate::error::{Error, IdProblem, Result};

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
    /// The encoding, check digits and template text, when the IDs have any.
    spelling: Option<Arc<Spelling>>,
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
            spelling: None,
        }
    }

    /// This rendering with the sequence's encoding, check digits and template text.
    pub(crate) fn spelled(mut self, spelling: Option<Arc<Spelling>>) -> Self {
        self.spelling = spelling;
        self
    }

    /// The largest counter value the width shows, if the IDs are padded to one.
    pub(crate) fn widest(&self) -> Option<i64> {
        let width = self.width?;
        Some(match self.spelling.as_deref().map(Spelling::encoding) {
            Some(Encoding::Crockford32) => {
                crockford::max_for_width(usize::from(width)).min(i64::MAX as u64) as i64
            }
            Some(Encoding::Sqids) => return None,
            _ => sequence_rules::limits::pow10(width) - 1,
        })
    }

    /// The encoding, check digits and template text, if the IDs have any.
    pub(crate) fn spelling(&self) -> Option<&Spelling> {
        self.spelling.as_deref()
    }

    /// The prefix text.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The width of the counter part, if it is padded.
    pub fn width(&self) -> Option<u8> {
        self.width
    }

    /// The ID of counter value `value` as text; fails only for a value an encoding cannot
    /// write (a negative one, or a Sqids alphabet whose every ID for it is blocked).
    pub fn text(&self, value: i64) -> Result<String> {
        let width = usize::from(self.width.unwrap_or(0));
        let mut out = String::with_capacity(self.prefix.len() + width.max(20));
        out.push_str(&self.prefix);
        match &self.spelling {
            None => {
                // Writing to a String cannot fail.
                let _ = write!(out, "{value:0width$}");
            }
            Some(spelling) => spelling.write(&mut out, value, width)?,
        }
        Ok(out)
    }

    /// The ID of counter value `value` as a number: the prefix's digits followed by the counter's
    /// `width` digits. `target` names the ID type for errors.
    pub fn number(&self, value: i64, target: &'static str) -> Result<i64> {
        let n = self.number_without_check(value, target)?;
        let Some(spelling) = &self.spelling else {
            return Ok(n);
        };
        if spelling.is_text_only() {
            let key = if spelling.tail().has_text() {
                "format"
            } else {
                "encoding"
            };
            return Err(Error::InvalidConfig {
                key,
                message: format!(
                    "an ID of type `{target}` cannot hold the IDs of `{key}`; use a `String` ID \
                     field"
                ),
            });
        }
        let Some(check) = spelling.check() else {
            return Ok(n);
        };
        let digits = self.text(value)?;
        let check_value: i64 = digits[digits.len() - check.len()..]
            .parse()
            .map_err(|_| Error::IdOutOfRange { value, target })?;
        10_i64
            .checked_pow(check.len() as u32)
            .and_then(|scale| n.checked_mul(scale))
            .and_then(|head| head.checked_add(check_value))
            .ok_or(Error::IdOutOfRange { value, target })
    }

    /// [`number`](Self::number) before any check digits.
    fn number_without_check(&self, value: i64, target: &'static str) -> Result<i64> {
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

impl Rendering {
    /// The counter value of `id`, an ID of this rendering (this period's prefix), read back.
    pub(crate) fn parse(&self, id: &str) -> std::result::Result<i64, IdProblem> {
        let rest = id
            .strip_prefix(self.prefix.as_str())
            .ok_or_else(|| IdProblem::Prefix {
                expected: format!("`{}`", self.prefix),
            })?;
        parse_number(id, rest, self.width, self.spelling.as_deref())
    }
}

/// The counter value of `id`, whose part after the prefix is `rest`: the number (of `width`
/// digits, if decimal and padded) in `spelling`'s encoding, the text after it and the check
/// digits, which must be those of the ID.
pub(crate) fn parse_number(
    id: &str,
    rest: &str,
    width: Option<u8>,
    spelling: Option<&Spelling>,
) -> std::result::Result<i64, IdProblem> {
    let (before, after, check_len) = match spelling {
        Some(s) => (
            s.tail().before_check.as_str(),
            s.tail().after_check.as_str(),
            s.check().map_or(0, |c| c.len()),
        ),
        None => ("", "", 0),
    };
    let suffix = |expected: &str| IdProblem::Suffix {
        expected: expected.to_owned(),
    };
    let rest = rest.strip_suffix(after).ok_or_else(|| suffix(after))?;
    let whole = rest;
    let split = match check_len {
        0 => rest.len(),
        n => rest.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i),
    };
    let (rest, check) = rest.split_at(split);
    let number = rest.strip_suffix(before).ok_or_else(|| {
        // The whole of it a number of the encoding's digits: the check digits are missing.
        let digits = whole.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        match (check_len, digits && !whole.is_empty()) {
            (1.., true) => IdProblem::NoCheck {
                expected: format!(
                    "{}{} check {}",
                    if before.is_empty() {
                        String::new()
                    } else {
                        format!("`{before}` and ")
                    },
                    check_len,
                    if check_len == 1 { "digit" } else { "digits" }
                ),
            },
            _ => suffix(before),
        }
    })?;
    if number.is_empty() {
        return Err(IdProblem::NoNumber);
    }
    // A width bounds decimal digits and Crockford characters (whose hyphens are read past);
    // Sqids IDs have none.
    let counted = match spelling.map(Spelling::encoding) {
        None | Some(Encoding::Decimal) => Some(number.chars().count()),
        Some(Encoding::Crockford32) => Some(number.chars().filter(|&c| c != '-').count()),
        Some(_) => None,
    };
    match (width, counted) {
        (Some(width), Some(found)) if found != usize::from(width) => {
            return Err(IdProblem::Width {
                expected: usize::from(width),
                found,
            });
        }
        // Without a width a number is written without leading zeros, so `07` is not `7`'s.
        (None, Some(_))
            if leading_zero(
                number,
                spelling.map(Spelling::encoding) == Some(Encoding::Crockford32),
            ) =>
        {
            return Err(IdProblem::LeadingZero {
                number: number.to_owned(),
            });
        }
        _ => {}
    }
    let Some(spelling) = spelling else {
        return spelling::decimal(number, width.is_none());
    };
    let value = spelling.decode(number)?;
    let written = &id[..id.len() - after.len() - check.len()];
    spelling.verify(written, check, value)?;
    Ok(value)
}

/// Whether the digits of `number` (after a sign or hyphens) start with a zero that the text
/// of a number without a width does not have: `07`, `-0`, `-07`, and in Crockford base 32
/// (`crockford`), where `O` reads as `0`, `O7`.
fn leading_zero(number: &str, crockford: bool) -> bool {
    let digits = number.trim_start_matches('-');
    let zero = |c: char| c == '0' || (crockford && c.eq_ignore_ascii_case(&'o'));
    digits.starts_with(zero) && (digits.len() > 1 || digits.len() < number.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::IdValue;

    #[test]
    fn text_and_numbers() {
        let r = Rendering::new("251122", Some(6));
        assert_eq!(r.text(7).unwrap(), "251122000007");
        assert_eq!(r.number(7, "i64").unwrap(), 251_122_000_007);
        assert_eq!(r.number(999_999, "i64").unwrap(), 251_122_999_999);
        let r = Rendering::new("", Some(4));
        assert_eq!(r.text(42).unwrap(), "0042");
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
