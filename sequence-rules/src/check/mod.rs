//! The one function that checks a configuration ([`check`]), and what a valid one means.

use jiff::tz::TimeZone;

use crate::batch::Batch;
use crate::defaults;
use crate::encoding::{crockford, CheckDigit, Encoding};
use crate::id::IdNeeds;
use crate::key::Key;
use crate::limits::{self, digits_range, pow10, MAX_DIGITS, MAX_RETRIES, MAX_SHARDS};
use crate::names::{self, NameKind};
use crate::pattern::Pattern;
use crate::spec::Spec;
use crate::strategy::{Strategy, Unique, SHARD_BOUND_FIELDS};
use crate::template::Tail;
use crate::violation::{At, Problem, Violation};

mod conventions;
mod formats;

/// What a valid configuration means: the values it issues and how they render.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Checked {
    /// The strategy.
    pub strategy: Strategy,
    /// The first value issued (per period and scope).
    pub start: i64,
    /// The largest value issued (per period and scope): `max`, narrowed by `digits` or by the
    /// counter's `width`.
    pub max: i64,
    /// The digits of the zero-padded counter part, when it is padded.
    pub width: Option<u8>,
    /// The parsed `prefix`, or the part of the `format` template before the number.
    pub pattern: Option<Pattern>,
    /// What follows the number (the rest of a `format` template).
    pub tail: Tail,
    /// The check digits after the number.
    pub check_digit: Option<CheckDigit>,
    /// How the number is written.
    pub encoding: Encoding,
    /// The Sqids alphabet given (`None`: Sqids' default).
    pub alphabet: Option<String>,
    /// The shortest Sqids ID.
    pub min_length: u8,
    /// The time zone of periods (`None`: UTC).
    pub tz: Option<TimeZone>,
    /// The reservation size.
    pub batch: Batch,
    /// What the configuration asks of the ID field's type (checked where the type is known).
    pub id_needs: IdNeeds,
}

/// Checks every rule of `spec`, and returns what it means, or every broken rule in the order
/// of the keys. Each mistake is reported once: a key that does not apply to the strategy is
/// reported as such, and its other rules are not checked.
pub fn check(spec: &Spec<'_>) -> Result<Checked, Vec<Violation>> {
    let mut c = Checker::new(spec);
    c.misplaced_keys();
    c.names();
    let batch = c.batch();
    c.prefetch();
    c.encoding();
    let mut format = c.format();
    c.check_digit(&mut format);
    let space = c.space(&format);
    let shards = c.counts();
    c.strategy_needs(&space, shards);
    c.scope();
    c.layout(&format);
    c.filter(&format);
    c.gapless();
    c.unique();
    if !c.v.0.is_empty() {
        return Err(c.v.0);
    }
    Ok(Checked {
        strategy: c.strategy,
        start: space.lo,
        max: space.hi,
        width: space.padded,
        pattern: format.pattern,
        tail: format.tail,
        check_digit: format.check,
        encoding: c.encoding,
        alphabet: spec
            .alphabet
            .filter(|_| c.encoding == Encoding::Sqids)
            .map(str::to_owned),
        min_length: spec
            .min_length
            .filter(|_| c.encoding == Encoding::Sqids)
            .and_then(|n| u8::try_from(n).ok())
            .unwrap_or(0),
        tz: format.zone,
        batch,
        id_needs: c.needs,
    })
}

/// The state of one [`check`]: the configuration, the violations found so far, and what the
/// configuration asks of the ID's type.
struct Checker<'s, 'a> {
    spec: &'s Spec<'a>,
    strategy: Strategy,
    /// How the number is written (`Decimal` where `encoding` is wrong).
    encoding: Encoding,
    v: Violations,
    needs: IdNeeds,
}

/// `prefix` or `format`, `tz`, `width`, `digits`, `start` and `max` as given (and applying).
struct FormatKeys {
    pattern: Option<Pattern>,
    /// Whether the pattern and width come from a `format` template.
    template: bool,
    /// What follows the number.
    tail: Tail,
    /// Whether the template places `{check}`.
    check_placed: bool,
    /// The check digits (where they apply to the encoding).
    check: Option<CheckDigit>,
    /// Whether the prefix has date tokens.
    periodic: bool,
    zone: Option<TimeZone>,
    width: Option<u8>,
    digits: Option<u8>,
    start: Option<i64>,
    max: Option<i64>,
}

