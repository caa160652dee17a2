//! The metrics a sequence records through the `metrics` facade (cargo feature `metrics`):
//! handles registered once per sequence and process, with the labels `sequence` and
//! `strategy`. Without the feature every method is empty; with it and no recorder installed,
//! each is a branch on a handle that records nothing. The series are documented in
//! [`crate::observability`].

use std::sync::Arc;
use std::time::Duration;

/// What names a sequence in the records of this process: its name and strategy (the labels of
/// its metrics, the `sequence` field of its events).
#[derive(Clone, Debug, Default)]
pub(crate) struct Labels {
    /// The sequence's name.
    pub(crate) sequence: Arc<str>,
    /// The name of its strategy (`counter`, `ranges`, `random`, ...).
    pub(crate) strategy: &'static str,
}

impl Labels {
    /// The labels of the sequence `sequence` of `strategy`.
    pub(crate) fn new(sequence: &str, strategy: &'static str) -> Self {
        Labels {
            sequence: sequence.into(),
            strategy,
        }
    }
}

/// When a timed operation started (nothing without the feature `metrics`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timer(#[cfg(feature = "metrics")] std::time::Instant);

impl Timer {
    /// A timer started now.
    #[inline]
    pub(crate) fn start() -> Self {
        Timer(
            #[cfg(feature = "metrics")]
            std::time::Instant::now(),
        )
    }

    /// How long ago the timer started (zero without the feature `metrics`).
    #[inline]
    pub(crate) fn elapsed(self) -> Duration {
        #[cfg(feature = "metrics")]
        return self.0.elapsed();
        #[cfg(not(feature = "metrics"))]
        Duration::ZERO
    }
}

#[cfg(feature = "metrics")]
mod on {
    use std::sync::Once;
    use std::time::Duration;

    use metrics::{Counter, Gauge, Histogram, Unit};

    use super::Labels;

    /// The handles of one sequence's series (by default, handles that record nothing).
    #[derive(Debug)]
    pub(crate) struct Series {
        issued: Counter,
        reservations_ok: Counter,
        reservations_exhausted: Counter,
        reservations_failed: Counter,
        reservation_duration: Histogram,
        reservation_retries: Counter,
        waits: Counter,
        wait_duration: Histogram,
        ids_per_reservation: Histogram,
        skipped_ahead: Counter,
        collisions: Counter,
        transaction_retries: Counter,
        group_size: Histogram,
        released: Counter,
        abandoned: Counter,
        cached: Gauge,
    }

    impl Default for Series {
        fn default() -> Self {
            Series {
                issued: Counter::noop(),
                reservations_ok: Counter::noop(),
                reservations_exhausted: Counter::noop(),
                reservations_failed: Counter::noop(),
                reservation_duration: Histogram::noop(),
                reservation_retries: Counter::noop(),
                waits: Counter::noop(),
                wait_duration: Histogram::noop(),
                ids_per_reservation: Histogram::noop(),
                skipped_ahead: Counter::noop(),
                collisions: Counter::noop(),
                transaction_retries: Counter::noop(),
                group_size: Histogram::noop(),
                released: Counter::noop(),
                abandoned: Counter::noop(),
                cached: Gauge::noop(),
            }
        }
    }

    /// Describes every series to the recorder installed, once per process.
    fn describe() {
        static DESCRIBED: Once = Once::new();
        DESCRIBED.call_once(|| {
            use metrics::{describe_counter, describe_gauge, describe_histogram};
            describe_counter!(
                "mongo_sequence_ids_issued_total",
                Unit::Count,
                "IDs handed out"
            );
            describe_counter!(
                "mongo_sequence_reservations_total",
                Unit::Count,
                "Round trips that reserved values from a counter, by outcome"
            );
            describe_histogram!(
                "mongo_sequence_reservation_duration_seconds",
                Unit::Seconds,
                "How long one reservation took"
            );
            describe_counter!(
                "mongo_sequence_reservation_retries_total",
                Unit::Count,
                "Reservations sent again after a concurrent first upsert of the counter"
            );
            describe_counter!(
                "mongo_sequence_waits_total",
                Unit::Count,
                "Calls for an ID that waited for a round trip to the counter"
            );
            describe_histogram!(
                "mongo_sequence_wait_duration_seconds",
                Unit::Seconds,
                "How long a call for an ID waited for a round trip"
            );
            describe_histogram!(
                "mongo_sequence_ids_per_reservation",
                Unit::Count,
                "Values taken by one reservation"
            );
            describe_counter!(
                "mongo_sequence_skipped_ahead_total",
                Unit::Count,
                "Inserts that met a stored ID and skipped ahead of the stored IDs"
            );
            describe_counter!(
                "mongo_sequence_collisions_total",
                Unit::Count,
                "Random IDs that met a stored one and were drawn again"
            );
            describe_counter!(
                "mongo_sequence_transaction_retries_total",
                Unit::Count,
                "Gapless transactions run again after a transient error"
            );
            describe_histogram!(
                "mongo_sequence_group_size",
                Unit::Count,
                "Gapless inserts committed in one transaction"
            );
            describe_counter!(
                "mongo_sequence_ids_released_total",
                Unit::Count,
                "Cached values given back to the counter by release"
            );
            describe_counter!(
                "mongo_sequence_ids_abandoned_total",
                Unit::Count,
                "Reserved values dropped unused: gaps"
            );
            describe_gauge!(
                "mongo_sequence_cached_ids",
                Unit::Count,
                "Values reserved and held in this process"
            );
        });
    }

