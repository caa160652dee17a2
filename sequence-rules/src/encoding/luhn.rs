//! The Luhn algorithm (ISO/IEC 7812): the sum of the digits, every second one from the right
//! doubled (and its digits added), must end in 0.

/// The Luhn sum modulo 10, doubling every second digit from the right: starting with the
/// rightmost when `double_last` (a number whose check digit is still to come), else with the
/// one before it.
fn sum(digits: &[u8], double_last: bool) -> u8 {
    digits.iter().rev().enumerate().fold(0, |sum, (i, &d)| {
        let value = if (i % 2 == 0) == double_last {
            let twice = d * 2;
            twice / 10 + twice % 10
        } else {
            d
        };
        (sum + value) % 10
    })
}

/// The check digit to append to `digits` (digit values, 0 to 9).
pub(super) fn check(digits: &[u8]) -> u8 {
    (10 - sum(digits, true)) % 10
}

/// Whether `digits` (digit values, 0 to 9) end with their check digit.
pub(super) fn is_valid(digits: &[u8]) -> bool {
    sum(digits, false) == 0
}

#[cfg(test)]
mod tests {
    use crate::encoding::{CheckDigit, CheckDigitError};

    #[test]
    fn luhn_matches_the_published_example() {
        // Wikipedia, "Luhn algorithm": 7992739871 has the check digit 3.
        assert_eq!(CheckDigit::Luhn.compute("7992739871").unwrap(), "3");
        assert_eq!(CheckDigit::Luhn.verify("79927398713"), Ok(()));
        for wrong in "0124567889".chars() {
            let text = format!("7992739871{wrong}");
            assert_eq!(
                CheckDigit::Luhn.verify(&text),
                Err(CheckDigitError::Mismatch {
                    algorithm: CheckDigit::Luhn,
                    expected: "3".into(),
                    found: wrong.to_string(),
                })
            );
        }
        // A test card number of the payment networks.
        assert_eq!(CheckDigit::Luhn.verify("4111111111111111"), Ok(()));
        // Luhn's one blind spot among adjacent transpositions: 09 and 90.
        assert_eq!(CheckDigit::Luhn.compute("109").unwrap(), "9");
        assert_eq!(CheckDigit::Luhn.verify("1099"), Ok(()));
        assert_eq!(CheckDigit::Luhn.verify("1909"), Ok(()));
    }
}