/// The space of values: `start..=max`, narrowed by `digits` or by the counter's width.
struct Space {
    lo: i64,
    hi: i64,
    /// The digits of the zero-padded counter part, when it is padded.
    padded: Option<u8>,
    /// Whether no rule about the space was broken.
    ok: bool,
}

impl<'s, 'a> Checker<'s, 'a> {
    fn new(spec: &'s Spec<'a>) -> Self {
        let strategy = spec.strategy.unwrap_or_default();
        Checker {
            spec,
            strategy,
            encoding: Encoding::Decimal,
            v: Violations(Vec::new()),
            needs: IdNeeds::new(strategy),
        }
    }

    /// Whether `key` was given and applies: only then are its own rules checked.
    fn on(&self, key: Key) -> bool {
        self.spec.given(key) && key.applies_to(self.strategy)
    }

    /// Keys given that do not apply to the strategy.
    fn misplaced_keys(&mut self) {
        for &key in Key::ALL {
            if self.spec.given(key) {
                if let Some(why) = key.misplaced(self.strategy) {
                    self.v.at(key, why);
                }
            }
        }
    }

    /// The counter's, the collection's and the counter field's names.
    fn names(&mut self) {
        let spec = self.spec;
        self.v
            .name(At::Key(Key::Name), NameKind::Counter, spec.name);
        if let Some(counters) = spec.counters.filter(|_| self.on(Key::Counters)) {
            self.v
                .name(At::Key(Key::Counters), NameKind::Collection, counters);
        }
        if let Some(field) = spec.field.filter(|_| self.on(Key::Field)) {
            self.v.name(At::Key(Key::Field), NameKind::Field, field);
        }
    }

    /// `batch`: at least 1, and an adaptive batch's bounds in order; returns the batch.
    fn batch(&mut self) -> Batch {
        let batch = self.spec.batch.unwrap_or_default();
        if !self.on(Key::Batch) {
            return batch;
        }
        match batch {
            Batch::Fixed(0) => self.v.at(Key::Batch, "`batch` must be at least 1"),
            Batch::Adaptive(a) if a.min == 0 => self.v.at(
                Key::Batch,
                "the bounds of an adaptive `batch` must be at least 1: write `batch = 1..=1000`",
            ),
            Batch::Adaptive(a) if a.min > a.max => self.v.at(
                Key::Batch,
                format!(
                    "the bounds of an adaptive `batch` are reversed: {}..={} is empty",
                    a.min, a.max
                ),
            ),
            _ => {}
        }
        batch
    }

    /// `prefetch_at`, an option of the runtime.
    fn prefetch(&mut self) {
        if let Some(share) = self.spec.prefetch_at {
            if !(0.0..=1.0).contains(&share) {
                self.v.push(
                    At::Option("prefetch_at"),
                    format!("`prefetch_at` must be between 0.0 and 1.0, got {share}"),
                );
            }
        }
    }

    /// A count of digits (`width`, `digits`): from 1 to 18.
    fn digit_count(&mut self, key: Key, value: Option<u8>) -> Option<u8> {
        let n = value.filter(|_| self.on(key))?;
        match n {
            n if (1..=MAX_DIGITS).contains(&n) => Some(n),
            _ => {
                self.v
                    .at(key, format!("`{key}` must be between 1 and 18, got {n}"));
                None
            }
        }
    }

