//! What the engine reports of a reservation: its `tracing` span, and the warning of a counter
//! near its end. The targets, names and fields are documented in [`crate::observability`].

use std::fmt::Display;
use std::future::Future;

use tracing::field::Empty;
use tracing::Instrument;

use super::metrics::Timer;
use super::stats::StatsCell;
use super::targets::{NEAR_END, RESERVE};
use crate::error::{Error, Result};
use crate::id::{Bounds, IdRange};

/// What the span records of a reservation that succeeded (a store's `Reservation`).
pub(crate) trait Reserved {
    /// The values reserved.
    fn range(&self) -> IdRange;
    /// How many times the reservation was sent again.
    fn retries(&self) -> u32;
}

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
pub(crate) async fn reserving<R: Reserved>(
    stats: &StatsCell,
    counter: &(dyn Display + Sync),
    n: u64,
    mode: Mode,
    space: Option<Bounds>,
    reservation: impl Future<Output = Result<R>>,
) -> Result<R> {
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
            span.record("first", r.range().first());
            span.record("last", r.range().last());
            span.record("retries", r.retries());
            if let Some(space) = space {
                near_end(stats, counter, r.range().last(), space);
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
