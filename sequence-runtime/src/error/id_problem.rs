//! [`IdProblem`]: what is wrong with a text that is not an ID of a sequence.

use sequence_rules::encoding::CheckDigit;

/// `1 character`, `2 characters`.
fn characters(n: usize) -> String {
    match n {
        1 => "1 character".to_owned(),
        n => format!("{n} characters"),
    }
}

/// Why a text is not an ID of a sequence: what [`Sequence::parse_id`](crate::Sequence::parse_id)
/// and a model's `parse_id` return inside [`Error::InvalidId`](crate::Error::InvalidId).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdProblem {
    /// The ID does not begin as the sequence's IDs do.
    #[error("it does not begin with {expected}")]
    Prefix {
        /// The prefix, or the pattern of the prefixes, expected.
        expected: String,
    },
    /// The ID does not end as the sequence's IDs do.
    #[error("it does not end with `{expected}`")]
    Suffix {
        /// The text expected after the number.
        expected: String,
    },
    /// The check digits are missing after the number.
    #[error("it has no check digit after its number: expected {expected}")]
    NoCheck {
        /// What is expected after the number (`` `-` and 1 check digit ``).
        expected: String,
    },
    /// Nothing where the number should be.
    #[error("it has no number")]
    NoNumber,
    /// A character of a decimal number is not a digit.
    #[error("`{found}` at position {position} of the number is not a decimal digit")]
    NotDigit {
        /// The character.
        found: char,
        /// Where it is in the number, counted from 1.
        position: usize,
    },
    /// The number has another width than the sequence writes.
    #[error("its number has {}, expected {expected}", characters(*found))]
    Width {
        /// The width of the sequence's numbers.
        expected: usize,
        /// The characters found.
        found: usize,
    },
    /// The number is not written in the sequence's encoding.
    #[error("{0}")]
    Encoding(String),
    /// The check digits do not match.
    #[error("check digit `{found}` does not match, expected `{expected}` ({algorithm})")]
    CheckDigit {
        /// The algorithm.
        algorithm: CheckDigit,
        /// The check digits of the number read.
        expected: String,
        /// The check digits written.
        found: String,
    },
    /// A number without a width that starts with `0`: the sequence writes none.
    #[error("its number `{number}` starts with `0`, which this sequence does not write")]
    LeadingZero {
        /// The number as written.
        number: String,
    },
    /// The number is not one of the sequence's values (above `max`, or negative below a
    /// non-negative `start`).
    #[error("its number {value} is not one of the sequence's values ({min}..={max})")]
    OutOfRange {
        /// The number read.
        value: i64,
        /// The smallest number an ID of the sequence shows.
        min: i64,
        /// The largest.
        max: i64,
    },
    /// The number is larger than a counter holds.
    #[error("its number is larger than a counter holds")]
    TooLarge,
}
