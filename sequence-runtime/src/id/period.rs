//! Periods: which counter a sequence with a date prefix uses now, and how its values render.
//!
//! Each period (the day, month, year or hour of the prefix's finest date token, in the
//! sequence's time zone) has a counter of its own, keyed by a canonical period string at that
//! resolution (`"2025"`, `"202511"`, `"20251122"`, `"2025112214"`) whatever the display pattern.

use std::sync::Arc;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use sequence_rules::pattern::{Pattern, Piece, Resolution};

use super::bounds::Bounds;
use super::counter_key::CounterKey;
use super::render::{parse_number, Rendering};
use super::scope::Scope;
use super::spelling::Spelling;
use crate::error::{Error, IdProblem, Result};

/// One period: the civil date-time truncated to the pattern's resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PeriodId {
    year: i16,
    month: i8,
    day: i8,
    hour: i8,
}

/// The first civil date-time of the period whose canonical string is `canonical`
/// (`"2025"`, `"202511"`, `"20251122"`, `"2025112214"`).
pub(crate) fn canonical_start(canonical: &str) -> Option<DateTime> {
    if !canonical.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let part = |range: std::ops::Range<usize>, default: i8| match canonical.get(range) {
        Some(digits) if !digits.is_empty() => digits.parse::<i8>().ok(),
        _ => Some(default),
    };
    let year: i16 = canonical.get(0..4)?.parse().ok()?;
    let (month, day, hour) = (part(4..6, 1)?, part(6..8, 1)?, part(8..10, 0)?);
    jiff::civil::DateTime::new(year, month, day, hour, 0, 0, 0).ok()
}

impl PeriodId {
    fn of(at: DateTime, resolution: Resolution) -> Self {
        let fine = |r: Resolution, v: i8, default: i8| if resolution >= r { v } else { default };
        PeriodId {
            year: at.year(),
            month: fine(Resolution::Month, at.month(), 1),
            day: fine(Resolution::Day, at.day(), 1),
            hour: fine(Resolution::Hour, at.hour(), 0),
        }
    }

    /// The first civil date-time of the period.
    fn start(self) -> DateTime {
        jiff::civil::date(self.year, self.month, self.day).at(self.hour, 0, 0, 0)
    }

    /// The canonical, sortable string of the period at `resolution`.
    fn canonical(self, resolution: Resolution) -> String {
        let PeriodId {
            year,
            month,
            day,
            hour,
        } = self;
        match resolution {
            Resolution::Year => format!("{year:04}"),
            Resolution::Month => format!("{year:04}{month:02}"),
            Resolution::Day => format!("{year:04}{month:02}{day:02}"),
            Resolution::Hour => format!("{year:04}{month:02}{day:02}{hour:02}"),
        }
    }
}

/// The counter that values are taken from, and how they render.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The period, for sequences with date tokens.
    period: Option<PeriodId>,
    /// The sequence and format this slot was made for (see [`Format::spec`]).
    spec: Arc<str>,
    /// The counter.
    pub(crate) key: CounterKey,
    /// How its values render.
    pub(crate) rendering: Rendering,
}

impl Slot {
    /// Whether the slot is the counter of a period (of a sequence with date tokens).
    pub(crate) fn has_period(&self) -> bool {
        self.period.is_some()
    }
}

/// The parsed `prefix`, `tz` and `width` of a sequence: which counter is in use at a given
/// instant and how its values render.
#[derive(Debug)]
pub(crate) struct Format {
    name: String,
    pattern: Option<Pattern>,
    tz: TimeZone,
    width: Option<u8>,
    /// Identifies name and format, so that a slot made by another handle of the same counter
    /// is only reused when it renders the same way.
    spec: Arc<str>,
    /// The one slot of a sequence without date tokens.
    constant: Option<Arc<Slot>>,
    /// The encoding, check digits and template text of the IDs, if any.
    spelling: Option<Arc<Spelling>>,
}

/// Whether two formats' specs are the same, by address first.
fn same_spec(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// What an ID is made of: the counter value, and the period it was issued in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParsedId {
    /// The counter value.
    pub value: i64,
    /// The canonical string of the period (`"20251122"`), for a sequence with periods.
    pub period: Option<String>,
}

