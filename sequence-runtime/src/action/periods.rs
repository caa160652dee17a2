//! [`Sequence::purge_periods_before`], [`Sequence::count_periods_before`] and their actions.

use std::future::IntoFuture;

use jiff::civil::DateTime;
use mongodb::ClientSession;

use crate::error::Result;
use crate::sequence::Sequence;
use crate::store::{BoxFuture, PastPeriods};

impl Sequence {
    /// Deletes the counters of the periods before the one that `before` falls in (in every
    /// scope) and returns how many it deleted: housekeeping for sequences with a date prefix,
    /// whose counters accumulate one per period.
    ///
    /// `before` is a civil date or date-time in the sequence's time zone, truncated to the
    /// period's resolution (`2025-11-01` for a monthly prefix means November 2025). Counters of
    /// other sequences and of `before`'s period and later are never touched. A `before` in a
    /// period after the current one is refused with
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument), since that would delete the
    /// current period's counter and make its IDs start over.
    ///
    /// Purge only periods the clock will not return to: a deleted period's counter would start
    /// again at `start`. Takes a session ([`PurgePeriods::session`]).
    pub fn purge_periods_before(&self, before: impl Into<DateTime>) -> PurgePeriods<'_> {
        PurgePeriods {
            seq: self,
            before: before.into(),
            session: None,
        }
    }

    /// How many counters [`purge_periods_before`](Self::purge_periods_before) would delete;
    /// nothing is deleted. Takes a session ([`CountPeriods::session`]).
    pub fn count_periods_before(&self, before: impl Into<DateTime>) -> CountPeriods<'_> {
        CountPeriods {
            seq: self,
            before: before.into(),
            session: None,
        }
    }
}

/// The action returned by [`Sequence::purge_periods_before`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct PurgePeriods<'a> {
    seq: &'a Sequence,
    before: DateTime,
    session: Option<&'a mut ClientSession>,
}

impl<'a> PurgePeriods<'a> {
    session_setter!(
        /// Deletes the counters in `session`: inside its transaction, if one is started.
    );
}

impl<'a> IntoFuture for PurgePeriods<'a> {
    type Output = Result<u64>;
    type IntoFuture = BoxFuture<'a, Result<u64>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(
            self.seq
                .past_periods_in(self.before, PastPeriods::Delete, self.session),
        )
    }
}

/// The action returned by [`Sequence::count_periods_before`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct CountPeriods<'a> {
    seq: &'a Sequence,
    before: DateTime,
    session: Option<&'a mut ClientSession>,
}

impl<'a> CountPeriods<'a> {
    session_setter!(
        /// Counts the counters in `session`: inside its transaction, if one is started.
    );
}

impl<'a> IntoFuture for CountPeriods<'a> {
    type Output = Result<u64>;
    type IntoFuture = BoxFuture<'a, Result<u64>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(
            self.seq
                .past_periods_in(self.before, PastPeriods::Count, self.session),
        )
    }
}
