//! Crockford base 32: numbers as short codes that survive being read aloud and typed back.
//!
//! The 32 digits are `0123456789ABCDEFGHJKMNPQRSTVWXYZ` (no `I`, `L`, `O` or `U`). Decoding
//! ignores case and hyphens and reads the look-alikes `O` as `0` and `I`, `L` as `1`. An
//! optional check symbol, the value modulo 37, is appended: one of the 32 digits or `*`, `~`,
//! `$`, `=`, `U` for 32 to 36 (<https://www.crockford.com/base32.html>).
//!
//! Codes of one fixed width (see [`encode`]'s `width`) sort as text like their numbers do,
//! since the alphabet is in ASCII order; codes of different widths do not (`Z` > `10`).
//!
//! Written here rather than taken from a crate: `crockford` 1.2 refuses check symbols and
//! `fast32` 1.0 has none and does not read look-alikes or hyphens.
//!
//! ```
//! use sequence_rules::encoding::crockford::{decode, encode};
//!
//! assert_eq!(encode(1234, 0, false), "16J");
//! assert_eq!(encode(1234, 6, true), "00016JD");
//! assert_eq!(decode("16j-d", true), Ok(1234));
//! assert_eq!(decode("OOOl", false), Ok(1));
//! ```

use std::fmt;

/// The 32 digits, in order of value.
const DIGITS: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The check symbols: the 32 digits, then `*~$=U` for the values 32 to 36.
const CHECK_SYMBOLS: &[u8; 37] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ*~$=U";

/// The code of `value`: upper case, left-padded with `0` to `width` characters (a wider
/// value is not cut: `width` is a minimum), then the check symbol if `check`.
///
/// ```
/// use sequence_rules::encoding::crockford::encode;
/// assert_eq!(encode(0, 0, false), "0");
/// assert_eq!(encode(32, 4, false), "0010");
/// assert_eq!(encode(u64::MAX, 0, false), "FZZZZZZZZZZZZ");
/// ```
pub fn encode(value: u64, width: usize, check: bool) -> String {
    let mut code = String::with_capacity(width.max(13) + 1);
    encode_into(value, width, &mut code);
    if check {
        code.push(check_symbol(value));
    }
    code
}

/// Appends the code of `value`, left-padded with `0` to `width` characters, to `out`, without
/// a check symbol (see [`check_symbol`]) and without allocating beyond `out`'s growth.
///
/// ```
/// use sequence_rules::encoding::crockford::{check_symbol, encode_into};
/// let mut out = String::from("ORD-");
/// encode_into(1234, 6, &mut out);
/// out.push(check_symbol(1234));
/// assert_eq!(out, "ORD-00016JD");
/// ```
pub fn encode_into(value: u64, width: usize, out: &mut String) {
    // 13 digits hold any u64.
    let mut digits = [0_u8; 13];
    let (mut n, mut rest) = (0, value);
    loop {
        digits[n] = DIGITS[(rest % 32) as usize];
        n += 1;
        rest /= 32;
        if rest == 0 {
            break;
        }
    }
    out.extend(std::iter::repeat_n('0', width.saturating_sub(n)));
    out.extend(digits[..n].iter().rev().map(|&b| char::from(b)));
}

/// The check symbol of `value`: the value modulo 37, one of the 32 digits or `*~$=U`.
///
/// ```
/// use sequence_rules::encoding::crockford::check_symbol;
/// assert_eq!(check_symbol(1234), 'D');
/// assert_eq!(check_symbol(36), 'U');
/// ```
pub fn check_symbol(value: u64) -> char {
    char::from(CHECK_SYMBOLS[(value % 37) as usize])
}

/// The number a code stands for. Upper and lower case are the same, `O` reads as `0`, `I`
/// and `L` as `1`, and hyphens are ignored. If `check`, the last symbol is a check symbol
/// and must be the value's.
///
/// ```
/// use sequence_rules::encoding::crockford::{decode, CrockfordError};
/// assert_eq!(decode("zz", false), Ok(1023));
/// assert_eq!(
///     decode("16JX", true),
///     Err(CrockfordError::CheckMismatch { expected: 'D', found: 'X' })
/// );
/// assert_eq!(
///     decode("1U", false).unwrap_err().to_string(),
///     "`U` at position 2 is not a Crockford base 32 digit"
/// );
/// ```
pub fn decode(text: &str, check: bool) -> Result<u64, CrockfordError> {
    let mut symbols: Vec<(usize, char)> = text
        .chars()
        .enumerate()
        .filter(|&(_, c)| c != '-')
        .map(|(i, c)| (i + 1, c))
        .collect();
    let check_symbol = if check { symbols.pop() } else { None };
    if symbols.is_empty() {
        return Err(CrockfordError::Empty);
    }
    let mut value: u64 = 0;
    for (position, found) in symbols {
        let digit = digit_value(found)
            .filter(|&d| d < 32)
            .ok_or(CrockfordError::InvalidDigit { found, position })?;
        value = value
            .checked_mul(32)
            .and_then(|v| v.checked_add(u64::from(digit)))
            .ok_or(CrockfordError::Overflow)?;
    }
    if let Some((position, found)) = check_symbol {
        let symbol =
            digit_value(found).ok_or(CrockfordError::InvalidCheckSymbol { found, position })?;
        let expected = (value % 37) as u8;
        if symbol != expected {
            return Err(CrockfordError::CheckMismatch {
                expected: char::from(CHECK_SYMBOLS[usize::from(expected)]),
                found: char::from(CHECK_SYMBOLS[usize::from(symbol)]),
            });
        }
    }
    Ok(value)
}