impl Format {
    /// The format of the sequence `name`: its `prefix` pattern, the time zone of its periods
    /// (`None`: UTC) and the width of its counter part, as the configuration rules resolved
    /// them.
    pub(crate) fn new(
        name: &str,
        pattern: Option<Pattern>,
        tz: Option<TimeZone>,
        width: Option<u8>,
    ) -> Self {
        let tz = tz.unwrap_or(TimeZone::UTC);
        let spec: Arc<str> = format!("{name:?} {pattern:?} {:?} {width:?}", tz.iana_name()).into();
        let mut format = Format {
            name: name.to_owned(),
            pattern,
            tz,
            width,
            spec,
            constant: None,
            spelling: None,
        };
        format.make_constant();
        format
    }

    /// This format with the encoding, check digits and template text of `spelling`.
    pub(crate) fn spelled(mut self, spelling: Option<Spelling>) -> Self {
        if let Some(spelling) = spelling {
            self.spec = format!("{} {spelling:?}", self.spec).into();
            self.spelling = Some(Arc::new(spelling));
            self.make_constant();
        }
        self
    }

    /// Makes the one slot of a sequence without periods.
    fn make_constant(&mut self) {
        let format = self;
        if format.resolution().is_none() {
            let prefix = format
                .pattern
                .as_ref()
                .map(|p| p.render(DateTime::default()))
                .unwrap_or_default();
            format.constant = Some(Arc::new(Slot {
                period: None,
                spec: format.spec.clone(),
                key: CounterKey::named(format.name.clone()),
                rendering: Rendering::new(prefix, format.width).spelled(format.spelling.clone()),
            }));
        }
    }

    fn resolution(&self) -> Option<Resolution> {
        self.pattern.as_ref().and_then(Pattern::resolution)
    }

    /// The sequence's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The parsed `prefix`, if any.
    pub(crate) fn pattern(&self) -> Option<&Pattern> {
        self.pattern.as_ref()
    }

    /// The width of the counter part, if it is padded.
    pub(crate) fn width(&self) -> Option<u8> {
        self.width
    }

    /// The year of the instant `now` in the sequence's time zone.
    pub(crate) fn year_of(&self, now: Timestamp) -> i16 {
        self.tz.to_datetime(now).year()
    }

    /// The slot of a sequence without periods, which never changes.
    pub(crate) fn constant(&self) -> Option<&Arc<Slot>> {
        self.constant.as_ref()
    }

    /// The period that the civil date-time `at` falls in, for sequences with periods.
    pub(crate) fn period_of(&self, at: DateTime) -> Option<PeriodId> {
        Some(PeriodId::of(at, self.resolution()?))
    }

    /// The period of the instant `now`, for sequences with periods.
    pub(crate) fn period_at(&self, now: Timestamp) -> Option<PeriodId> {
        self.period_of(self.tz.to_datetime(now))
    }

    /// The canonical string of `period`.
    pub(crate) fn canonical(&self, period: PeriodId) -> String {
        period.canonical(self.resolution().unwrap_or(Resolution::Hour))
    }

    /// Whether `slot` is the counter this format uses at the instant `now` gives (read for a
    /// format with periods only): made by a format that renders the same way, for the period
    /// of that instant.
    pub(crate) fn serves(&self, slot: &Slot, now: impl FnOnce() -> Timestamp) -> bool {
        let period = match &self.constant {
            // The slot this format made: nothing to compare.
            Some(constant) if std::ptr::eq(&**constant, slot) => return true,
            Some(_) => None,
            None => self.period_at(now()),
        };
        self.is_slot_of(slot, period)
    }

    /// Whether `slot` is this format's counter of `period`.
    fn is_slot_of(&self, slot: &Slot, period: Option<PeriodId>) -> bool {
        slot.period == period && same_spec(&slot.spec, &self.spec)
    }

    /// Whether `other` names the same counter and renders its values the same way.
    pub(crate) fn same_as(&self, other: &Format) -> bool {
        same_spec(&self.spec, &other.spec)
    }