    /// The space of values: `start..=max`, narrowed by `digits` or by the counter's width.
    fn space(&mut self, f: &FormatKeys) -> Space {
        let before = self.v.0.len();
        let with_prefix = self.on(Key::Prefix);
        let (start, max) = (f.start, f.max);
        let (mut lo, mut hi) = (
            start.unwrap_or(defaults::START),
            max.unwrap_or(defaults::MAX),
        );
        let mut padded = None;
        if let Some(d) = f.digits {
            if with_prefix {
                self.v.at(
                    Key::Digits,
                    "`digits` cannot be combined with `prefix`; `width` sets the digits after a \
                     prefix",
                );
            } else if self.on(Key::Width) {
                self.v
                    .at(Key::Digits, "`digits` cannot be combined with `width`");
            } else {
                let (dlo, dhi) = digits_range(d).expect("digits were checked");
                self.needs.digits = Some(d);
                for (key, value) in [(Key::Start, start), (Key::Max, max)] {
                    if let Some(value) = value.filter(|x| !(dlo..=dhi).contains(x)) {
                        self.v.at(
                            key,
                            format!(
                                "`{key}` ({value}) is outside the {d}-digit range \
                                 {dlo}..={dhi} of `digits`"
                            ),
                        );
                    }
                }
                (lo, hi) = (start.unwrap_or(dlo), max.unwrap_or(dhi));
            }
        } else {
            self.needs.width_without_prefix = self.on(Key::Width) && !with_prefix;
            let sqids = self.encoding == Encoding::Sqids;
            padded = f
                .width
                .or((with_prefix && !sqids).then_some(defaults::WIDTH));
            if let Some(w) = padded.filter(|_| with_prefix || f.template || self.on(Key::Width)) {
                let widest = match self.encoding {
                    Encoding::Crockford32 => crockford::max_for_width(usize::from(w)) as i64,
                    _ => pow10(w) - 1,
                };
                match start {
                    Some(s) if s < 0 => self.v.at(
                        Key::Start,
                        "`start` must not be negative with `prefix` or `width`: a zero-padded \
                         counter has no sign",
                    ),
                    Some(s) if s > widest => self.v.at(
                        Key::Start,
                        format!("`start` ({s}) has more digits than the counter's `width` ({w})"),
                    ),
                    _ => {}
                }
                hi = hi.min(widest);
            }
        }
        if let Some(p) = &f.pattern {
            self.needs.literal_prefix = p.has_literal() && !f.template;
            if let (false, Some(w)) = (p.has_literal(), padded) {
                let check = usize::from(self.needs.check_digits);
                self.needs.prefixed_digits =
                    Some((p.rendered_len() + usize::from(w) + check) as u32);
            }
        }
        if self.v.0.len() == before {
            if let Some(why) = limits::space_problem(lo, hi) {
                let at = if start.is_some() {
                    Key::Start
                } else {
                    Key::Max
                };
                self.v.at(at, why);
            }
        }
        Space {
            lo,
            hi,
            padded,
            ok: self.v.0.len() == before,
        }
    }

    /// `shards` and `retries`; returns the number of shards, if valid.
    fn counts(&mut self) -> Option<u64> {
        let spec = self.spec;
        let mut shards = Some(u64::from(defaults::SHARDS));
        if let Some(n) = spec.shards.filter(|_| self.on(Key::Shards)) {
            if !(1..=MAX_SHARDS).contains(&n) {
                self.v.at(
                    Key::Shards,
                    format!("`shards` must be between 1 and {MAX_SHARDS}, got {n}"),
                );
                shards = None;
            } else {
                shards = Some(u64::from(n));
            }
        }
        if let Some(n) = spec.retries.filter(|_| self.on(Key::Retries)) {
            if n > MAX_RETRIES {
                self.v.at(
                    Key::Retries,
                    format!("`retries` must be at most {MAX_RETRIES}, got {n}"),
                );
            }
        }
        shards
    }

    /// What the `random` and `ranges` strategies need of the ID field and the space.
    fn strategy_needs(&mut self, space: &Space, shards: Option<u64>) {
        let strategy = self.strategy;
        let proxy = self.spec.unique == Some(Unique::Proxy);
        if strategy == Strategy::Random && !proxy && self.spec.id.is_some_and(|i| !i.is_document_id)
        {
            self.v.push(
                At::IdType,
                "strategy \"random\" needs the ID field to be stored as `_id`, whose unique \
                 index rejects a colliding draw: add `#[serde(rename = \"_id\")]` to it, or \
                 hold uniqueness in a proxy collection with `unique = \"proxy\"`",
            );
        }
        let (lo, hi) = (space.lo, space.hi);
        if matches!(strategy, Strategy::Ranges | Strategy::Random) && space.ok {
            self.needs.space = Some((lo, hi));
            if let Some(n) = shards.filter(|_| strategy == Strategy::Ranges) {
                let size = u128::from(hi.abs_diff(lo)) + 1;
                if u128::from(n) > size {
                    let at = [Key::Shards, Key::Max, Key::Start, Key::Digits]
                        .into_iter()
                        .find(|&k| self.on(k))
                        .unwrap_or(Key::Shards);
                    self.v.at(
                        at,
                        format!(
                            "{n} shards cannot share the {size} IDs of {lo}..={hi}: every shard \
                             needs at least one"
                        ),
                    );
                }
            }
        }
        if strategy == Strategy::Ranges {
            if let Some(field) = self.spec.field.filter(|f| SHARD_BOUND_FIELDS.contains(f)) {
                self.v.at(
                    Key::Field,
                    format!(
                        "the counter field `{field}` of a ranges sequence would clash with the \
                         bounds fields `lo` and `hi` of its counter documents; choose another \
                         field"
                    ),
                );
            }
        }
    }

