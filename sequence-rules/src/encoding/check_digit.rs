//! Check digits for decimal numbers: Luhn, Damm and ISO 7064 MOD 97-10.
//!
//! A check digit appended to a number lets a reader or a form refuse a mistyped number before
//! any lookup. [`CheckDigit::compute`] gives the check digits of a number and
//! [`CheckDigit::verify`] tests a number that ends with them. Both take decimal digits as text,
//! of any length, leading zeros included.
//!
//! The arithmetic is written here, one private module per algorithm (`luhn`, `damm`,
//! `mod97`), rather than taken from a crate: `luhn` 1.0.2 validates by skipping every
//! character that is not a digit, and its `checksum` panics on some (it also brings
//! `digits_iterator`); `damm` 0.1.0 takes a `u128`, so at most 38 digits; `iso7064` 0.1.0, a
//! first release, gives `00` and `01` where ISO 7064 gives `97` and `98` (its check digits are
//! `(98 - r) % 97`). Each algorithm is a few lines, and agrees with those crates elsewhere.

use std::fmt;
use std::str::FromStr;

use super::{crockford, damm, luhn, mod97};

/// A check digit algorithm, as named in configuration (`"luhn"`, `"damm"`, `"mod97"`).
///
/// ```
/// use sequence_rules::encoding::CheckDigit;
///
/// let luhn: CheckDigit = "luhn".parse().unwrap();
/// assert_eq!(luhn.compute("7992739871").unwrap(), "3");
/// assert!(luhn.verify("79927398713").is_ok());
/// assert_eq!(
///     luhn.verify("79927398717").unwrap_err().to_string(),
///     "check digit `7` does not match, expected `3` (luhn)"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CheckDigit {
    /// The Luhn algorithm (ISO/IEC 7812, payment card numbers): one digit; catches every
    /// single-digit error and most adjacent transpositions (not `09` and `90`).
    Luhn,
    /// The Damm algorithm (H. Michael Damm, 2004): one digit from a totally anti-symmetric
    /// quasigroup of order 10; catches every single-digit error and every adjacent
    /// transposition.
    Damm,
    /// ISO 7064 MOD 97-10, as in IBANs: two digits, `98 - (n * 100 mod 97)`; catches every
    /// single-digit error and every adjacent transposition, and most other errors.
    Mod97,
    /// The check symbol of Crockford base 32: the number modulo 37, written as one of the 32
    /// digits or `*`, `~`, `$`, `=`, `U`; catches every single-digit error and every adjacent
    /// transposition. For IDs encoded in Crockford base 32 (the symbol is not a decimal digit).
    Crockford,
}

impl CheckDigit {
    /// Every algorithm, in the order of [`CheckDigit::NAMES`].
    pub const ALL: [CheckDigit; 4] = [
        CheckDigit::Luhn,
        CheckDigit::Damm,
        CheckDigit::Mod97,
        CheckDigit::Crockford,
    ];

    /// The names, as written in configuration, in the order messages list them.
    pub const NAMES: [&'static str; 4] = ["luhn", "damm", "mod97", "crockford"];

    /// The name, as written in configuration.
    pub const fn name(self) -> &'static str {
        match self {
            CheckDigit::Luhn => "luhn",
            CheckDigit::Damm => "damm",
            CheckDigit::Mod97 => "mod97",
            CheckDigit::Crockford => "crockford",
        }
    }