/// The value of a digit or check symbol (0 to 36), reading case and look-alikes as
/// [`decode`] does.
fn digit_value(c: char) -> Option<u8> {
    let c = match c.to_ascii_uppercase() {
        'O' => '0',
        'I' | 'L' => '1',
        c => c,
    };
    CHECK_SYMBOLS
        .iter()
        .position(|&s| char::from(s) == c)
        .map(|p| p as u8)
}

/// The check symbol of the number written in `digits` (digit values, 0 to 9, of any length):
/// the number modulo 37 as a check symbol.
pub(crate) fn check_symbol_of_digits(digits: &[u8]) -> u8 {
    let r = digits
        .iter()
        .fold(0_u32, |r, &d| (r * 10 + u32::from(d)) % 37);
    CHECK_SYMBOLS[r as usize]
}

/// The value of a check symbol read as [`decode`] reads it, if it is one.
pub(crate) fn symbol_value(c: char) -> Option<u8> {
    digit_value(c)
}

/// The largest value that fits in `width` digits: `32^width - 1`, or `u64::MAX` from 13
/// digits on (the width of `u64::MAX`).
///
/// ```
/// use sequence_rules::encoding::crockford::max_for_width;
/// assert_eq!(max_for_width(2), 1_023);
/// assert_eq!(max_for_width(13), u64::MAX);
/// ```
pub fn max_for_width(width: usize) -> u64 {
    if width >= 13 {
        u64::MAX
    } else {
        (1u64 << (5 * width)) - 1
    }
}

/// Why a code does not stand for a number.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CrockfordError {
    /// No digits (hyphens and the check symbol aside).
    Empty,
    /// A character that is not a digit.
    InvalidDigit {
        /// The character.
        found: char,
        /// Where it is, counted in characters from 1 (hyphens included).
        position: usize,
    },
    /// A last character that is not a check symbol.
    InvalidCheckSymbol {
        /// The character.
        found: char,
        /// Where it is, counted in characters from 1 (hyphens included).
        position: usize,
    },
    /// A value past `u64::MAX` (`FZZZZZZZZZZZZ`).
    Overflow,
    /// A check symbol that is not the value's.
    CheckMismatch {
        /// The check symbol of the value.
        expected: char,
        /// The check symbol written (upper case, look-alikes read).
        found: char,
    },
}

impl fmt::Display for CrockfordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CrockfordError::Empty => f.write_str("no Crockford base 32 digits to decode"),
            CrockfordError::InvalidDigit { found, position } => write!(
                f,
                "`{found}` at position {position} is not a Crockford base 32 digit"
            ),
            CrockfordError::InvalidCheckSymbol { found, position } => write!(
                f,
                "`{found}` at position {position} is not a Crockford base 32 check symbol"
            ),
            CrockfordError::Overflow => f.write_str(
                "too large for a 64-bit number, expected at most `FZZZZZZZZZZZZ` \
                 (18446744073709551615)",
            ),
            CrockfordError::CheckMismatch { expected, found } => write!(
                f,
                "check symbol `{found}` does not match, expected `{expected}` (crockford)"
            ),
        }
    }
}

