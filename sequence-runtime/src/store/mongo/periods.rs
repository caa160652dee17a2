//! The counters of past periods: how many there are before a period, and deleting them
//! (`purge_periods_before`), by the filter of the layout.

use mongodb::action::Action;
use mongodb::ClientSession;

use super::MongoStore;
use crate::error::driver::Access;
use crate::error::Result;
use crate::observability::ADMIN;
use crate::store::PastPeriods;

impl MongoStore {
    /// Counts or deletes the counters of `name` of the periods before `period`, by the
    /// filter of the layout; returns how many.
    pub(super) async fn past_periods(
        &self,
        name: &str,
        period: &str,
        what: PastPeriods,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let filter = self.layout.periods_before_filter(name, period)?;
        if what == PastPeriods::Count {
            return (self.collection.count_documents(filter))
                .optional(session, |a, s| a.session(s))
                .await
                .map_err(|e| self.error(e, Access::Read));
        }
        let deleted = (self.collection.delete_many(filter))
            .optional(session, |a, s| a.session(s))
            .await
            .map_err(|e| self.error(e, Access::Delete))?
            .deleted_count;
        tracing::info!(
            target: ADMIN,
            sequence = name,
            before = period,
            deleted,
            "Old period counters deleted"
        );
        Ok(deleted)
    }
}
