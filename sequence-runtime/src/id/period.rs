//! Periods: which counter a sequence with a date prefix uses now, and how its values render.
//!
//! Each period (the day, month, year or hour of the prefix's finest date token, in the
//! sequence's time zone) has a counter of its own, keyed by a canonical period string at that
//! resolution (`"2025"`, `"202511"`, `"20251122"`, `"2025112214"`) whatever the display pattern.

use std::sync::Arc;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use sequence_rules::pattern::{Pattern, Resolution};

use super::counter_key::CounterKey;
use super::render::Rendering;
use super::scope::Scope;

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
        let periodic = pattern.as_ref().and_then(Pattern::resolution).is_some();
        let spec: Arc<str> = format!("{name:?} {pattern:?} {:?} {width:?}", tz.iana_name()).into();
        let mut format = Format {
            name: name.to_owned(),
            pattern,
            tz,
            width,
            spec,
            constant: None,
        };
        if !periodic {
            let prefix = format
                .pattern
                .as_ref()
                .map(|p| p.render(DateTime::default()))
                .unwrap_or_default();
            format.constant = Some(Arc::new(Slot {
                period: None,
                spec: format.spec.clone(),
                key: CounterKey::named(format.name.clone()),
                rendering: Rendering::new(prefix, format.width),
            }));
        }
        format
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
                Some(p) if p.period.is_none() && p.spec == constant.spec => p.clone(),
                _ => constant.clone(),
            };
        }
        let period = self.period_at(now());
        if let Some(p) = prev {
            if p.period == period && p.spec == self.spec {
                return p.clone();
            }
        }
        let period = period.expect("a format without a constant slot has periods");
        let pattern = self.pattern.as_ref().expect("periods come from a pattern");
        let slot = Slot {
            period: Some(period),
            spec: self.spec.clone(),
            key: CounterKey::of(self.name.clone(), Some(&self.canonical(period)), None),
            rendering: Rendering::new(pattern.render(period.start()), self.width),
        };
        Arc::new(slot)
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
    fn periods_follow_the_time_zone() {
        let f = format("YYMMDD", Some("Europe/Berlin"));
        // 23:30 UTC on Nov 22 is 00:30 on Nov 23 in Berlin.
        let slot = f.slot(|| ts("2025-11-22T23:30:00Z"), None);
        assert_eq!(slot.rendering.text(7), "251123000007");
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
        assert_eq!(slot.rendering.text(3), "INV-000003");
    }
}