    /// The name of the Rust variant, for generated code.
    pub const fn variant(self) -> &'static str {
        match self {
            CheckDigit::Luhn => "Luhn",
            CheckDigit::Damm => "Damm",
            CheckDigit::Mod97 => "Mod97",
            CheckDigit::Crockford => "Crockford",
        }
    }

    /// The algorithm named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether the check is written with decimal digits (all but [`CheckDigit::Crockford`]).
    pub const fn is_decimal(self) -> bool {
        !matches!(self, CheckDigit::Crockford)
    }

    /// How many check digits the algorithm appends: 1 for Luhn, Damm and Crockford's symbol,
    /// 2 for MOD 97-10.
    #[allow(clippy::len_without_is_empty)] // a count of check digits, never 0
    pub const fn len(self) -> usize {
        match self {
            CheckDigit::Luhn | CheckDigit::Damm | CheckDigit::Crockford => 1,
            CheckDigit::Mod97 => 2,
        }
    }

    /// The check digits of `digits` (ASCII decimal digits, at least one), to append to it.
    ///
    /// ```
    /// use sequence_rules::encoding::CheckDigit;
    /// assert_eq!(CheckDigit::Damm.compute("572").unwrap(), "4");
    /// assert_eq!(CheckDigit::Mod97.compute("0").unwrap(), "98");
    /// assert!(CheckDigit::Luhn.compute("12a").is_err());
    /// ```
    pub fn compute(self, digits: &str) -> Result<String, CheckDigitError> {
        let digits = parse_digits(digits)?;
        if digits.is_empty() {
            return Err(CheckDigitError::Empty);
        }
        Ok(self.check_of(&digits).to_string())
    }

    /// The check digits of the decimal digits among `text`'s characters (the others skipped,
    /// as in an ID whose prefix or separators hold letters), or `None` if it holds no digit.
    /// Allocates nothing for up to 64 digits.
    ///
    /// ```
    /// use sequence_rules::encoding::CheckDigit;
    /// assert_eq!(CheckDigit::Luhn.check_of_digits_in("ACC-79927398-71").unwrap().as_str(), "3");
    /// assert_eq!(CheckDigit::Mod97.check_of_digits_in("0").unwrap().as_str(), "98");
    /// assert!(CheckDigit::Damm.check_of_digits_in("ACC-").is_none());
    /// ```
    pub fn check_of_digits_in(self, text: &str) -> Option<Check> {
        const ON_STACK: usize = 64;
        let mut stack = [0_u8; ON_STACK];
        let mut heap = Vec::new();
        let mut n = 0;
        for b in text.bytes().filter(u8::is_ascii_digit) {
            if n < ON_STACK {
                stack[n] = b - b'0';
            } else {
                if heap.is_empty() {
                    heap.extend_from_slice(&stack);
                }
                heap.push(b - b'0');
            }
            n += 1;
        }
        let digits = if n > ON_STACK { &heap[..] } else { &stack[..n] };
        if digits.is_empty() {
            return None;
        }
        Some(self.check_of(digits))
    }

    /// Whether `digits_with_check` (ASCII decimal digits) ends with the right check digits
    /// for the digits before them. For MOD 97-10 the whole number must be 1 modulo 97, as
    /// IBAN validation asks.
    ///
    /// ```
    /// use sequence_rules::encoding::{CheckDigit, CheckDigitError};
    /// assert!(CheckDigit::Damm.verify("5724").is_ok());
    /// assert!(matches!(
    ///     CheckDigit::Damm.verify("5742"),
    ///     Err(CheckDigitError::Mismatch { .. })
    /// ));
    /// assert!(matches!(CheckDigit::Mod97.verify("98"), Err(CheckDigitError::TooShort { .. })));
    /// ```
    pub fn verify(self, digits_with_check: &str) -> Result<(), CheckDigitError> {
        if self == CheckDigit::Crockford {
            return verify_symbol(digits_with_check);
        }
        let digits = parse_digits(digits_with_check)?;
        if digits.len() <= self.len() {
            return Err(CheckDigitError::TooShort {
                algorithm: self,
                len: digits.len(),
            });
        }
        let ok = match self {
            CheckDigit::Luhn => luhn::is_valid(&digits),
            CheckDigit::Damm => damm::interim(&digits) == 0,
            CheckDigit::Mod97 => mod97::remainder(&digits) == 1,
            CheckDigit::Crockford => unreachable!("verified above"),
        };
        if ok {
            return Ok(());
        }
        let (number, check) = digits_with_check.split_at(digits.len() - self.len());
        Err(CheckDigitError::Mismatch {
            algorithm: self,
            expected: self.check_of(&digits[..number.len()]).to_string(),
            found: check.to_owned(),
        })
    }

    /// The check digits of a non-empty slice of digit values.
    fn check_of(self, digits: &[u8]) -> Check {
        let one = |b: u8| Check {
            bytes: [b, 0],
            len: 1,
        };
        match self {
            CheckDigit::Luhn => one(b'0' + luhn::check(digits)),
            CheckDigit::Damm => one(b'0' + damm::interim(digits)),
            CheckDigit::Mod97 => {
                let check = mod97::check(digits) as u8;
                Check {
                    bytes: [b'0' + check / 10, b'0' + check % 10],
                    len: 2,
                }
            }
            CheckDigit::Crockford => one(crockford::check_symbol_of_digits(digits)),
        }
    }
}

/// Check digits (or a check symbol) as [`CheckDigit::check_of_digits_in`] computes them: one
/// or two ASCII characters, held without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    bytes: [u8; 2],
    len: u8,
}

