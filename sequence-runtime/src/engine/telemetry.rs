//! What the engine reports of a reservation: its `tracing` span, and the warning of a counter
//! near its end. The targets, names and fields are documented in [`crate::observability`].

use std::fmt::Display;
use std::future::Future;

use tracing::field::Empty;
use tracing::Instrument;

use super::series::Timer;
use super::stats::StatsCell;
use crate::error::{Error, Result};
use crate::observability::{NEAR_END, RESERVE};
use crate::store::Reservation;
use crate::values::Bounds;

/// Why a reservation is made: the `mode` field of its span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One value for each caller waiting together (`batch = 1`, scopes).
    Coalesced,
    /// A range for the cache (when it runs empty or low).
    Refill,
    /// A range for a bulk insert or `Sequence::reserve`.
    Bulk,
    /// Inside a caller's session (gapless inserts, `.session(..)`).
    Session,
    /// Above the IDs already stored (skipping ahead).
    Above,
}

impl Mode {
    /// The value of the `mode` field.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Mode::Coalesced => "coalesced",
            Mode::Refill => "refill",
            Mode::Bulk => "bulk",
            Mode::Session => "session",
            Mode::Above => "above",
        }
    }
}

/// Runs `reservation` of `n` values of `counter` for `mode` inside its `reserve` span, and
/// records its outcome: the range in the span, a failure as an event, and the warning of a
/// counter near its end. `space` gives the values of the counter the reservation took from
/// (`None` for a shard of a ranges sequence, which fills by design).
pub(crate) async fn reserving(
    stats: &StatsCell,
    counter: &(dyn Display + Sync),
    n: u64,
    mode: Mode,
    space: Option<Bounds>,
    reservation: impl Future<Output = Result<Reservation>>,
) -> Result<Reservation> {
    let span = tracing::debug_span!(
        target: RESERVE,
        "reserve",
        sequence = %stats.labels.sequence,
        strategy = stats.labels.strategy,
        counter = %counter,
        values = n,
        mode = mode.name(),
        first = Empty,
        last = Empty,
        retries = Empty,
    );
    let timer = Timer::start();
    let result = reservation.instrument(span.clone()).await;
    stats.series.reservation_took(timer.elapsed());
    match &result {
        Ok(r) => {
            span.record("first", r.range.first());
            span.record("last", r.range.last());
            span.record("retries", r.retries);
            if let Some(space) = space {
                near_end(stats, counter, r.range.last(), space);
            }
        }
        Err(e) => {
            tracing::debug!(
                target: RESERVE,
                parent: &span,
                sequence = %stats.labels.sequence,
                counter = %counter,
                error = %e,
                "Reservation failed"
            );
            let exhausted = matches!(e, Error::Exhausted { .. });
            stats.series.reservation_failed(exhausted);
            if let (Error::Exhausted { last, .. }, Some(space)) = (e, space) {
                near_end(stats, counter, *last, space);
            }
        }
    }
    result
}