    /// Whether values are cached in the process (`batch` above 1, or adaptive).
    fn cached(&self) -> bool {
        self.spec.batch.is_some_and(Batch::is_cached)
    }

    /// `scope`: its fields, and what it cannot be combined with.
    fn scope(&mut self) {
        if !self.on(Key::Scope) {
            return;
        }
        let spec = self.spec;
        let id = spec.id;
        if id.is_some_and(|i| i.is_document_id) {
            self.v.at(
                Key::Scope,
                "`scope` numbers every scope from `start`, so its IDs repeat across scopes and \
                 cannot be the `_id`: put `#[seq(id)]` on another field",
            );
        }
        for (i, &field) in spec.scope.iter().enumerate() {
            if id.is_some_and(|id| id.name == field) {
                self.v.push(
                    At::ScopeField(i),
                    format!(
                        "`scope` cannot name the ID field `{field}`: its value is not known \
                         before the ID is"
                    ),
                );
            } else if spec.scope[..i].contains(&field) {
                self.v
                    .push(At::ScopeField(i), format!("`scope` names `{field}` twice"));
            } else {
                self.v.name(At::ScopeField(i), NameKind::Field, field);
            }
        }
        if matches!(self.spec.batch, Some(Batch::Adaptive(_))) && self.on(Key::Batch) {
            self.v.at(
                Key::Batch,
                "`batch` with `scope` takes a fixed size (`batch = 25`): each scope value in use \
                 gets a cache of its own, of that size",
            );
        }
    }

    /// `unique` and `proxy`: the proxy collection's name, and only with `unique = "proxy"`.
    fn unique(&mut self) {
        let Some(proxy) = self.spec.proxy.filter(|_| self.on(Key::Proxy)) else {
            return;
        };
        if self.spec.unique != Some(Unique::Proxy) {
            self.v.at(Key::Proxy, "`proxy` needs `unique = \"proxy\"`");
        } else {
            self.v
                .name(At::Key(Key::Proxy), NameKind::Collection, proxy);
        }
    }

    /// `gapless` and `transaction_timeout`.
    fn gapless(&mut self) {
        let gapless = self.on(Key::Gapless) && self.spec.gapless == Some(true);
        if gapless && self.cached() && self.on(Key::Batch) {
            self.v.at(
                Key::Batch,
                "`gapless` takes each number inside the insert's transaction, so it cannot be \
                 combined with `batch` other than 1",
            );
        }
        let timeout = Key::TransactionTimeout;
        if let Some(t) = self.spec.transaction_timeout.filter(|_| self.on(timeout)) {
            if !gapless {
                self.v.at(timeout, "`transaction_timeout` needs `gapless`");
            } else if t.is_zero() {
                self.v.at(
                    timeout,
                    "`transaction_timeout` must be longer than zero, such as \"30s\"",
                );
            }
        }
    }
}

/// The violations found so far.
struct Violations(Vec<Violation>);

impl Violations {
    fn push(&mut self, at: At, message: impl Into<String>) {
        self.0.push(Violation::invalid(at, message));
    }

    fn at(&mut self, key: Key, message: impl Into<String>) {
        self.push(At::Key(key), message);
    }