impl std::error::Error for CrockfordError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_encode() {
        assert_eq!(encode(0, 0, false), "0");
        assert_eq!(encode(31, 0, false), "Z");
        assert_eq!(encode(32, 0, false), "10");
        // 1234 = 1 * 32^2 + 6 * 32 + 18, and 18 is `J`.
        assert_eq!(encode(1234, 0, false), "16J");
        // 1234 mod 37 = 13, and 13 is `D`.
        assert_eq!(encode(1234, 0, true), "16JD");
        assert_eq!(encode(32, 0, true), "10*");
        assert_eq!(encode(36, 0, true), "14U");
        assert_eq!(encode(37, 0, true), "150");
        assert_eq!(encode(0, 0, true), "00");
        assert_eq!(encode(1234, 2, false), "16J", "a width is a minimum");
        assert_eq!(encode(u64::MAX, 0, false), "FZZZZZZZZZZZZ");
    }

    /// A sample of values: the edges of each width and a pseudo-random spread.
    fn sample() -> Vec<u64> {
        let mut values = vec![
            0,
            1,
            31,
            32,
            36,
            37,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ];
        for width in 1..=13 {
            let max = max_for_width(width);
            values.extend([max, max.saturating_add(1), max - 1]);
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..2_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            values.push(x >> (x % 64));
        }
        values
    }

    #[test]
    fn every_value_round_trips() {
        for value in sample() {
            for check in [false, true] {
                let code = encode(value, 0, check);
                assert_eq!(decode(&code, check), Ok(value), "{code}");
                assert_eq!(decode(&code.to_lowercase(), check), Ok(value), "{code}");
                let padded = encode(value, 16, check);
                assert_eq!(padded.len(), 16 + usize::from(check));
                assert_eq!(decode(&padded, check), Ok(value), "{padded}");
                let hyphens: String = code.chars().flat_map(|c| ['-', c]).collect();
                assert_eq!(decode(&hyphens, check), Ok(value), "{hyphens}");
            }
        }
    }

    #[test]
    fn look_alikes_read_as_digits() {
        assert_eq!(decode("O", false), Ok(0));
        assert_eq!(decode("o0O", false), Ok(0));
        for one in ["I", "i", "L", "l", "1"] {
            assert_eq!(decode(one, false), Ok(1));
        }
        assert_eq!(decode("1O", false), Ok(32));
        assert_eq!(decode("lO-*", true), Ok(32));
        assert_eq!(decode("16JD", true), decode("I6jd", true));
        assert_eq!(decode("14u", true), Ok(36));
        assert_eq!(decode("--z--", false), Ok(31));
    }

    #[test]
    fn bad_codes_are_refused_with_what_is_wrong() {
        assert_eq!(decode("", false), Err(CrockfordError::Empty));
        assert_eq!(decode("--", false), Err(CrockfordError::Empty));
        assert_eq!(decode("D", true), Err(CrockfordError::Empty));
        assert_eq!(
            decode("12#4", false),
            Err(CrockfordError::InvalidDigit {
                found: '#',
                position: 3
            })
        );
        assert_eq!(
            decode("1-u2", false),
            Err(CrockfordError::InvalidDigit {
                found: 'u',
                position: 3
            })
        );
        assert_eq!(
            decode("1*", false).unwrap_err().to_string(),
            "`*` at position 2 is not a Crockford base 32 digit"
        );
        assert_eq!(
            decode("16J#", true).unwrap_err().to_string(),
            "`#` at position 4 is not a Crockford base 32 check symbol"
        );
        assert_eq!(
            decode("G0000000000000", false),
            Err(CrockfordError::Overflow)
        );
        assert_eq!(
            decode("10000000000000", false),
            Err(CrockfordError::Overflow)
        );
        assert_eq!(
            decode("0000000000000000FZZZZZZZZZZZZ", false),
            Ok(u64::MAX),
            "leading zeros are no overflow"
        );
        assert_eq!(
            decode("16J0", true).unwrap_err().to_string(),
            "check symbol `0` does not match, expected `D` (crockford)"
        );
        assert_eq!(
            decode("16jo", true),
            Err(CrockfordError::CheckMismatch {
                expected: 'D',
                found: '0'
            })
        );
    }

    #[test]
    fn max_for_width_is_the_largest_code_of_that_width() {
        assert_eq!(max_for_width(0), 0);
        assert_eq!(max_for_width(1), 31);
        assert_eq!(max_for_width(12), (1 << 60) - 1);
        assert_eq!(max_for_width(64), u64::MAX);
        for width in 1..=12 {
            let max = max_for_width(width);
            assert_eq!(encode(max, 0, false), "Z".repeat(width));
            assert_eq!(encode(max + 1, 0, false).len(), width + 1);
        }
    }

    #[test]
    fn fixed_width_codes_sort_like_their_numbers() {
        let mut values: Vec<u64> = sample()
            .into_iter()
            .filter(|&v| v <= max_for_width(10))
            .collect();
        values.sort_unstable();
        values.dedup();
        assert!(values.len() > 500);
        let codes: Vec<String> = values.iter().map(|&v| encode(v, 10, false)).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(codes, sorted);
        assert!(
            encode(31, 0, false) > encode(32, 0, false),
            "unpadded codes do not sort"
        );
    }
}