    /// The slot in use at the instant `now()` (only read for sequences with periods); `prev`
    /// is returned again when it is still the right one, so that nothing is allocated until
    /// the period changes.
    pub(crate) fn slot(
        &self,
        now: impl FnOnce() -> Timestamp,
        prev: Option<&Arc<Slot>>,
    ) -> Arc<Slot> {
        if let Some(constant) = &self.constant {
            return match prev {
                Some(p) if self.is_slot_of(p, None) => p.clone(),
                _ => constant.clone(),
            };
        }
        let period = self.period_at(now());
        if let Some(p) = prev.filter(|p| self.is_slot_of(p, period)) {
            return p.clone();
        }
        let period = period.expect("a format without a constant slot has periods");
        let pattern = self.pattern.as_ref().expect("periods come from a pattern");
        let slot = Slot {
            period: Some(period),
            spec: self.spec.clone(),
            key: CounterKey::of(self.name.clone(), Some(&self.canonical(period)), None),
            rendering: Rendering::new(pattern.render(period.start()), self.width)
                .spelled(self.spelling.clone()),
        };
        Arc::new(slot)
    }

    /// The counter value and period of `id`, an ID this format renders, read back: the
    /// prefix (a period's, read in the century closest to `around_year` for `YY`), the
    /// number in its encoding, the text after it and the check digits.
    pub(crate) fn parse(&self, id: &str, around_year: i16) -> Result<ParsedId, IdProblem> {
        let (period, rest) = self.parse_prefix(id, around_year)?;
        let value = parse_number(id, rest, self.width, self.spelling.as_deref())?;
        Ok(ParsedId { value, period })
    }

    /// The ID of counter value `value` as text, in the period whose canonical string is
    /// `period` (`None` for a sequence without periods).
    pub(crate) fn text_at(&self, value: i64, period: Option<&str>) -> Result<String> {
        if let Some(slot) = &self.constant {
            return slot.rendering.text(value);
        }
        let pattern = self.pattern.as_ref().expect("periods come from a pattern");
        let start = period
            .and_then(canonical_start)
            .and_then(|at| self.period_of(at))
            .filter(|p| Some(self.canonical(*p).as_str()) == period)
            .ok_or_else(|| Error::InvalidArgument {
                argument: "period",
                reason: format!(
                    "`{}` is not a period of sequence `{}`: give the canonical period, such as \
                     `{}`",
                    period.unwrap_or_default(),
                    self.name,
                    match self.resolution() {
                        Some(Resolution::Year) => "2025",
                        Some(Resolution::Month) => "202511",
                        Some(Resolution::Hour) => "2025112214",
                        _ => "20251122",
                    }
                ),
            })?
            .start();
        Rendering::new(pattern.render(start), self.width)
            .spelled(self.spelling.clone())
            .text(value)
    }

    /// The encoding, check digits and template text of the IDs, if any.
    pub(crate) fn spelling(&self) -> Option<&Spelling> {
        self.spelling.as_deref()
    }

    /// [`parse`](Self::parse) at the instant `now` (whose year reads two-digit years), the
    /// digits of an integer ID padded as [`pad_number`](Self::pad_number) does, failing with
    /// [`Error::InvalidId`].
    pub(crate) fn parse_id(&self, id: &str, now: Timestamp) -> Result<ParsedId> {
        let padded = self.pad_number(id);
        self.parse(padded.as_deref().unwrap_or(id), self.year_of(now))
            .map_err(|problem| Error::InvalidId {
                sequence: self.name.clone(),
                id: id.to_owned(),
                problem,
            })
    }

    /// [`parse_id`](Self::parse_id) of an ID of a sequence whose values are `bounds`: a
    /// number its IDs cannot show (above `max`, or negative below a non-negative `start`) is
    /// [`IdProblem::OutOfRange`], as `id_text` refuses to write it.
    pub(crate) fn parse_id_within(
        &self,
        id: &str,
        now: Timestamp,
        bounds: Bounds,
    ) -> Result<ParsedId> {
        let parsed = self.parse_id(id, now)?;
        let min = bounds.start.min(0);
        if parsed.value < min || parsed.value > bounds.max {
            return Err(Error::InvalidId {
                sequence: self.name.clone(),
                id: id.to_owned(),
                problem: IdProblem::OutOfRange {
                    value: parsed.value,
                    min,
                    max: bounds.max,
                },
            });
        }
        Ok(parsed)
    }