    impl Series {
        /// The series of the sequence `labels` names, registered with the recorder installed
        /// now.
        pub(crate) fn new(labels: &Labels) -> Self {
            describe();
            let labels = [
                ("sequence", labels.sequence.to_string()),
                ("strategy", labels.strategy.to_owned()),
            ];
            let outcome = |outcome: &'static str| {
                let [sequence, strategy] = labels.clone();
                let labels = [sequence, strategy, ("outcome", outcome.to_owned())];
                metrics::counter!("mongo_sequence_reservations_total", &labels)
            };
            Series {
                issued: metrics::counter!("mongo_sequence_ids_issued_total", &labels),
                reservations_ok: outcome("ok"),
                reservations_exhausted: outcome("exhausted"),
                reservations_failed: outcome("error"),
                reservation_duration: metrics::histogram!(
                    "mongo_sequence_reservation_duration_seconds",
                    &labels
                ),
                reservation_retries: metrics::counter!(
                    "mongo_sequence_reservation_retries_total",
                    &labels
                ),
                waits: metrics::counter!("mongo_sequence_waits_total", &labels),
                wait_duration: metrics::histogram!("mongo_sequence_wait_duration_seconds", &labels),
                ids_per_reservation: metrics::histogram!(
                    "mongo_sequence_ids_per_reservation",
                    &labels
                ),
                skipped_ahead: metrics::counter!("mongo_sequence_skipped_ahead_total", &labels),
                collisions: metrics::counter!("mongo_sequence_collisions_total", &labels),
                transaction_retries: metrics::counter!(
                    "mongo_sequence_transaction_retries_total",
                    &labels
                ),
                group_size: metrics::histogram!("mongo_sequence_group_size", &labels),
                released: metrics::counter!("mongo_sequence_ids_released_total", &labels),
                abandoned: metrics::counter!("mongo_sequence_ids_abandoned_total", &labels),
                cached: metrics::gauge!("mongo_sequence_cached_ids", &labels),
            }
        }

        #[inline]
        pub(crate) fn issued(&self, n: u64) {
            self.issued.increment(n);
        }

        pub(crate) fn reserved(&self, n: u64, retries: u32) {
            self.reservations_ok.increment(1);
            self.ids_per_reservation.record(n as f64);
            if retries > 0 {
                self.reservation_retries.increment(u64::from(retries));
            }
        }

        pub(crate) fn reservation_failed(&self, exhausted: bool) {
            match exhausted {
                true => self.reservations_exhausted.increment(1),
                false => self.reservations_failed.increment(1),
            }
        }

        pub(crate) fn reservation_took(&self, took: Duration) {
            self.reservation_duration.record(took);
        }

        pub(crate) fn waited(&self, took: Duration) {
            self.waits.increment(1);
            self.wait_duration.record(took);
        }

        pub(crate) fn skipped_ahead(&self) {
            self.skipped_ahead.increment(1);
        }

        pub(crate) fn collided(&self, n: u64) {
            self.collisions.increment(n);
        }

        pub(crate) fn transaction_retried(&self) {
            self.transaction_retries.increment(1);
        }

        pub(crate) fn group_committed(&self, inserts: usize) {
            self.group_size.record(inserts as f64);
        }

        pub(crate) fn released(&self, n: u64) {
            self.released.increment(n);
        }

        pub(crate) fn abandoned(&self, n: u64) {
            self.abandoned.increment(n);
        }

        /// `n` values the cache held are gone (handed out or dropped).
        #[inline]
        pub(crate) fn left_cache(&self, n: u64) {
            self.cached.decrement(n as f64);
        }

        #[inline]
        pub(crate) fn cached(&self, before: u64, after: u64) {
            if after > before {
                self.cached.increment((after - before) as f64);
            } else if before > after {
                self.cached.decrement((before - after) as f64);
            }
        }
    }
}

#[cfg(not(feature = "metrics"))]
mod off {
    use std::time::Duration;

    use super::Labels;

    /// Nothing: the crate is built without the feature `metrics`.
    #[derive(Debug, Default)]
    pub(crate) struct Series;

    #[allow(clippy::unused_self)]
    impl Series {
        #[inline]
        pub(crate) fn new(_: &Labels) -> Self {
            Series
        }
        #[inline]
        pub(crate) fn issued(&self, _: u64) {}
        #[inline]
        pub(crate) fn reserved(&self, _: u64, _: u32) {}
        #[inline]
        pub(crate) fn reservation_failed(&self, _: bool) {}
        #[inline]
        pub(crate) fn reservation_took(&self, _: Duration) {}
        #[inline]
        pub(crate) fn waited(&self, _: Duration) {}
        #[inline]
        pub(crate) fn skipped_ahead(&self) {}
        #[inline]
        pub(crate) fn collided(&self, _: u64) {}
        #[inline]
        pub(crate) fn transaction_retried(&self) {}
        #[inline]
        pub(crate) fn group_committed(&self, _: usize) {}
        #[inline]
        pub(crate) fn released(&self, _: u64) {}
        #[inline]
        pub(crate) fn abandoned(&self, _: u64) {}
        #[inline]
        pub(crate) fn left_cache(&self, _: u64) {}
    }
}

#[cfg(not(feature = "metrics"))]
pub(crate) use off::Series;
#[cfg(feature = "metrics")]
pub(crate) use on::Series;
