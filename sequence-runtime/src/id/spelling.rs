//! How the number of an ID is written when it is more than zero-padded decimal digits: its
//! encoding (Crockford base 32, Sqids), its check digits and the text of a `format` template
//! after it. Built once per sequence and shared by its slots.

use std::fmt;

use sequence_rules::encoding::{crockford, CheckDigit, Encoding};
use sequence_rules::template::Tail;
use sequence_rules::Checked;

use super::sqids_encoder::SqidsEncoder;
use crate::error::{Error, IdProblem, Result};

/// How the number part is written.
enum Encoder {
    Decimal,
    Crockford,
    Sqids(Box<SqidsEncoder>),
}

/// The encoding, check digits and tail of a sequence's IDs.
pub struct Spelling {
    encoder: Encoder,
    /// The configuration the encoder was built from, to compare and print spellings.
    encoding: Encoding,
    alphabet: Option<String>,
    min_length: u8,
    check: Option<CheckDigit>,
    tail: Tail,
}

impl Spelling {
    /// The spelling a checked configuration asks for; `None` for plain decimal digits with no
    /// check digit and no text after them (the rendering of prefix and width alone).
    pub(crate) fn of(checked: &Checked) -> Result<Option<Spelling>> {
        let plain = checked.encoding == Encoding::Decimal
            && checked.check_digit.is_none()
            && !checked.tail.has_text();
        if plain {
            return Ok(None);
        }
        let encoder = match checked.encoding {
            Encoding::Crockford32 => Encoder::Crockford,
            Encoding::Sqids => {
                let built = SqidsEncoder::new(checked.alphabet.as_deref(), checked.min_length)
                    .map_err(|e| Error::InvalidConfig {
                        key: "alphabet",
                        message: format!("the Sqids alphabet is refused: {e}"),
                    })?;
                Encoder::Sqids(Box::new(built))
            }
            _ => Encoder::Decimal,
        };
        Ok(Some(Spelling {
            encoder,
            encoding: checked.encoding,
            alphabet: checked.alphabet.clone(),
            min_length: checked.min_length,
            check: checked.check_digit,
            tail: checked.tail.clone(),
        }))
    }

    /// The check digits, if any.
    pub(crate) fn check(&self) -> Option<CheckDigit> {
        self.check
    }

    /// The encoding.
    pub(crate) fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// What follows the number.
    pub(crate) fn tail(&self) -> &Tail {
        &self.tail
    }

    /// Whether the IDs hold anything an integer cannot: another encoding, or text after the
    /// number.
    pub(crate) fn is_text_only(&self) -> bool {
        self.encoding != Encoding::Decimal || self.tail.has_text()
    }

    /// Appends the number `value` (zero-padded to `width` where the encoding pads), the text
    /// after it and its check digits to `out`, which holds the prefix already.
    pub(crate) fn write(&self, out: &mut String, value: i64, width: usize) -> Result<()> {
        let unsigned = u64::try_from(value).map_err(|_| Error::IdOutOfRange {
            value,
            target: "an encoded ID (no sign)",
        });
        match &self.encoder {
            Encoder::Decimal => {
                use std::fmt::Write;
                // Writing to a String cannot fail.
                let _ = write!(out, "{value:0width$}");
            }
            Encoder::Crockford => crockford::encode_into(unsigned?, width, out),
            Encoder::Sqids(sqids) => {
                let id = sqids.encode(unsigned?).map_err(|e| Error::InvalidConfig {
                    key: "alphabet",
                    message: format!("no Sqids ID for {value} with this alphabet: {e}"),
                })?;
                out.push_str(&id);
            }
        }
        out.push_str(&self.tail.before_check);
        match self.check {
            Some(CheckDigit::Crockford) => out.push(crockford::check_symbol(value.unsigned_abs())),
            Some(check) => {
                // The check digits cover every decimal digit written before them.
                if let Some(check) = check.check_of_digits_in(out) {
                    out.push_str(check.as_str());
                }
            }
            None => {}
        }
        out.push_str(&self.tail.after_check);
        Ok(())
    }

    /// The number part of an ID (without prefix, check digits or tail) as a value.
    pub(crate) fn decode(&self, number: &str) -> std::result::Result<i64, IdProblem> {
        let value = match &self.encoder {
            Encoder::Decimal => return decimal(number, false),
            Encoder::Crockford => {
                crockford::decode(number, false).map_err(|e| IdProblem::Encoding(e.to_string()))?
            }
            Encoder::Sqids(sqids) => {
                let numbers = sqids.decode(number);
                let canonical = match numbers.as_slice() {
                    [one] => sqids.encode(*one).ok().filter(|id| id == number),
                    _ => None,
                };
                canonical.and(numbers.first().copied()).ok_or_else(|| {
                    IdProblem::Encoding(format!(
                        "`{number}` is not a Sqids ID of this sequence's alphabet"
                    ))
                })?
            }
        };
        i64::try_from(value).map_err(|_| IdProblem::TooLarge)
    }