    /// `id` left-padded with zeros to the digits of the IDs of a period when they are a
    /// number (a prefix of date tokens, the padded counter and decimal check digits) and `id`
    /// is the text of such a number with fewer digits (an integer drops the zeros of a year
    /// such as `05`); `None` otherwise.
    fn pad_number(&self, id: &str) -> Option<String> {
        let pattern = self.pattern.as_ref().filter(|p| !p.has_literal())?;
        let spelling = self.spelling.as_deref();
        if spelling.is_some_and(Spelling::is_text_only) {
            return None;
        }
        let check = spelling.and_then(Spelling::check).map_or(0, |c| c.len());
        let digits = pattern.rendered_len() + usize::from(self.width?) + check;
        let short = id.len() < digits && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
        short.then(|| format!("{id:0>digits$}"))
    }

    /// The period of `id`'s prefix, and the rest of `id`.
    fn parse_prefix<'i>(
        &self,
        id: &'i str,
        around_year: i16,
    ) -> Result<(Option<String>, &'i str), IdProblem> {
        let Some(pattern) = &self.pattern else {
            return Ok((None, id));
        };
        let expected = || IdProblem::Prefix {
            expected: match &self.constant {
                Some(slot) => format!("`{}`", slot.rendering.prefix()),
                None => format!("a prefix of the pattern `{}`", pattern_text(pattern)),
            },
        };
        let len = pattern.rendered_len();
        let cut = id.char_indices().nth(len).map_or(id.len(), |(i, _)| i);
        let (head, rest) = id.split_at(cut);
        if let Some(slot) = &self.constant {
            return match head == slot.rendering.prefix() {
                true => Ok((None, rest)),
                false => Err(expected()),
            };
        }
        let at = pattern
            .parse_rendered(head, around_year)
            .ok_or_else(expected)?;
        let period = self.period_of(at).map(|p| self.canonical(p));
        Ok((period, rest))
    }

    /// `slot` for the counter of `scope` instead.
    pub(crate) fn scoped(&self, slot: &Slot, scope: &Scope) -> Arc<Slot> {
        let period = slot.period.map(|p| self.canonical(p));
        Arc::new(Slot {
            period: slot.period,
            spec: slot.spec.clone(),
            key: CounterKey::of(self.name.clone(), period.as_deref(), Some(scope)),
            rendering: slot.rendering.clone(),
        })
    }
}

