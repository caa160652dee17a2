//! Rules that involve the strategy: which keys apply to it, and whether its ID space fits.

use crate::ast::{IdKind, Model};
use crate::attr::Errors;
use crate::check::{list, STRATEGIES};

/// Keys that apply to some strategies only, and those strategies.
const APPLIES_TO: &[(&str, &[&str])] = &[
    ("batch", &["counter", "sharded"]),
    ("batch_min", &["counter", "sharded"]),
    ("batch_max", &["counter", "sharded"]),
    ("counters", &["counter", "sharded"]),
    ("start", &["counter", "sharded", "random"]),
    ("max", &["counter", "sharded", "random"]),
    ("digits", &["counter", "sharded", "random"]),
    ("shards", &["sharded"]),
    ("retries", &["random"]),
    ("prefix", &["counter"]),
    ("tz", &["counter"]),
    ("width", &["counter"]),
    ("scope", &["counter"]),
    ("layout", &["counter"]),
    ("gapless", &["counter"]),
];

/// Strategies with which `digits` is available in this release.
/// The IDs of exactly `digits` digits (1 to 18), as the runtime's `Bounds::digits` computes
/// them.
fn digit_range(digits: u64) -> (i128, i128) {
    let hi = 10_i128.pow(digits as u32) - 1;
    (hi / 10 + 1, hi)
}

/// Checks the keys against the strategy (`"counter"` when none is given).
pub fn check(model: &Model, strategy: &str, errors: &mut Errors) {
    let a = &model.attrs;
    if STRATEGIES.contains(&strategy) {
        for &(key, strategies) in APPLIES_TO {
            let Some(span) = a.span_of(key) else { continue };
            if strategies.contains(&strategy) {
                continue;
            }
            match strategies {
                [only] if *only != "counter" => {
                    errors.at(span, format!("`{key}` needs `strategy = \"{only}\"`"))
                }
                _ => errors.at(
                    span,
                    format!(
                        "`{key}` does not apply to strategy \"{strategy}\", only to: {}",
                        list(strategies)
                    ),
                ),
            }
        }
    }
    if let Some(shards) = &a.shards {
        if strategy == "sharded" && !(1..=100_000).contains(&shards.value) {
            errors.at(shards.span, "`shards` must be between 1 and 100000");
        }
    }
    if let Some(retries) = &a.retries {
        if strategy == "random" && retries.value > 10_000 {
            errors.at(retries.span, "`retries` must be at most 10000");
        }
    }

    let digits = a.digits.as_ref().filter(|d| (1..=18).contains(&d.value));

    if strategy == "random" && !model.id.is_doc_id {
        errors.at(
            model.id.ty_span,
            "strategy \"random\" needs the ID field to be stored as `_id`, whose unique index \
             rejects a colliding draw: add `#[serde(rename = \"_id\")]` to it",
        );
    }

    if matches!(strategy, "sharded" | "random") {
        // `start` and `max` narrow the `digits` range (checked against it elsewhere).
        let (digits_lo, digits_hi) =
            digits.map_or((i128::MIN, i128::MAX), |d| digit_range(d.value));
        let lo = a
            .start
            .as_ref()
            .map_or(if digits.is_some() { digits_lo } else { 1 }, |s| {
                i128::from(s.value)
            })
            .max(digits_lo);
        let hi = a
            .max
            .as_ref()
            .map_or(i128::from(i64::MAX), |m| i128::from(m.value))
            .min(digits_hi);
        let kind = model.id.kind;
        if let Some(type_max) = kind.integer_max() {
            // A `digits` range that does not fit the type is reported with `digits`.
            if hi > type_max && digits.is_none() {
                errors.at(
                    model.id.ty_span,
                    format!(
                        "`{}` cannot hold the IDs of strategy \"{strategy}\" up to {hi}; set \
                         `digits` or `max` to fit, or use `i64`",
                        kind.name()
                    ),
                );
            } else if lo < 0 && matches!(kind, IdKind::U32 | IdKind::U64) {
                errors.at(
                    model.id.ty_span,
                    format!(
                        "`{}` cannot hold the negative IDs from `start` = {lo}",
                        kind.name()
                    ),
                );
            }
        }
        if let Some(shards) = a.shards.as_ref().filter(|_| strategy == "sharded") {
            let size = hi - lo + 1;
            if size > 0 && i128::from(shards.value) > size {
                errors.at(
                    shards.span,
                    format!(
                        "{} shards cannot share the {size} IDs of {lo}..={hi}: every shard \
                         needs at least one",
                        shards.value
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_ranges_match_the_runtime() {
        assert_eq!(digit_range(1), (1, 9));
        assert_eq!(digit_range(2), (10, 99));
        assert_eq!(digit_range(12), (100_000_000_000, 999_999_999_999));
        assert_eq!(
            digit_range(18),
            (100_000_000_000_000_000, 999_999_999_999_999_999)
        );
    }
}
