//! Rules that involve several keys, or a key and the ID field.

use crate::ast::{parse_prefix, rank, IdKind, Model, Piece};
use crate::attr::{BatchAttr, Errors};
use crate::strategy;

/// The strategies, in the order messages list them.
pub const STRATEGIES: &[&str] = &[
    "counter",
    "sharded",
    "random",
    "uuid",
    "uuid_v7",
    "object_id",
];

/// The counter document layouts.
pub const LAYOUTS: &[&str] = &["default", "mongoose"];

pub(crate) fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks every cross-key rule, reporting all violations.
pub fn check(model: &Model, errors: &mut Errors) {
    let a = &model.attrs;

    if let Some(name) = &a.name {
        if let Some(why) = bad_counter_name(&name.value) {
            errors.at(name.span, format!("invalid `name`: {why}"));
        }
    }
    if let Some(c) = &a.counters {
        if let Some(why) = bad_collection_name(&c.value) {
            errors.at(c.span, format!("invalid `counters` collection name: {why}"));
        }
    }

    let auto = matches!(a.batch.as_ref().map(|b| &b.value), Some(BatchAttr::Auto));
    for bound in [&a.batch_min, &a.batch_max].into_iter().flatten() {
        if !auto {
            errors.at(
                bound.span,
                "`batch_min` and `batch_max` need `batch = \"auto\"`",
            );
        } else if bound.value == 0 {
            errors.at(bound.span, "adaptive batch bounds must be at least 1");
        }
    }
    if let (Some(lo), Some(hi)) = (&a.batch_min, &a.batch_max) {
        if auto && lo.value > hi.value {
            errors.at(lo.span, "`batch_min` is greater than `batch_max`");
        }
    }

    for (key, v) in [("width", &a.width), ("digits", &a.digits)] {
        if let Some(v) = v {
            if !(1..=18).contains(&v.value) {
                errors.at(
                    v.span,
                    format!("`{key}` must be between 1 and 18, got {}", v.value),
                );
            }
        }
    }
    if let (Some(start), Some(max)) = (&a.start, &a.max) {
        if start.value > max.value {
            errors.at(
                start.span,
                format!(
                    "`start` ({}) is greater than `max` ({})",
                    start.value, max.value
                ),
            );
        }
    }

    let strategy = a.strategy.as_ref().map_or("counter", |s| s.value.as_str());
    if let Some(s) = &a.strategy {
        if !STRATEGIES.contains(&s.value.as_str()) {
            errors.at(
                s.span,
                format!(
                    "unknown strategy \"{}\", expected one of: {}",
                    s.value,
                    list(STRATEGIES)
                ),
            );
        }
    }
    strategy::check(model, strategy, errors);
    if let Some(layout) = &a.layout {
        if !LAYOUTS.contains(&layout.value.as_str()) {
            errors.at(
                layout.span,
                format!(
                    "unknown layout \"{}\", expected one of: {}",
                    layout.value,
                    list(LAYOUTS)
                ),
            );
        }
    }

    let gapless = a.gapless.as_ref().filter(|g| g.value);
    if let Some(g) = gapless {
        match a.batch.as_ref() {
            Some(b) if !matches!(b.value, BatchAttr::Fixed(1)) => errors.at(
                b.span,
                "`gapless` takes each number inside the insert's transaction, so it cannot be combined with `batch` other than 1",
            ),
            _ => {}
        }
        if strategy != "counter" {
            errors.at(
                g.span,
                format!("`gapless` needs `strategy = \"counter\"`, not \"{strategy}\""),
            );
        }
    }
    if let Some(t) = &a.timeout_ms {
        if gapless.is_none() {
            errors.at(t.span, "`timeout_ms` needs `gapless`");
        } else if t.value == 0 {
            errors.at(t.span, "`timeout_ms` must be at least 1");
        }
    }

    let kind = model.id.kind;
    let wants = match strategy {
        "uuid" | "uuid_v7" => Some((kind == IdKind::Uuid, "`Uuid`")),
        "object_id" => Some((kind == IdKind::ObjectId, "`ObjectId`")),
        "counter" | "sharded" | "random" => Some((
            kind.is_integer() || kind == IdKind::String,
            "an integer type or `String`",
        )),
        _ => None,
    };
    if let Some((false, expected)) = wants {
        errors.at(
            model.id.ty_span,
            format!(
                "ID field type `{}` does not match strategy \"{strategy}\", which needs {expected}",
                kind.name()
            ),
        );
    }

    check_formats(model, strategy, errors);

    if let Some(prefix) = &a.prefix {
        match parse_prefix(&prefix.value) {
            Err(why) => errors.at(prefix.span, why),
            Ok(pieces) => {
                if kind.is_integer() && pieces.iter().any(Piece::is_literal) {
                    errors.at(
                        prefix.span,
                        format!(
                            "an integer ID field (`{}`) needs a prefix of date tokens only; use a `String` ID field for literal text",
                            kind.name()
                        ),
                    );
                } else if let Some(type_max) = kind.integer_max() {
                    let width = a.width.as_ref().map_or(6, |w| w.value);
                    let digits = pieces.iter().map(Piece::width).sum::<usize>() as u64 + width;
                    if digits > 18 || 10_i128.pow(digits as u32) - 1 > type_max {
                        errors.at(
                            model.id.ty_span,
                            format!(
                                "`{}` cannot hold IDs of {digits} digits (prefix plus `width`); use `i64` or a smaller `width`",
                                kind.name()
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// `tz`, `width`, `digits`, `scope` and `layout`: the rules that `prefix` parsing does not
/// cover.
fn check_formats(model: &Model, strategy: &str, errors: &mut Errors) {
    let a = &model.attrs;
    let kind = model.id.kind;
    let pieces = a.prefix.as_ref().and_then(|p| parse_prefix(&p.value).ok());
    let periodic = pieces
        .as_ref()
        .is_some_and(|p| p.iter().any(|piece| rank(piece) > 0));

    if let Some(tz) = &a.tz {
        if a.prefix.is_some() && pieces.is_none() {
            // The prefix is wrong already; one error is enough.
        } else if !periodic {
            errors.at(
                tz.span,
                "`tz` needs a `prefix` with date tokens (`YYYY`, `YY`, `MM`, `DD`, `HH`)",
            );
        } else if jiff::tz::TimeZoneDatabase::bundled()
            .get(&tz.value)
            .is_err()
        {
            errors.at(
                tz.span,
                format!(
                    "unknown time zone `{}`: `tz` must be an IANA time zone name such as `Europe/Berlin` or `UTC`",
                    tz.value
                ),
            );
        }
    }

    if let Some(digits) = &a.digits {
        if a.prefix.is_some() {
            errors.at(
                digits.span,
                "`digits` cannot be combined with `prefix`; `width` sets the digits after a prefix",
            );
        } else if a.width.is_some() {
            errors.at(digits.span, "`digits` cannot be combined with `width`");
        } else if (1..=18).contains(&digits.value) {
            let d = digits.value as u32;
            let (lo, hi) = (10_i128.pow(d - 1), 10_i128.pow(d) - 1);
            if kind.integer_max().is_some_and(|type_max| hi > type_max) {
                errors.at(
                    model.id.ty_span,
                    format!(
                        "`{}` cannot hold IDs of {d} digits; use `i64` or fewer `digits`",
                        kind.name()
                    ),
                );
            }
            for (key, value) in [("start", &a.start), ("max", &a.max)] {
                if let Some(v) = value {
                    if !(lo..=hi).contains(&i128::from(v.value)) {
                        errors.at(
                            v.span,
                            format!(
                                "`{key}` ({}) is outside the {d}-digit range {lo}..={hi} of `digits`",
                                v.value
                            ),
                        );
                    }
                }
            }
        }
    }

    if let Some(width) = &a.width {
        if a.prefix.is_none() && a.digits.is_none() && kind.is_integer() {
            errors.at(
                width.span,
                format!(
                    "`width` zero-pads a `String` ID or the counter after a `prefix`; an integer ID field (`{}`) has no leading zeros: use `digits` or `max`",
                    kind.name()
                ),
            );
        }
    }
    let padded = a.prefix.is_some() || (a.width.is_some() && a.digits.is_none());
    if padded {
        let width = a.width.as_ref().map_or(6, |w| w.value);
        if let Some(start) = &a.start {
            if start.value < 0 {
                errors.at(
                    start.span,
                    "`start` must not be negative with `prefix` or `width`: a zero-padded counter has no sign",
                );
            } else if (1..=18).contains(&width)
                && i128::from(start.value) > 10_i128.pow(width as u32) - 1
            {
                errors.at(
                    start.span,
                    format!(
                        "`start` ({}) has more digits than the counter's `width` ({width})",
                        start.value
                    ),
                );
            }
        }
    }

    if let Some(scope) = &a.scope {
        if !matches!(strategy, "counter" | "sharded") {
            errors.at(
                scope.span,
                format!("`scope` needs strategy \"counter\" or \"sharded\", not \"{strategy}\""),
            );
        }
        if model.id.is_doc_id {
            errors.at(
                scope.span,
                "`scope` numbers every scope from `start`, so its IDs repeat across scopes and cannot be the `_id`: put `#[seq(id)]` on another field",
            );
        }
        let id_name = match &model.id.member {
            syn::Member::Named(n) => n.to_string(),
            syn::Member::Unnamed(i) => i.index.to_string(),
        };
        let mut seen = Vec::new();
        for lit in &scope.value {
            let name = lit.value();
            if name == id_name {
                errors.at(
                    lit.span(),
                    format!("`scope` cannot name the ID field `{name}`: its value is not known before the ID is"),
                );
            } else if seen.contains(&name) {
                errors.at(lit.span(), format!("`scope` names `{name}` twice"));
            }
            seen.push(name);
        }
        if let Some(batch) = &a.batch {
            if !matches!(batch.value, BatchAttr::Fixed(1)) {
                errors.at(
                    batch.span,
                    "`batch` cannot be combined with `scope`: scoped counters are reserved per call, not cached",
                );
            }
        }
    }

    if let Some(layout) = &a.layout {
        if !matches!(strategy, "counter" | "sharded") {
            errors.at(
                layout.span,
                format!("`layout` needs strategy \"counter\" or \"sharded\", not \"{strategy}\""),
            );
        } else if layout.value == "mongoose" && periodic {
            errors.at(
                layout.span,
                "the mongoose layout has no periods: remove the date tokens from `prefix` or use the default layout",
            );
        }
    }
}

/// Why a name is unusable as any MongoDB name, if it is.
fn bad_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.contains('\0') {
        Some("it contains a NUL character")
    } else if name.contains('$') {
        Some("it contains `$`")
    } else {
        None
    }
}

/// Why a counter name is unusable, if it is.
fn bad_counter_name(name: &str) -> Option<&'static str> {
    bad_name(name).or(if name.contains('.') {
        Some("it contains `.`")
    } else if name.len() > 255 {
        Some("it is longer than 255 bytes")
    } else {
        None
    })
}

/// Why a collection name is unusable, if it is.
fn bad_collection_name(name: &str) -> Option<&'static str> {
    bad_name(name).or(name
        .starts_with("system.")
        .then_some("`system.` collections are reserved"))
}
