//! The limits every configuration and every stored counter must respect, and the arithmetic
//! on them that several parts of the crates share.

/// The longest counter name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// The most digits of `width` or `digits`: 18 decimal digits always fit in an `i64`.
pub const MAX_DIGITS: u8 = 18;

/// The most counter documents of one `ranges` sequence.
pub const MAX_SHARDS: u32 = 100_000;

/// The most draws of the `random` strategy after a collision.
pub const MAX_RETRIES: u32 = 10_000;

/// The largest integer that a counter stored as a double (as JavaScript writes numbers) holds
/// exactly: every integer up to it, and none beyond, is representable (2^53 - 1).
pub const MAX_EXACT_DOUBLE: i64 = (1 << 53) - 1;

/// `10^n`, for `n` up to [`MAX_DIGITS`].
///
/// # Panics
///
/// If `n` is above [`MAX_DIGITS`].
pub const fn pow10(n: u8) -> i64 {
    assert!(n <= MAX_DIGITS, "at most 18 digits");
    10_i64.pow(n as u32)
}

/// The values of exactly `digits` decimal digits, `10^(digits-1) ..= 10^digits - 1`, for
/// `digits` from 1 to [`MAX_DIGITS`]; `None` otherwise.
///
/// ```
/// use sequence_rules::limits::digits_range;
/// assert_eq!(digits_range(12), Some((100_000_000_000, 999_999_999_999)));
/// assert_eq!(digits_range(1), Some((1, 9)));
/// assert_eq!(digits_range(19), None);
/// ```
pub const fn digits_range(digits: u8) -> Option<(i64, i64)> {
    if digits == 0 || digits > MAX_DIGITS {
        return None;
    }
    let max = pow10(digits) - 1;
    Some((max / 10 + 1, max))
}

/// The integer a double holds exactly, if it holds one within ±[`MAX_EXACT_DOUBLE`].
///
/// ```
/// use sequence_rules::limits::{exact_integer, MAX_EXACT_DOUBLE};
/// assert_eq!(exact_integer(41.0), Some(41));
/// assert_eq!(exact_integer(41.5), None);
/// assert_eq!(exact_integer(MAX_EXACT_DOUBLE as f64), Some(MAX_EXACT_DOUBLE));
/// assert_eq!(exact_integer(MAX_EXACT_DOUBLE as f64 + 1.0), None);
/// ```
pub fn exact_integer(value: f64) -> Option<i64> {
    let exact = value.is_finite() && value.fract() == 0.0 && value.abs() <= MAX_EXACT_DOUBLE as f64;
    exact.then_some(value as i64)
}

/// Why `start..=max` is not a space of values, if it is not one.
pub fn space_problem(start: i64, max: i64) -> Option<String> {
    if start == i64::MIN {
        Some("`start` must be greater than i64::MIN".into())
    } else if start > max {
        Some(format!("`start` ({start}) is greater than `max` ({max})"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_ranges_at_the_edges() {
        assert_eq!(digits_range(0), None);
        assert_eq!(digits_range(2), Some((10, 99)));
        assert_eq!(
            digits_range(18),
            Some((100_000_000_000_000_000, 999_999_999_999_999_999))
        );
    }

    #[test]
    fn exact_doubles() {
        assert_eq!(
            exact_integer(-(MAX_EXACT_DOUBLE as f64)),
            Some(-MAX_EXACT_DOUBLE)
        );
        assert_eq!(exact_integer(f64::NAN), None);
        assert_eq!(exact_integer(f64::INFINITY), None);
        // 2^53 + 1 rounds to 2^53 as a double: not exact, so refused.
        assert_eq!(exact_integer(9_007_199_254_740_993_f64), None);
    }

    #[test]
    fn spaces() {
        assert!(space_problem(5, 5).is_none());
        assert!(space_problem(6, 5).unwrap().contains("`start` (6)"));
        assert!(space_problem(i64::MIN, 0).unwrap().contains("i64::MIN"));
    }
}
