//! ISO 7064 MOD 97-10, as in IBANs: the check digits `98 - (n * 100 mod 97)` make the number
//! followed by them 1 modulo 97.

/// `digits` (digit values, 0 to 9) as a number modulo 97, a digit at a time, so that no
/// length overflows.
pub(super) fn remainder(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |r, &d| (r * 10 + u32::from(d)) % 97)
}

/// The check digits of `digits` (digit values, 0 to 9): from 2 to 98.
pub(super) fn check(digits: &[u8]) -> u32 {
    98 - remainder(digits) * 100 % 97
}

#[cfg(test)]
mod tests {
    use crate::encoding::CheckDigit;

    /// An IBAN rearranged for MOD 97-10 (ISO 13616): the first four characters moved to the
    /// end, then every letter replaced by its number (`A` = 10 … `Z` = 35).
    fn iban_digits(iban: &str) -> String {
        let compact: String = iban.chars().filter(|c| !c.is_whitespace()).collect();
        let (head, tail) = compact.split_at(4);
        format!("{tail}{head}")
            .chars()
            .map(|c| match c {
                '0'..='9' => c.to_string(),
                'A'..='Z' => (c as u32 - 'A' as u32 + 10).to_string(),
                _ => panic!("not an IBAN character: {c}"),
            })
            .collect()
    }

    #[test]
    fn mod97_matches_iban_check_digits() {
        for (iban, check) in [
            ("GB82 WEST 1234 5698 7654 32", "82"),
            ("DE89 3704 0044 0532 0130 00", "89"),
        ] {
            let digits = iban_digits(iban);
            assert_eq!(CheckDigit::Mod97.verify(&digits), Ok(()), "{iban}");
            // The check digits come from the rearranged number with `00` in their place:
            // 98 minus that number modulo 97. `compute` appends the `00` itself (`n * 100`).
            let without = &digits[..digits.len() - 2];
            assert_eq!(CheckDigit::Mod97.compute(without).unwrap(), check);
            let with_00: u128 = format!("{without}00").parse().unwrap();
            assert_eq!(format!("{:02}", 98 - with_00 % 97), check);
        }
        assert_eq!(
            CheckDigit::Mod97
                .verify(&iban_digits("GB28 WEST 1234 5698 7654 32"))
                .unwrap_err()
                .to_string(),
            "check digits `28` do not match, expected `82` (mod97)"
        );
    }

    #[test]
    fn mod97_gives_two_digits_from_02_to_98_at_any_length() {
        assert_eq!(CheckDigit::Mod97.compute("0").unwrap(), "98");
        assert_eq!(CheckDigit::Mod97.compute("97").unwrap(), "98");
        assert_eq!(CheckDigit::Mod97.compute("1").unwrap(), "95");
        let long: String = (0..10_000)
            .map(|i| char::from(b'0' + (i * 7 % 10) as u8))
            .collect();
        let check = CheckDigit::Mod97.compute(&long).unwrap();
        assert_eq!(CheckDigit::Mod97.verify(&format!("{long}{check}")), Ok(()));
        for n in 0..2_000u32 {
            let check: u32 = CheckDigit::Mod97
                .compute(&n.to_string())
                .unwrap()
                .parse()
                .unwrap();
            assert!((2..=98).contains(&check), "{n}: {check}");
            assert_eq!((u64::from(n) * 100 + u64::from(check)) % 97, 1);
        }
    }
}