    /// Whether `check` (the characters at the place of the check digits) is the check of the
    /// ID written up to it as `written`, whose number is `value`.
    pub(crate) fn verify(
        &self,
        written: &str,
        check: &str,
        value: i64,
    ) -> std::result::Result<(), IdProblem> {
        let Some(algorithm) = self.check else {
            return Ok(());
        };
        let expected = match algorithm {
            CheckDigit::Crockford => crockford::check_symbol(value.unsigned_abs()).to_string(),
            _ => algorithm
                .check_of_digits_in(written)
                .map(|c| c.to_string())
                .unwrap_or_default(),
        };
        let matches = match algorithm {
            CheckDigit::Crockford => check_symbol_matches(check, value),
            _ => expected == check,
        };
        if matches {
            return Ok(());
        }
        Err(IdProblem::CheckDigit {
            algorithm,
            expected,
            found: check.to_owned(),
        })
    }
}

/// Whether `check` is Crockford's check symbol of `value`, read as decoding reads it (in
/// either case, `O` as `0`, `I` and `L` as `1`); a hyphen, which decoding reads past, is no
/// check symbol.
fn check_symbol_matches(check: &str, value: i64) -> bool {
    let code = crockford::encode(value.unsigned_abs(), 0, false);
    !check.contains('-') && crockford::decode(&format!("{code}{check}"), true).is_ok()
}

/// Decimal digits as a value, after a `-` for a negative one where `signed` (a number
/// without a width: a zero-padded one has no sign).
pub(crate) fn decimal(number: &str, signed: bool) -> std::result::Result<i64, IdProblem> {
    let sign = usize::from(signed && number.starts_with('-'));
    if let Some((position, found)) = number
        .chars()
        .enumerate()
        .skip(sign)
        .find(|(_, c)| !c.is_ascii_digit())
    {
        return Err(IdProblem::NotDigit {
            found,
            position: position + 1,
        });
    }
    if number.len() == sign {
        return Err(IdProblem::NoNumber);
    }
    number.parse().map_err(|_| IdProblem::TooLarge)
}

impl PartialEq for Spelling {
    fn eq(&self, other: &Self) -> bool {
        (
            self.encoding,
            &self.alphabet,
            self.min_length,
            self.check,
            &self.tail,
        ) == (
            other.encoding,
            &other.alphabet,
            other.min_length,
            other.check,
            &other.tail,
        )
    }
}

impl Eq for Spelling {}

impl fmt::Debug for Spelling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spelling")
            .field("encoding", &self.encoding)
            .field("alphabet", &self.alphabet)
            .field("min_length", &self.min_length)
            .field("check", &self.check)
            .field("tail", &self.tail)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelling(spec: sequence_rules::Spec<'_>) -> Spelling {
        Spelling::of(&sequence_rules::check(&spec).unwrap())
            .unwrap()
            .unwrap()
    }

    /// The Sqids test suite's IDs of the numbers 0 to 9 in the default alphabet
    /// (`encoding.test.ts`, "incremental numbers, same index 0").
    #[test]
    fn sqids_ids_are_the_reference_ones() {
        let sqids = spelling(sequence_rules::Spec {
            encoding: Some(Encoding::Sqids),
            ..sequence_rules::Spec::new("x")
        });
        let expected = ["bM", "Uk", "gb", "Ef", "Vq", "uw", "OI", "AX", "p6", "nJ"];
        for (value, id) in (0..).zip(expected) {
            let mut out = String::new();
            sqids.write(&mut out, value, 0).unwrap();
            assert_eq!(out, id);
            assert_eq!(sqids.decode(id), Ok(value));
        }
    }

    #[test]
    fn writes_and_reads_each_encoding() {
        use sequence_rules::Spec;
        let luhn = spelling(Spec {
            check_digit: Some(CheckDigit::Luhn),
            ..Spec::new("x")
        });
        let mut out = String::from("799273987");
        luhn.write(&mut out, 1, 0).unwrap();
        // Luhn's worked example: 7992739871 has the check digit 3.
        assert_eq!(out, "79927398713");
        assert_eq!(luhn.verify("7992739871", "3", 1), Ok(()));
        assert!(matches!(
            luhn.verify("7992739871", "4", 1),
            Err(IdProblem::CheckDigit { .. })
        ));
        let crockford = spelling(Spec {
            encoding: Some(Encoding::Crockford32),
            check_digit: Some(CheckDigit::Crockford),
            ..Spec::new("x")
        });
        let mut out = String::new();
        crockford.write(&mut out, 1234, 6).unwrap();
        assert_eq!(out, "00016JD");
        assert_eq!(crockford.decode("00016j"), Ok(1234));
        assert_eq!(crockford.verify("00016J", "d", 1234), Ok(()));
        assert!(crockford.verify("00016J", "X", 1234).is_err());
        let sqids = spelling(Spec {
            encoding: Some(Encoding::Sqids),
            ..Spec::new("x")
        });
        let mut out = String::new();
        sqids.write(&mut out, 1, 0).unwrap();
        assert_eq!(sqids.decode(&out), Ok(1));
        assert!(sqids.decode("not-an-id").is_err());
        assert!(matches!(
            sqids.write(&mut String::new(), -1, 0),
            Err(Error::IdOutOfRange { value: -1, .. })
        ));
    }
}
