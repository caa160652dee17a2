//! The counters of past periods: how many there are before a period, and deleting them
//! (`purge_periods_before`), by the filter of the layout.

use mongodb::action::Action;
use mongodb::bson::Document;
use mongodb::ClientSession;

use super::MongoStore;
use crate::error::driver::Access;
use crate::error::Result;
use crate::observability::ADMIN;

impl MongoStore {
    /// The filter of the counters of `name` before `period`, or why the layout has none.
    fn periods_before(&self, name: &str, period: &str) -> Result<Document> {
        self.layout.periods_before_filter(name, period)
    }

    /// Deletes the counters of `name` of the periods before `period`; returns how many.
    pub(super) async fn delete_periods(
        &self,
        name: &str,
        period: &str,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let filter = self.periods_before(name, period)?;
        let deleted = self
            .collection
            .delete_many(filter)
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

    /// How many counters of `name` belong to the periods before `period`.
    pub(super) async fn count_periods(
        &self,
        name: &str,
        period: &str,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let filter = self.periods_before(name, period)?;
        self.collection
            .count_documents(filter)
            .optional(session, |a, s| a.session(s))
            .await
            .map_err(|e| self.error(e, Access::Read))
    }
}