/// Warns, once per counter and process, when the counter's last issued value `last` leaves
/// less than `1 - NEAR_END` of its values `space` (at least [`NEAR_END`] of them used).
pub(crate) fn near_end(
    stats: &StatsCell,
    counter: &(dyn Display + Sync),
    last: i64,
    space: Bounds,
) {
    let total = (i128::from(space.max) - i128::from(space.start) + 1) as f64;
    let left = (i128::from(space.max) - i128::from(last)).max(0);
    if ((total - left as f64) / total) < NEAR_END {
        return;
    }
    let share_left = left as f64 / total;
    if !stats.first_warning(format!("{counter}\0{}", space.start)) {
        return;
    }
    tracing::warn!(
        target: RESERVE,
        sequence = %stats.labels.sequence,
        counter = %counter,
        last,
        max = space.max,
        valuesLeft = u64::try_from(left).unwrap_or(u64::MAX),
        shareLeft = share_left,
        "Counter nearly exhausted"
    );
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex, PoisonError};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Level, Metadata, Subscriber};

    use crate::options::SequenceOptions;
    use crate::{Error, Sequence};

    /// A span or an event as a subscriber saw it: its target, its name (a span's) or message
    /// (an event's), its level and its fields, each as text.
    #[derive(Clone, Debug)]
    struct Seen {
        target: String,
        name: String,
        level: Level,
        fields: BTreeMap<String, String>,
    }

    impl Seen {
        fn field(&self, name: &str) -> &str {
            self.fields
                .get(name)
                .unwrap_or_else(|| panic!("no field `{name}` in {self:?}"))
        }

        fn has_fields(&self, names: &[&str]) {
            let mut got: Vec<&str> = self.fields.keys().map(String::as_str).collect();
            got.retain(|f| *f != "message");
            let mut want = names.to_vec();
            want.sort_unstable();
            assert_eq!(got, want, "{self:?}");
        }
    }

    impl Visit for Seen {
        fn record_str(&mut self, field: &Field, value: &str) {
            if field.name() == "message" {
                self.name = value.to_owned();
            }
            self.fields
                .insert(field.name().to_owned(), value.to_owned());
        }

        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.record_str(field, &format!("{value:?}"));
        }
    }

    /// A subscriber that keeps every span and event of this crate.
    #[derive(Clone, Default)]
    struct Recorder {
        spans: Arc<Mutex<Vec<Seen>>>,
        events: Arc<Mutex<Vec<Seen>>>,
    }

    impl Recorder {
        fn spans(&self) -> Vec<Seen> {
            self.spans
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        }

        fn events(&self, message: &str) -> Vec<Seen> {
            let events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
            events
                .iter()
                .filter(|e| e.name == message)
                .cloned()
                .collect()
        }

        fn seen(meta: &Metadata<'_>) -> Seen {
            Seen {
                target: meta.target().to_owned(),
                name: meta.name().to_owned(),
                level: *meta.level(),
                fields: BTreeMap::new(),
            }
        }
    }

    impl Subscriber for Recorder {
        fn enabled(&self, meta: &Metadata<'_>) -> bool {
            meta.target().starts_with("mongo_sequence")
        }

        fn new_span(&self, attrs: &Attributes<'_>) -> Id {
            let mut seen = Self::seen(attrs.metadata());
            attrs.record(&mut seen);
            let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
            spans.push(seen);
            Id::from_u64(spans.len() as u64)
        }

        fn record(&self, span: &Id, values: &Record<'_>) {
            let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
            values.record(&mut spans[span.into_u64() as usize - 1]);
        }

        fn record_follows_from(&self, _: &Id, _: &Id) {}

        fn event(&self, event: &Event<'_>) {
            let mut seen = Self::seen(event.metadata());
            event.record(&mut seen);
            let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
            events.push(seen);
        }

        fn enter(&self, _: &Id) {}

        fn exit(&self, _: &Id) {}
    }

    /// Runs `f` on a runtime of this thread, with the recorder that is the process's
    /// subscriber (so that no other test's thread changes what callsites are enabled while
    /// `f` runs); returns what it recorded about `sequence` (a name no other test uses).
    fn recording<F: std::future::Future>(sequence: &str, f: impl FnOnce() -> F) -> Recorder {
        static GLOBAL: std::sync::OnceLock<Recorder> = std::sync::OnceLock::new();
        let recorder = GLOBAL.get_or_init(|| {
            let recorder = Recorder::default();
            tracing::subscriber::set_global_default(recorder.clone())
                .expect("no other test sets a global subscriber");
            tracing::callsite::rebuild_interest_cache();
            recorder
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(f());
        let about = |seen: &Seen| {
            ["sequence", "counter"]
                .iter()
                .any(|f| seen.fields.get(*f).is_some_and(|v| v == sequence))
        };
        let mine = |all: &Mutex<Vec<Seen>>| {
            let all = all.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::new(Mutex::new(
                all.iter().filter(|s| about(s)).cloned().collect(),
            ))
        };
        Recorder {
            spans: mine(&recorder.spans),
            events: mine(&recorder.events),
        }
    }

    const SPAN_FIELDS: [&str; 8] = [
        "sequence", "strategy", "counter", "values", "mode", "first", "last", "retries",
    ];

    #[test]
    fn a_cache_reserves_in_spans_and_warns_once_near_the_end() {
        let recorder = recording("traced_inv", || async {
            let options = SequenceOptions::builder("traced_inv")
                .batch(10)
                .max(100)
                .build();
            let seq = Sequence::in_memory(options).unwrap();
            for _ in 0..85 {
                seq.next().await.unwrap();
            }
        });
        let spans = recorder.spans();
        assert_eq!(spans.len(), 10, "{spans:?}");
        for (i, span) in spans.iter().enumerate() {
            assert_eq!(
                (span.target.as_str(), span.name.as_str(), span.level),
                ("mongo_sequence::reserve", "reserve", Level::DEBUG)
            );
            span.has_fields(&SPAN_FIELDS);
            assert_eq!(span.field("sequence"), "traced_inv");
            assert_eq!(span.field("strategy"), "counter");
            assert_eq!(span.field("counter"), "traced_inv");
            assert_eq!(span.field("mode"), "refill");
            assert_eq!(span.field("values"), "10");
            assert_eq!(span.field("first"), (i * 10 + 1).to_string());
            assert_eq!(span.field("last"), (i * 10 + 10).to_string());
            assert_eq!(span.field("retries"), "0");
        }
        let refills = recorder.events("Refill started");
        assert_eq!(refills.len(), 10);
        for (i, refill) in refills.iter().enumerate() {
            assert_eq!(refill.target, "mongo_sequence::cache");
            assert_eq!(refill.level, Level::DEBUG);
            refill.has_fields(&["counter", "values", "prefetch"]);
            let prefetch = if i == 0 { "false" } else { "true" };
            assert_eq!(refill.field("prefetch"), prefetch, "{refill:?}");
        }
        let warned = recorder.events("Counter nearly exhausted");
        assert_eq!(warned.len(), 1, "once per counter: {warned:?}");
        let warning = &warned[0];
        assert_eq!(
            (warning.target.as_str(), warning.level),
            ("mongo_sequence::reserve", Level::WARN)
        );
        warning.has_fields(&[
            "sequence",
            "counter",
            "last",
            "max",
            "valuesLeft",
            "shareLeft",
        ]);
        assert_eq!(warning.field("last"), "90");
        assert_eq!(warning.field("max"), "100");
        assert_eq!(warning.field("valuesLeft"), "10");
        assert_eq!(warning.field("shareLeft"), "0.1");
    }

    #[test]
    fn skips_ahead_bulk_reservations_and_failures_are_recorded() {
        let recorder = recording("traced_k", || async {
            let options = SequenceOptions::builder("traced_k").max(1000).build();
            let seq = Sequence::in_memory(options).unwrap();
            let (_, issued) = seq.issue_id::<i64>().await.unwrap();
            seq.skip_ahead(&issued, 40).await.unwrap();
            seq.reserve(5).await.unwrap();
            let failed = seq.reserve(1000).await;
            assert!(matches!(failed, Err(Error::Exhausted { .. })), "{failed:?}");
        });
        let modes: Vec<(String, String)> = recorder
            .spans()
            .iter()
            .map(|s| (s.field("mode").to_owned(), s.field("values").to_owned()))
            .collect();
        let expected = [
            ("coalesced", "1"),
            ("above", "1"),
            ("bulk", "5"),
            ("bulk", "1000"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(m, n)| (m.to_string(), n.to_string()))
            .collect();
        assert_eq!(modes, expected);
        let skipped = recorder.events("Skipped ahead");
        assert_eq!(skipped.len(), 1);
        let skip = &skipped[0];
        assert_eq!(
            (skip.target.as_str(), skip.level),
            ("mongo_sequence::skip_ahead", Level::DEBUG)
        );
        skip.has_fields(&["sequence", "counter", "taken", "storedUpTo", "values"]);
        assert_eq!((skip.field("taken"), skip.field("storedUpTo")), ("1", "40"));
        let failed = recorder.events("Reservation failed");
        assert_eq!(failed.len(), 1);
        failed[0].has_fields(&["sequence", "counter", "error"]);
        assert!(recorder.events("Counter nearly exhausted").is_empty());
    }
}