/// A pattern as written in a `prefix` (date tokens bare, text quoted where it has their
/// letters), for messages.
fn pattern_text(pattern: &Pattern) -> String {
    pattern
        .pieces()
        .iter()
        .map(|piece| match piece {
            Piece::Literal(text) if text.contains(['Y', 'M', 'D', 'H', '\'']) => {
                format!("'{text}'")
            }
            Piece::Literal(text) => text.clone(),
            token => token.token().to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(prefix: &str, tz: Option<&str>) -> Format {
        let pattern = Pattern::parse(prefix).unwrap();
        let tz = tz.map(|name| sequence_rules::tz::time_zone(name).unwrap());
        Format::new("inv", Some(pattern), tz, Some(6))
    }

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn ids_parse_back_to_their_values() {
        use sequence_rules::encoding::{CheckDigit, Encoding};
        use sequence_rules::Spec;
        let format_of = |spec: Spec<'_>| {
            let checked = sequence_rules::check(&spec).unwrap();
            let spelling = Spelling::of(&checked).unwrap();
            Format::new("x", checked.pattern, checked.tz, checked.width).spelled(spelling)
        };
        let f = format_of(Spec {
            format: Some("ACC-{n:08}-{check}"),
            check_digit: Some(CheckDigit::Luhn),
            ..Spec::new("acc")
        });
        let slot = f.slot(|| unreachable!("no periods"), None);
        let id = slot.rendering.text(12_345).unwrap();
        assert_eq!(&id[..13], "ACC-00012345-");
        assert_eq!(f.parse(&id, 2026).unwrap().value, 12_345);
        let typo = id.replace("12345", "12354");
        assert!(matches!(
            f.parse(&typo, 2026),
            Err(IdProblem::CheckDigit { .. })
        ));
        assert!(matches!(
            f.parse("ACX-00012345-0", 2026),
            Err(IdProblem::Prefix { .. })
        ));
        assert!(matches!(
            f.parse("ACC-0012345-0", 2026),
            Err(IdProblem::Width {
                expected: 8,
                found: 7
            })
        ));
        let f = format_of(Spec {
            format: Some("{YYYY}/{n:05}/EU"),
            ..Spec::new("eu")
        });
        let slot = f.slot(|| "2026-11-26T10:00:00Z".parse().unwrap(), None);
        assert_eq!(slot.rendering.text(42).unwrap(), "2026/00042/EU");
        let parsed = f.parse("2025/00042/EU", 2026).unwrap();
        assert_eq!((parsed.value, parsed.period.as_deref()), (42, Some("2025")));
        assert!(matches!(
            f.parse("2025/00042/US", 2026),
            Err(IdProblem::Suffix { .. })
        ));
        let f = format_of(Spec {
            prefix: Some("YYMM"),
            check_digit: Some(CheckDigit::Mod97),
            ..Spec::new("n")
        });
        let slot = f.slot(|| "2026-11-26T10:00:00Z".parse().unwrap(), None);
        let n = slot.rendering.number(7, "i64").unwrap();
        let text = slot.rendering.text(7).unwrap();
        assert_eq!(
            n.to_string(),
            text,
            "a number and its text hold the same digits"
        );
        assert_eq!(f.parse(&text, 2026).unwrap().value, 7);
        let f = format_of(Spec {
            encoding: Some(Encoding::Crockford32),
            check_digit: Some(CheckDigit::Crockford),
            prefix: Some("'ORD-'"),
            width: Some(5),
            ..Spec::new("c")
        });
        let slot = f.slot(|| unreachable!(), None);
        let id = slot.rendering.text(1234).unwrap();
        assert_eq!(id, "ORD-0016JD");
        assert_eq!(f.parse("ORD-0016jd", 2026).unwrap().value, 1234);
        assert_eq!(f.parse("ORD-OO16JD", 2026).unwrap().value, 1234);
        assert!(f.parse("ORD-0016JX", 2026).is_err());
    }

    #[test]
    fn periods_follow_the_time_zone() {
        let f = format("YYMMDD", Some("Europe/Berlin"));
        // 23:30 UTC on Nov 22 is 00:30 on Nov 23 in Berlin.
        let slot = f.slot(|| ts("2025-11-22T23:30:00Z"), None);
        assert_eq!(slot.rendering.text(7).unwrap(), "251123000007");
        assert_eq!(slot.key.period(), Some("20251123"));
        let before = f.slot(|| ts("2025-11-22T22:59:59Z"), Some(&slot));
        assert_eq!(before.key.period(), Some("20251122"));
        let same = f.slot(|| ts("2025-11-23T12:00:00Z"), Some(&slot));
        assert!(Arc::ptr_eq(&same, &slot), "no new slot within a period");
    }

    #[test]
    fn canonical_periods_do_not_depend_on_the_display() {
        let at = ts("2025-11-22T14:05:00Z");
        for (pattern, canonical) in [
            ("YY", "2025"),
            ("'FY'YYYY", "2025"),
            ("MM/YYYY", "202511"),
            ("DD.MM.YY-", "20251122"),
            ("YYMMDDHH", "2025112214"),
        ] {
            let f = format(pattern, None);
            assert_eq!(
                f.slot(|| at, None).key.period(),
                Some(canonical),
                "{pattern}"
            );
        }
        let f = format("INV-", None);
        let slot = f.slot(|| unreachable!("no clock for a constant prefix"), None);
        assert_eq!(slot.key, CounterKey::named("inv"));
        assert_eq!(slot.rendering.text(3).unwrap(), "INV-000003");
    }
}