impl Check {
    /// The check digits as text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).expect("ASCII check digits")
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// [`CheckDigit::verify`] for Crockford's check symbol: decimal digits, then the symbol (read
/// as Crockford decoding reads it: either case, the look-alikes).
fn verify_symbol(text: &str) -> Result<(), CheckDigitError> {
    let algorithm = CheckDigit::Crockford;
    let mut chars = text.chars();
    let found = chars.next_back();
    let digits = parse_digits(chars.as_str())?;
    let (Some(found), false) = (found, digits.is_empty()) else {
        return Err(CheckDigitError::TooShort {
            algorithm,
            len: text.chars().count(),
        });
    };
    let expected = crockford::check_symbol_of_digits(&digits);
    if crockford::symbol_value(found) == crockford::symbol_value(char::from(expected)) {
        return Ok(());
    }
    Err(CheckDigitError::Mismatch {
        algorithm,
        expected: char::from(expected).into(),
        found: found.into(),
    })
}

/// The values of ASCII decimal digits, or where the first other character is.
fn parse_digits(text: &str) -> Result<Vec<u8>, CheckDigitError> {
    text.chars()
        .enumerate()
        .map(|(i, c)| match c {
            '0'..='9' => Ok(c as u8 - b'0'),
            _ => Err(CheckDigitError::NotDigit {
                found: c,
                position: i + 1,
            }),
        })
        .collect()
}

impl fmt::Display for CheckDigit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A check digit name that [`CheckDigit`]'s `FromStr` refused, with the valid names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCheckDigit(String);

impl fmt::Display for UnknownCheckDigit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnknownCheckDigit {}

impl FromStr for CheckDigit {
    type Err = UnknownCheckDigit;

    /// Parses a name as written in configuration: `luhn`, `damm` or `mod97`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if let Some(algorithm) = Self::ALL.into_iter().find(|a| a.name() == name) {
            return Ok(algorithm);
        }
        let names: Vec<String> = Self::NAMES.iter().map(|n| format!("`{n}`")).collect();
        Err(UnknownCheckDigit(format!(
            "unknown check digit `{name}`, expected one of: {}{}",
            names.join(", "),
            crate::suggest::did_you_mean(name, Self::NAMES)
        )))
    }
}

/// Why a number has no check digit, or the wrong one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckDigitError {
    /// [`CheckDigit::compute`] was given no digits.
    Empty,
    /// A character is not an ASCII decimal digit.
    NotDigit {
        /// The character.
        found: char,
        /// Where it is, counted in characters from 1.
        position: usize,
    },
    /// [`CheckDigit::verify`] was given no more digits than the check digits alone.
    TooShort {
        /// The algorithm.
        algorithm: CheckDigit,
        /// How many digits it was given.
        len: usize,
    },
    /// The check digits are not those of the number before them.
    Mismatch {
        /// The algorithm.
        algorithm: CheckDigit,
        /// The check digits of the number.
        expected: String,
        /// The check digits written.
        found: String,
    },
}

impl fmt::Display for CheckDigitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckDigitError::Empty => f.write_str("no digits to compute a check digit of"),
            CheckDigitError::NotDigit { found, position } => {
                write!(f, "`{found}` at position {position} is not a decimal digit")
            }
            CheckDigitError::TooShort { algorithm, len } => write!(
                f,
                "too short for a check digit ({algorithm}): {len} digit{}, expected at least {}",
                if *len == 1 { "" } else { "s" },
                algorithm.len() + 1
            ),
            CheckDigitError::Mismatch {
                algorithm,
                expected,
                found,
            } => {
                let (what, does) = if algorithm.len() == 1 {
                    ("check digit", "does")
                } else {
                    ("check digits", "do")
                };
                write!(
                    f,
                    "{what} `{found}` {does} not match, expected `{expected}` ({algorithm})"
                )
            }
        }
    }
}

