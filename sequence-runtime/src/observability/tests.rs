//! The spans, events and metrics of this crate, as a subscriber
//! and a recorder see them after real operations of a [`Sequence`](crate::Sequence) on an
//! in-process store: names, targets, levels, fields, series and labels.

mod events {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex, PoisonError};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Level, Metadata, Subscriber};

    use crate::error::Error;
    use crate::options::SequenceOptions;
    use crate::Sequence;

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
            // A batch below `Batch::AHEAD_FROM`: one batch per refill.
            let options = SequenceOptions::builder("traced_inv")
                .batch(9)
                .max(90)
                .build();
            let seq = Sequence::in_memory(options).unwrap();
            for _ in 0..76 {
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
            assert_eq!(span.field("values"), "9");
            assert_eq!(span.field("first"), (i * 9 + 1).to_string());
            assert_eq!(span.field("last"), (i * 9 + 9).to_string());
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
        assert_eq!(warning.field("last"), "81");
        assert_eq!(warning.field("max"), "90");
        assert_eq!(warning.field("valuesLeft"), "9");
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

#[cfg(feature = "metrics")]
mod series {
    use std::collections::BTreeMap;

    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use crate::error::Error;
    use crate::options::SequenceOptions;
    use crate::Sequence;

    /// Each series recorded, by name and labels (`key=value`, sorted), with its value.
    type Recorded = BTreeMap<(String, Vec<String>), DebugValue>;

    /// Runs `f` on a runtime of this thread with a recorder of its own.
    fn recording<F: std::future::Future<Output = ()>>(f: impl FnOnce() -> F) -> Recorded {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        metrics::with_local_recorder(&recorder, || runtime.block_on(f()));
        snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let key = key.key();
                let mut labels: Vec<String> = key
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect();
                labels.sort();
                ((key.name().to_owned(), labels), value)
            })
            .collect()
    }

    fn labels(sequence: &str, extra: &[&str]) -> Vec<String> {
        let mut labels = vec![
            format!("sequence={sequence}"),
            "strategy=counter".to_owned(),
        ];
        labels.extend(extra.iter().map(|s| s.to_string()));
        labels.sort();
        labels
    }

    fn counter(recorded: &Recorded, name: &str, labels: Vec<String>) -> u64 {
        match recorded.get(&(name.to_owned(), labels)) {
            Some(DebugValue::Counter(n)) => *n,
            other => panic!("{name}: {other:?} in {recorded:#?}"),
        }
    }

    fn gauge(recorded: &Recorded, name: &str, labels: Vec<String>) -> f64 {
        match recorded.get(&(name.to_owned(), labels)) {
            Some(DebugValue::Gauge(v)) => v.into_inner(),
            other => panic!("{name}: {other:?}"),
        }
    }

    fn histogram(recorded: &Recorded, name: &str, labels: Vec<String>) -> Vec<f64> {
        match recorded.get(&(name.to_owned(), labels)) {
            Some(DebugValue::Histogram(v)) => v.iter().map(|x| x.into_inner()).collect(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn the_series_follow_the_statistics() {
        let stats = std::sync::Arc::new(std::sync::Mutex::new(None));
        let kept = stats.clone();
        let recorded = recording(|| async move {
            let options = SequenceOptions::builder("m").batch(10).max(60).build();
            let seq = Sequence::in_memory(options).unwrap();
            for _ in 0..25 {
                seq.next().await.unwrap();
            }
            let cached = seq.stats().reserved - seq.stats().issued;
            let (_, issued) = seq.issue_id::<i64>().await.unwrap();
            seq.skip_ahead(&issued, 40).await.unwrap();
            let failed = seq.reserve(100).await;
            assert!(matches!(failed, Err(Error::Exhausted { .. })), "{failed:?}");
            *kept.lock().unwrap() = Some((seq.stats(), cached));
        });
        let (stats, _) = stats.lock().unwrap().take().unwrap();
        let all = labels("m", &[]);
        let ok = labels("m", &["outcome=ok"]);
        let exhausted = labels("m", &["outcome=exhausted"]);
        assert_eq!(
            counter(&recorded, "mongo_sequence_ids_issued_total", all.clone()),
            stats.issued
        );
        assert_eq!(
            counter(&recorded, "mongo_sequence_reservations_total", ok.clone()),
            stats.reservations
        );
        assert_eq!(
            counter(&recorded, "mongo_sequence_reservations_total", exhausted),
            1
        );
        let sizes = histogram(&recorded, "mongo_sequence_ids_per_reservation", all.clone());
        assert_eq!(sizes.len() as u64, stats.reservations);
        assert_eq!(sizes.iter().sum::<f64>() as u64, stats.reserved);
        let durations = histogram(
            &recorded,
            "mongo_sequence_reservation_duration_seconds",
            all.clone(),
        );
        assert_eq!(
            durations.len() as u64,
            stats.reservations + 1,
            "with the failure"
        );
        assert_eq!(
            counter(&recorded, "mongo_sequence_waits_total", all.clone()),
            stats.waits
        );
        let waits = histogram(
            &recorded,
            "mongo_sequence_wait_duration_seconds",
            all.clone(),
        );
        assert_eq!(waits.len() as u64, stats.waits);
        assert_eq!(
            counter(&recorded, "mongo_sequence_skipped_ahead_total", all.clone()),
            stats.skipped_ahead
        );
        assert_eq!(stats.skipped_ahead, 1);
        assert_eq!(
            counter(&recorded, "mongo_sequence_ids_abandoned_total", all.clone()),
            stats.wasted
        );
        let held = stats.reserved - stats.issued - stats.wasted;
        assert_eq!(
            gauge(&recorded, "mongo_sequence_cached_ids", all.clone()) as u64,
            held,
            "{stats:?}"
        );
        for (name, labels) in recorded.keys() {
            assert!(name.starts_with("mongo_sequence_"), "{name}");
            let keys: Vec<&str> = labels
                .iter()
                .map(|l| l.split('=').next().unwrap())
                .collect();
            let allowed = if name == "mongo_sequence_reservations_total" {
                vec!["outcome", "sequence", "strategy"]
            } else {
                vec!["sequence", "strategy"]
            };
            assert_eq!(keys, allowed, "{name}");
        }
    }

    #[test]
    fn released_values_leave_the_cache_gauge() {
        let released = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let kept = released.clone();
        let recorded = recording(|| async move {
            let options = SequenceOptions::builder("r").batch(10).build();
            let seq = Sequence::in_memory(options).unwrap();
            for _ in 0..3 {
                seq.next().await.unwrap();
            }
            seq.release().await.unwrap();
            kept.store(seq.stats().released, std::sync::atomic::Ordering::Relaxed);
        });
        let released = released.load(std::sync::atomic::Ordering::Relaxed);
        assert!(released >= 7, "{released}");
        let all = labels("r", &[]);
        assert_eq!(
            gauge(&recorded, "mongo_sequence_cached_ids", all.clone()),
            0.0
        );
        assert_eq!(
            counter(&recorded, "mongo_sequence_ids_released_total", all),
            released
        );
    }
}