    fn name(&mut self, at: At, kind: NameKind, name: &str) {
        if let Err(e) = names::check(kind, name) {
            self.0.push(Violation {
                at,
                problem: Problem::Name(e),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::id::IdField;
    use crate::id::IdKind;
    use crate::layout::Layout;

    fn errors(spec: Spec<'_>) -> Vec<String> {
        match check(&spec) {
            Ok(_) => Vec::new(),
            Err(v) => v.iter().map(ToString::to_string).collect(),
        }
    }

    fn id() -> Option<IdField<'static>> {
        Some(IdField {
            name: "id",
            is_document_id: true,
        })
    }

    #[test]
    fn formats_check_digits_and_encodings() {
        use crate::encoding::{CheckDigit, Encoding};
        let c = check(&Spec {
            format: Some("ACC-{n:08}-{check}"),
            check_digit: Some(CheckDigit::Luhn),
            ..Spec::new("acc")
        })
        .unwrap();
        assert_eq!(
            (c.width, c.max, c.check_digit),
            (Some(8), 99_999_999, Some(CheckDigit::Luhn))
        );
        assert_eq!(c.tail.before_check, "-");
        assert_eq!(c.id_needs.text, Some(Key::Format));
        let c = check(&Spec {
            format: Some("{YY}{MM}{n}"),
            check_digit: Some(CheckDigit::Mod97),
            ..Spec::new("dated")
        })
        .unwrap();
        assert_eq!(c.width, Some(defaults::WIDTH), "a period pads the number");
        assert_eq!(
            (c.id_needs.text, c.id_needs.prefixed_digits),
            (None, Some(12))
        );
        let c = check(&Spec {
            encoding: Some(Encoding::Crockford32),
            width: Some(4),
            check_digit: Some(CheckDigit::Crockford),
            ..Spec::new("code")
        })
        .unwrap();
        assert_eq!(
            (c.max, c.id_needs.text),
            (32_i64.pow(4) - 1, Some(Key::Encoding))
        );
        let c = check(&Spec {
            encoding: Some(Encoding::Sqids),
            prefix: Some("YY-"),
            alphabet: Some("abcdefghijk"),
            min_length: Some(8),
            ..Spec::new("public")
        })
        .unwrap();
        assert_eq!((c.width, c.min_length), (None, 8));
        assert_eq!(c.alphabet.as_deref(), Some("abcdefghijk"));
        for (spec, expected) in [
            (
                Spec {
                    format: Some("ACC-"),
                    ..Spec::new("x")
                },
                "`format` has no `{n}`",
            ),
            (
                Spec {
                    format: Some("{n}{check}"),
                    ..Spec::new("x")
                },
                "places `{check}` but no `check_digit` is set",
            ),
            (
                Spec {
                    format: Some("{n}"),
                    prefix: Some("YY"),
                    ..Spec::new("x")
                },
                "`format` cannot be combined with `prefix`",
            ),
            (
                Spec {
                    format: Some("{n}"),
                    width: Some(3),
                    ..Spec::new("x")
                },
                "`width` cannot be combined with `format`",
            ),
            (
                Spec {
                    format: Some("{n:19}"),
                    ..Spec::new("x")
                },
                "must be between 1 and 18, got 19",
            ),
            (
                Spec {
                    check_digit: Some(CheckDigit::Luhn),
                    strategy: Some(Strategy::Uuid),
                    ..Spec::new("x")
                },
                "`check_digit` does not apply to strategy \"uuid\"",
            ),
            (
                Spec {
                    check_digit: Some(CheckDigit::Crockford),
                    ..Spec::new("x")
                },
                "needs `encoding = \"crockford32\"`",
            ),
            (
                Spec {
                    check_digit: Some(CheckDigit::Damm),
                    encoding: Some(Encoding::Crockford32),
                    ..Spec::new("x")
                },
                "takes `check_digit = \"crockford\"`",
            ),
            (
                Spec {
                    check_digit: Some(CheckDigit::Damm),
                    encoding: Some(Encoding::Sqids),
                    ..Spec::new("x")
                },
                "Sqids IDs have no check digit",
            ),
            (
                Spec {
                    alphabet: Some("abc"),
                    ..Spec::new("x")
                },
                "`alphabet` needs `encoding = \"sqids\"`",
            ),
            (
                Spec {
                    encoding: Some(Encoding::Sqids),
                    alphabet: Some("abca"),
                    ..Spec::new("x")
                },
                "has `a` twice",
            ),
            (
                Spec {
                    encoding: Some(Encoding::Sqids),
                    min_length: Some(256),
                    ..Spec::new("x")
                },
                "at most 255",
            ),
            (
                Spec {
                    encoding: Some(Encoding::Sqids),
                    width: Some(6),
                    ..Spec::new("x")
                },
                "a width does not apply",
            ),
            (
                Spec {
                    encoding: Some(Encoding::Crockford32),
                    width: Some(13),
                    ..Spec::new("x")
                },
                "at most 12",
            ),
            (
                Spec {
                    encoding: Some(Encoding::Crockford32),
                    digits: Some(6),
                    ..Spec::new("x")
                },
                "`digits` counts decimal digits",
            ),
            (
                Spec {
                    encoding: Some(Encoding::Sqids),
                    start: Some(-1),
                    ..Spec::new("x")
                },
                "must not be negative",
            ),
        ] {
            let errors = errors(spec);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].contains(expected),
                "{} lacks {expected}",
                errors[0]
            );
        }
    }

    #[test]
    fn check_digits_count_in_the_digits_of_integer_ids() {
        use crate::encoding::CheckDigit;
        let needs = check(&Spec {
            digits: Some(9),
            check_digit: Some(CheckDigit::Luhn),
            ..Spec::new("x")
        })
        .unwrap()
        .id_needs;
        let p = needs.problems(IdKind::I32);
        assert_eq!(
            p.id_type.unwrap().as_str(),
            "`i32` cannot hold IDs of 10 digits (check digits included); use `i64` or fewer \
             `digits`"
        );
        assert_eq!(needs.problems(IdKind::I64).id_type, None);
        let needs = check(&Spec {
            digits: Some(18),
            check_digit: Some(CheckDigit::Mod97),
            ..Spec::new("x")
        })
        .unwrap()
        .id_needs;
        assert!(needs.problems(IdKind::I64).id_type.is_some());
        assert_eq!(needs.problems(IdKind::String).id_type, None);
    }

    #[test]
    fn spaces_of_digits_and_widths() {
        let c = check(&Spec {
            digits: Some(12),
            ..Spec::new("a")
        })
        .unwrap();
        assert_eq!((c.start, c.max), (100_000_000_000, 999_999_999_999));
        let c = check(&Spec {
            digits: Some(3),
            start: Some(500),
            max: Some(600),
            ..Spec::new("a")
        })
        .unwrap();
        assert_eq!((c.start, c.max), (500, 600));
        let c = check(&Spec {
            prefix: Some("YYMMDD"),
            ..Spec::new("a")
        })
        .unwrap();
        assert_eq!((c.start, c.max, c.width), (1, 999_999, Some(6)));
        let c = check(&Spec {
            prefix: Some("YY"),
            width: Some(2),
            max: Some(50),
            ..Spec::new("a")
        })
        .unwrap();
        assert_eq!((c.start, c.max), (1, 50));
        let c = check(&Spec {
            width: Some(4),
            ..Spec::new("a")
        })
        .unwrap();
        assert_eq!((c.max, c.width), (9_999, Some(4)));
    }

    #[test]
    fn one_error_per_mistake() {
        // A key that does not apply to the strategy: that error alone.
        for (spec, key) in [
            (
                Spec {
                    strategy: Some(Strategy::Random),
                    scope: vec!["tenant", "tenant"],
                    ..Spec::new("a")
                },
                "scope",
            ),
            (
                Spec {
                    strategy: Some(Strategy::Ranges),
                    scope: vec!["tenant"],
                    ..Spec::new("a")
                },
                "scope",
            ),
            (
                Spec {
                    strategy: Some(Strategy::Uuid),
                    layout: Some(Layout::MongooseSequence),
                    ..Spec::new("a")
                },
                "layout",
            ),
            (
                Spec {
                    strategy: Some(Strategy::ObjectId),
                    gapless: Some(true),
                    ..Spec::new("a")
                },
                "gapless",
            ),
        ] {
            let e = errors(spec);
            assert_eq!(e.len(), 1, "{e:?}");
            assert!(
                e[0].starts_with(&format!("`{key}` does not apply")),
                "{e:?}"
            );
        }
        // `max` outside the digits: not also "start greater than max".
        let e = errors(Spec {
            digits: Some(3),
            max: Some(99),
            ..Spec::new("a")
        });
        assert_eq!(
            e,
            ["`max` (99) is outside the 3-digit range 100..=999 of `digits`"]
        );
        assert_eq!(
            errors(Spec {
                max: Some(0),
                ..Spec::new("a")
            }),
            ["`start` (1) is greater than `max` (0)"]
        );
    }

    #[test]
    fn sharded_takes_the_mongoose_layout_and_limits_its_shards() {
        assert!(errors(Spec {
            strategy: Some(Strategy::Ranges),
            layout: Some(Layout::MongooseSequence),
            ..Spec::new("a")
        })
        .is_empty());
        assert_eq!(
            errors(Spec {
                strategy: Some(Strategy::Ranges),
                max: Some(10),
                ..Spec::new("a")
            }),
            ["16 shards cannot share the 10 IDs of 1..=10: every shard needs at least one"]
        );
        assert_eq!(
            errors(Spec {
                strategy: Some(Strategy::Ranges),
                shards: Some(0),
                ..Spec::new("a")
            }),
            ["`shards` must be between 1 and 100000, got 0"]
        );
        assert_eq!(
            errors(Spec {
                strategy: Some(Strategy::Ranges),
                field: Some("hi"),
                ..Spec::new("a")
            })
            .len(),
            1
        );
    }

    #[test]
    fn retries_names_and_types() {
        assert_eq!(
            errors(Spec {
                strategy: Some(Strategy::Random),
                retries: Some(10_001),
                ..Spec::new("a")
            }),
            ["`retries` must be at most 10000, got 10001"]
        );
        assert!(
            errors(Spec::new("ticket.id")).is_empty(),
            "MongoEngine's names"
        );
        assert_eq!(
            errors(Spec::new("$user")),
            ["invalid counter name `$user`: it contains `$`"]
        );
        let needs = |spec| check(&spec).unwrap().id_needs;
        let uuid = needs(Spec {
            strategy: Some(Strategy::Uuid),
            id: id(),
            ..Spec::new("a")
        });
        assert_eq!(
            uuid.problems(IdKind::I64).id_type.unwrap().as_str(),
            "ID field type `i64` does not match strategy \"uuid\", which needs `Uuid`"
        );
        let dated = needs(Spec {
            prefix: Some("YYMMDD"),
            id: id(),
            ..Spec::new("a")
        });
        assert_eq!(dated.prefixed_digits, Some(12));
        assert_eq!(
            dated.problems(IdKind::I32).id_type.unwrap().as_str(),
            "`i32` cannot hold IDs of 12 digits (prefix plus `width`); use `i64` or a smaller `width`"
        );
    }

    #[test]
    fn batches() {
        let c = check(&Spec {
            batch: Some(Batch::from(10..=500)),
            ..Spec::new("a")
        })
        .unwrap();
        assert_eq!(c.batch, Batch::from(10..=500));
        assert_eq!(
            errors(Spec {
                batch: Some(Batch::Adaptive(crate::AdaptiveBatch::new(20, 5))),
                ..Spec::new("a")
            }),
            ["the bounds of an adaptive `batch` are reversed: 20..=5 is empty"]
        );
        assert_eq!(
            errors(Spec {
                batch: Some(Batch::from(0..=5)),
                ..Spec::new("a")
            })
            .len(),
            1
        );
        assert_eq!(
            errors(Spec {
                gapless: Some(true),
                batch: Some(Batch::Fixed(5)),
                ..Spec::new("a")
            })
            .len(),
            1
        );
    }

    #[test]
    fn proxies() {
        let on_other_field = Some(IdField {
            name: "number",
            is_document_id: false,
        });
        let random = |unique| Spec {
            strategy: Some(Strategy::Random),
            unique,
            id: on_other_field,
            ..Spec::new("a")
        };
        assert_eq!(
            errors(random(None)).len(),
            1,
            "random needs `_id` without a proxy"
        );
        assert!(errors(random(Some(Unique::Proxy))).is_empty());
        assert_eq!(
            errors(Spec {
                proxy: Some("claims"),
                ..Spec::new("a")
            }),
            ["`proxy` needs `unique = \"proxy\"`"]
        );
        assert_eq!(
            errors(Spec {
                unique: Some(Unique::Proxy),
                proxy: Some("$claims"),
                ..Spec::new("a")
            })
            .len(),
            1
        );
        for strategy in Strategy::ALL {
            assert!(
                errors(Spec {
                    strategy: Some(strategy),
                    unique: Some(Unique::Proxy),
                    proxy: Some("claims"),
                    ..Spec::new("a")
                })
                .is_empty(),
                "{strategy}"
            );
        }
    }

    #[test]
    fn transaction_timeouts() {
        assert_eq!(
            errors(Spec {
                transaction_timeout: Some(Duration::from_secs(5)),
                ..Spec::new("a")
            }),
            ["`transaction_timeout` needs `gapless`"]
        );
        assert!(errors(Spec {
            gapless: Some(true),
            transaction_timeout: Some(Duration::from_secs(5)),
            ..Spec::new("a")
        })
        .is_empty());
    }

    #[test]
    fn each_layout_refuses_what_it_has_no_place_for() {
        let typegoose = || Spec {
            layout: Some(Layout::Typegoose),
            ..Spec::new("Ticket")
        };
        assert!(errors(typegoose()).is_empty());
        assert_eq!(
            errors(Spec {
                prefix: Some("YYMMDD"),
                ..typegoose()
            }),
            [
                "the typegoose layout has no periods: remove the date tokens from `prefix` or use \
              the default layout"
            ]
        );
        assert_eq!(
            errors(Spec {
                scope: vec!["tenant"],
                ..typegoose()
            }),
            [
                "the typegoose layout keeps one counter per model and field: it has no place for \
              `scope`"
            ]
        );
        assert_eq!(
            errors(Spec {
                strategy: Some(Strategy::Ranges),
                ..typegoose()
            }),
            [
                "the typegoose layout keeps one counter per model and field: it has no place for \
              the shards of `strategy = \"ranges\"`"
            ]
        );
        let autoinc = |scope| Spec {
            layout: Some(Layout::MongooseAutoIncrement),
            scope,
            ..Spec::new("Ticket")
        };
        assert!(errors(autoinc(vec!["group"])).is_empty());
        assert_eq!(
            errors(autoinc(vec!["a", "b"])),
            [
                "the mongoose_auto_increment layout keeps one scope value per counter, in \
              `groupingField`: scope by one field"
            ]
        );
    }

    #[test]
    fn a_filter_tells_every_period_and_scope_apart() {
        use crate::filter::{self, FilterField};
        let fields = |text: &str| filter::parse(text).unwrap();
        fn spec(f: &[FilterField]) -> Spec<'_> {
            Spec {
                filter: f.iter().map(FilterField::as_str).collect(),
                ..Spec::new("daily")
            }
        }
        let seed = fields("prefix = period as number");
        assert!(errors(Spec {
            prefix: Some("YYMMDD"),
            field: Some("count"),
            ..spec(&seed)
        })
        .is_empty());
        let reworked = fields(r#"m = "Ticket", f = id_field"#);
        assert!(errors(Spec {
            field: Some("c"),
            ..spec(&reworked)
        })
        .is_empty());
        assert_eq!(
            errors(spec(&seed)),
            ["`period` needs a `prefix` with date tokens (`YYYY`, `YY`, `MM`, `DD`, `HH`)"]
        );
        assert_eq!(
            errors(Spec {
                prefix: Some("INV-YYMMDD"),
                ..spec(&seed)
            }),
            [
                "`period as number` needs a `prefix` of date tokens alone, such as `YYMMDD`: \
              `INV-YYMMDD` does not read as a number; write `period` to store the period as \
              text"
            ]
        );
        assert_eq!(
            errors(Spec {
                prefix: Some("YYMMDD"),
                ..spec(&reworked)
            }),
            [
                "a `prefix` with date tokens has a counter per period: add the period to the \
              filter (`<field> = period`, or `period as number`)"
            ]
        );
        assert_eq!(
            errors(Spec {
                scope: vec!["tenant"],
                ..spec(&reworked)
            }),
            [
                "the scope field `tenant` is in no field of `filter`, so every `tenant` would \
              share one counter: add `tenant = scope(tenant)` to the filter"
            ]
        );
        assert_eq!(
            errors(spec(&fields("t = scope(tenant)"))),
            ["`scope(tenant)` names no field of `scope` (the model has no `scope`)"]
        );
        assert_eq!(
            errors(spec(&fields("a = 1, a = 2"))),
            ["`filter` names the field `a` twice"]
        );
        assert_eq!(
            errors(spec(&fields("seq = name"))),
            ["the filter field `seq` is the counter field (`field = \"seq\"`): the filter finds \
              the counter document, the counter field counts"]
        );
        assert_eq!(
            errors(spec(&fields(r#""$m" = name"#))),
            ["invalid field name `$m`: it starts with `$`"]
        );
        assert_eq!(
            errors(Spec {
                layout: Some(Layout::Typegoose),
                ..spec(&reworked)
            }),
            [
                "`filter` says how counter documents are found, and so does `layout = \
              \"typegoose\"`: keep one of them"
            ]
        );
        let violations = check(&spec(&fields("a = 1, b = period"))).unwrap_err();
        assert_eq!(violations[0].at, At::FilterField(1));
        assert_eq!(violations[0].key(), Some(Key::Filter));
    }
}