impl std::error::Error for CheckDigitError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_of_digits_among_text_match_compute_at_any_length() {
        for algorithm in CheckDigit::ALL {
            for len in [1, 19, 63, 64, 65, 130] {
                let digits: String = (0..len)
                    .map(|i| char::from(b'0' + (i * 7 % 10) as u8))
                    .collect();
                let spaced: String = digits.chars().flat_map(|c| [c, '-', 'A']).collect();
                let check = algorithm.check_of_digits_in(&spaced).unwrap();
                assert_eq!(
                    check.as_str(),
                    algorithm.compute(&digits).unwrap(),
                    "{algorithm} over {len} digits"
                );
                if algorithm != CheckDigit::Crockford {
                    assert_eq!(algorithm.verify(&format!("{digits}{check}")), Ok(()));
                }
            }
            assert_eq!(algorithm.check_of_digits_in("ACC-"), None);
        }
    }

    #[test]
    fn names_parse_and_misspellings_are_suggested() {
        for (algorithm, name) in CheckDigit::ALL.into_iter().zip(CheckDigit::NAMES) {
            assert_eq!(algorithm.name(), name);
            assert_eq!(name.parse::<CheckDigit>(), Ok(algorithm));
            assert_eq!(algorithm.to_string(), name);
        }
        assert_eq!(
            "lunh".parse::<CheckDigit>().unwrap_err().to_string(),
            "unknown check digit `lunh`, expected one of: `luhn`, `damm`, `mod97`, \
             `crockford`; did you mean `luhn`?"
        );
        assert_eq!(
            "crc32".parse::<CheckDigit>().unwrap_err().to_string(),
            "unknown check digit `crc32`, expected one of: `luhn`, `damm`, `mod97`, `crockford`"
        );
        let lens: Vec<usize> = CheckDigit::ALL.iter().map(|a| a.len()).collect();
        assert_eq!(lens, [1, 1, 2, 1]);
    }

    /// Every number that differs from `code` in one digit, or by swapping two adjacent
    /// different digits.
    fn single_errors(code: &str) -> Vec<String> {
        let mut wrong = Vec::new();
        let bytes = code.as_bytes();
        for i in 0..bytes.len() {
            for d in b'0'..=b'9' {
                if d != bytes[i] {
                    let mut b = bytes.to_vec();
                    b[i] = d;
                    wrong.push(String::from_utf8(b).unwrap());
                }
            }
            if i + 1 < bytes.len() && bytes[i] != bytes[i + 1] {
                let mut b = bytes.to_vec();
                b.swap(i, i + 1);
                wrong.push(String::from_utf8(b).unwrap());
            }
        }
        wrong
    }

    #[test]
    fn every_substitution_and_adjacent_transposition_is_caught() {
        for number in [
            "572",
            "1234567890",
            "0000",
            "9081726354",
            "31415926535897932384",
        ] {
            for algorithm in CheckDigit::ALL {
                let code = format!("{number}{}", algorithm.compute(number).unwrap());
                assert_eq!(algorithm.verify(&code), Ok(()), "{code}");
                let wrong = single_errors(&code);
                assert!(wrong.len() >= 9 * code.len());
                for w in wrong {
                    let swapped: Vec<(u8, u8)> = w
                        .bytes()
                        .zip(code.bytes())
                        .filter(|(a, b)| a != b)
                        .collect();
                    let luhn_blind_spot = swapped == [(b'9', b'0'), (b'0', b'9')]
                        || swapped == [(b'0', b'9'), (b'9', b'0')];
                    if algorithm == CheckDigit::Luhn && luhn_blind_spot {
                        continue;
                    }
                    assert!(algorithm.verify(&w).is_err(), "{algorithm} missed {w}");
                }
            }
        }
    }

    #[test]
    fn leading_zeros_count() {
        for algorithm in CheckDigit::ALL {
            let check = algorithm.compute("0042").unwrap();
            assert_eq!(algorithm.verify(&format!("0042{check}")), Ok(()));
        }
        for algorithm in CheckDigit::ALL {
            // Kept in the text, and no change to the check digits: all three start from 0.
            assert_eq!(algorithm.compute("0042"), algorithm.compute("42"));
        }
    }

    #[test]
    fn text_that_is_not_a_number_is_refused() {
        for algorithm in CheckDigit::ALL {
            assert_eq!(algorithm.compute(""), Err(CheckDigitError::Empty));
            assert_eq!(
                algorithm.compute("12 3"),
                Err(CheckDigitError::NotDigit {
                    found: ' ',
                    position: 3
                })
            );
            assert!(matches!(
                algorithm.verify("１２３"),
                Err(CheckDigitError::NotDigit {
                    found: '１',
                    position: 1
                })
            ));
            assert_eq!(
                algorithm.verify(&"7".repeat(algorithm.len())),
                Err(CheckDigitError::TooShort {
                    algorithm,
                    len: algorithm.len()
                })
            );
        }
        assert_eq!(
            CheckDigit::Luhn.compute("4-1").unwrap_err().to_string(),
            "`-` at position 2 is not a decimal digit"
        );
        assert_eq!(
            CheckDigit::Mod97.verify("12").unwrap_err().to_string(),
            "too short for a check digit (mod97): 2 digits, expected at least 3"
        );
        assert_eq!(
            CheckDigit::Damm.verify("").unwrap_err().to_string(),
            "too short for a check digit (damm): 0 digits, expected at least 2"
        );
    }
}
