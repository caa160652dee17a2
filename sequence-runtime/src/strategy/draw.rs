//! The values of the `random` strategy, and the random picks of the `ranges` one: uniform
//! draws from the operating system's CSPRNG.

use crate::error::{Error, Result};
use crate::id::Bounds;

/// A value drawn uniformly from `0..n` (`n >= 1`) with the operating system's CSPRNG.
pub(crate) fn below(n: u64) -> Result<u64> {
    below_with(n, || {
        getrandom::u64().map_err(|e| Error::Random(e.to_string()))
    })
}

/// A value drawn uniformly from `0..n` (`n >= 1`), from the uniform 64-bit draws of `source`.
///
/// Rejection sampling, so without modulo bias: a draw below `2^64 mod n` is drawn again, which
/// leaves a multiple of `n` equally likely draws.
fn below_with(n: u64, mut source: impl FnMut() -> Result<u64>) -> Result<u64> {
    debug_assert!(n > 0);
    let rejected_below = n.wrapping_neg() % n;
    loop {
        let x = source()?;
        if x >= rejected_below {
            return Ok(x % n);
        }
    }
}

/// A value drawn uniformly from `space`.
pub(crate) fn draw(space: Bounds) -> Result<i64> {
    Ok(space.start.wrapping_add_unsigned(below(space.size())?))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn draws_stay_in_the_space() {
        for space in [
            Bounds::new(10, 99).unwrap(),
            Bounds::new(-5, -5).unwrap(),
            Bounds::new(i64::MIN + 1, i64::MAX).unwrap(),
            Bounds::new(i64::MAX - 2, i64::MAX).unwrap(),
        ] {
            for _ in 0..1000 {
                let v = draw(space).unwrap();
                assert!(space.start <= v && v <= space.max, "{v} outside {space:?}");
            }
        }
        let mut seen = HashSet::new();
        for _ in 0..2000 {
            seen.insert(draw(Bounds::new(1, 9).unwrap()).unwrap());
        }
        assert_eq!(seen.len(), 9, "every value of a small space comes up");
    }

    #[test]
    fn draws_in_the_biased_tail_are_drawn_again() {
        // For n = 3, 2^64 mod 3 = 1: the draw 0 is the one rejected, 1 and above are kept.
        let mut draws = vec![Ok(7), Ok(1), Ok(0)];
        assert_eq!(below_with(3, || draws.pop().unwrap()).unwrap(), 1);
        assert_eq!(draws.len(), 1, "0 was rejected, 1 accepted, 7 never drawn");
        // For n = 2^63 + 1, every draw below 2^63 - 1 is rejected.
        let n = (1 << 63) + 1;
        let mut draws = vec![Ok(u64::MAX), Ok((1 << 63) - 2), Ok(0)];
        assert_eq!(
            below_with(n, || draws.pop().unwrap()).unwrap(),
            u64::MAX % n
        );
        assert!(draws.is_empty());
        // A failing source is an error, not a value.
        assert!(matches!(
            below_with(10, || Err(Error::Random("no entropy".into()))),
            Err(Error::Random(_))
        ));
        // n = 1: every draw is kept and gives 0.
        assert_eq!(below_with(1, || Ok(u64::MAX)).unwrap(), 0);
    }
}
