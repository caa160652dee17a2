//! The rules of a Sqids configuration: an alphabet and a minimum length that the `sqids` crate
//! accepts, checked here so that the derive can refuse a bad one at compile time.
//!
//! The rules are those of `sqids` 0.4 (the Rust port of the reference implementation,
//! <https://sqids.org>), in its order: ASCII characters only (it refuses any character of more
//! than one byte), at least 3 of them, none twice; a minimum length from 0 to 255 (its
//! `min_length` is a `u8`, and every port limits it to 255). A valid alphabet may still hold
//! spaces or control characters, as `sqids` allows.
//!
//! This crate does not depend on `sqids` itself and does not encode: `sqids` brings
//! `derive_builder` (and so `darling` and `syn`), `serde` and `serde_json` into every build of
//! the derive macro. The runtime, which formats and parses the IDs, uses `sqids` directly,
//! one `u64` per ID.
//!
//! ```
//! use sequence_rules::encoding::sqids::{check_alphabet, check_min_length, DEFAULT_ALPHABET};
//!
//! assert_eq!(check_alphabet(DEFAULT_ALPHABET), Ok(()));
//! assert_eq!(
//!     check_alphabet("abca").unwrap_err(),
//!     "the Sqids alphabet has `a` twice (at positions 1 and 4), expected each character once"
//! );
//! assert!(check_min_length(256).is_err());
//! ```

/// The alphabet of Sqids when none is given: `a` to `z`, `A` to `Z`, `0` to `9`.
pub const DEFAULT_ALPHABET: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// The fewest characters an alphabet may have.
pub const MIN_ALPHABET_LEN: usize = 3;

/// The largest minimum length of an ID.
pub const MAX_MIN_LENGTH: u64 = 255;

/// Whether `sqids` accepts `alphabet`: ASCII characters only, at least
/// [`MIN_ALPHABET_LEN`], none twice. The message names the first offending character.
///
/// ```
/// use sequence_rules::encoding::sqids::check_alphabet;
/// assert_eq!(check_alphabet("0123456789abcdef"), Ok(()));
/// assert_eq!(
///     check_alphabet("ab").unwrap_err(),
///     "the Sqids alphabet `ab` has 2 characters, expected at least 3"
/// );
/// ```
pub fn check_alphabet(alphabet: &str) -> Result<(), String> {
    if let Some((i, c)) = alphabet.chars().enumerate().find(|(_, c)| !c.is_ascii()) {
        return Err(format!(
            "the Sqids alphabet has the non-ASCII character `{c}` at position {}, expected \
             ASCII characters only (Sqids refuses characters of more than one byte)",
            i + 1
        ));
    }
    if alphabet.len() < MIN_ALPHABET_LEN {
        return Err(format!(
            "the Sqids alphabet `{alphabet}` has {} character{}, expected at least \
             {MIN_ALPHABET_LEN}",
            alphabet.len(),
            if alphabet.len() == 1 { "" } else { "s" }
        ));
    }
    let mut first_at = [None::<usize>; 128];
    for (i, b) in alphabet.bytes().enumerate() {
        match first_at[usize::from(b)] {
            Some(first) => {
                return Err(format!(
                    "the Sqids alphabet has `{}` twice (at positions {} and {}), expected \
                     each character once",
                    char::from(b).escape_default(),
                    first + 1,
                    i + 1
                ))
            }
            None => first_at[usize::from(b)] = Some(i),
        }
    }
    Ok(())
}

/// Whether `sqids` accepts `n` as the minimum length of an ID: at most [`MAX_MIN_LENGTH`].
///
/// ```
/// use sequence_rules::encoding::sqids::check_min_length;
/// assert_eq!(check_min_length(255), Ok(()));
/// assert_eq!(
///     check_min_length(300).unwrap_err(),
///     "`min_length` is 300, expected at most 255 (the limit of Sqids)"
/// );
/// ```
pub fn check_min_length(n: u64) -> Result<(), String> {
    if n > MAX_MIN_LENGTH {
        return Err(format!(
            "`min_length` is {n}, expected at most {MAX_MIN_LENGTH} (the limit of Sqids)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphabets_sqids_accepts_pass() {
        // The alphabets of the `sqids` crate's tests (tests/alphabet.rs): simple, short, long.
        for alphabet in [
            DEFAULT_ALPHABET,
            "0123456789abcdef",
            "abc",
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*()-_+|{}[];:'\"/?.>,<`~",
            "a b",
        ] {
            assert_eq!(check_alphabet(alphabet), Ok(()), "{alphabet}");
        }
    }

    #[test]
    fn alphabets_sqids_refuses_are_refused_in_its_order() {
        // The refused alphabets of the `sqids` crate's tests (tests/alphabet.rs).
        assert_eq!(
            check_alphabet("ë1092").unwrap_err(),
            "the Sqids alphabet has the non-ASCII character `ë` at position 1, expected ASCII \
             characters only (Sqids refuses characters of more than one byte)"
        );
        assert_eq!(
            check_alphabet("aabcdefg").unwrap_err(),
            "the Sqids alphabet has `a` twice (at positions 1 and 2), expected each character \
             once"
        );
        assert_eq!(
            check_alphabet("ab").unwrap_err(),
            "the Sqids alphabet `ab` has 2 characters, expected at least 3"
        );
        // Non-ASCII comes first, then the length, then repeats, as in `sqids`.
        assert!(check_alphabet("é")
            .unwrap_err()
            .contains("non-ASCII character `é`"));
        assert!(check_alphabet("abcdé")
            .unwrap_err()
            .contains("at position 5"));
        assert!(check_alphabet("aa").unwrap_err().contains("2 characters"));
        assert_eq!(
            check_alphabet("").unwrap_err(),
            "the Sqids alphabet `` has 0 characters, expected at least 3"
        );
        assert_eq!(
            check_alphabet("a").unwrap_err(),
            "the Sqids alphabet `a` has 1 character, expected at least 3"
        );
        assert!(check_alphabet("abcdefb")
            .unwrap_err()
            .contains("`b` twice (at positions 2 and 7)"));
        assert!(check_alphabet("a\tb\t")
            .unwrap_err()
            .contains("`\\t` twice"));
    }

    #[test]
    fn min_length_stops_at_255() {
        for n in [0, 1, 10, 62, 255] {
            assert_eq!(check_min_length(n), Ok(()));
        }
        for n in [256, 1_000, u64::MAX] {
            assert!(check_min_length(n).is_err(), "{n}");
        }
    }
}
