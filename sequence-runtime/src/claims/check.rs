//! Checking the claims of a proxy collection: aggregations on the target and the proxy read as
//! streams (`$lookup` both ways, `$group` of the IDs on the server), so that memory stays
//! bounded whatever the size of the collections.

use mongodb::bson::{doc, Bson, Document};
use mongodb::Cursor;

use super::claims_report::{ClaimsReport, OrphanClaim, UnclaimedDocument};
use super::collections::Claims;
use crate::error::driver::Access;
use crate::error::{Error, Result, SharedId};

/// What `claims` holds: the documents without a claim, the claims without a document and the
/// IDs held by two or more documents, at most `limit` of each listed; writes nothing.
pub(crate) async fn check(claims: &Claims, limit: usize) -> Result<ClaimsReport> {
    claims.same_database()?;
    let mut report = claims.empty_report();
    claims.shared(&mut report, limit).await?;
    claims.orphans(|o| report.count_orphan(&o, limit)).await?;
    claims
        .unclaimed(|u| report.count_unclaimed(&u, limit))
        .await?;
    report.without_id = claims.without_id().await?;
    Ok(report)
}

impl Claims {
    /// The IDs held by two or more documents, into `report` (at most `limit` listed).
    pub(super) async fn shared(&self, report: &mut ClaimsReport, limit: usize) -> Result<()> {
        let pipeline = vec![
            self.with_id(),
            doc! { "$group": {
                "_id": self.key("$"),
                "count": { "$sum": 1 },
                "docs": { "$push": "$_id" },
            } },
            doc! { "$match": { "count": { "$gt": 1 } } },
            doc! { "$project": {
                "count": 1,
                "docs": { "$slice": ["$docs", SharedId::LISTED as i32] },
            } },
        ];
        let mut cursor = self.aggregate(&self.target, pipeline).await?;
        while let Some(row) = self.next(&mut cursor, &self.target).await? {
            report.shared_count += 1;
            if report.shared.len() < limit {
                let id = row.get("_id").cloned().unwrap_or(Bson::Null);
                let docs = match row.get("docs") {
                    Some(Bson::Array(docs)) => docs.clone(),
                    _ => Vec::new(),
                };
                let count = match row.get("count") {
                    Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
                    Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
                    _ => 0,
                };
                report.shared.push(SharedId::new(id, docs, count));
            }
        }
        Ok(())
    }

    /// The claims that no document holds, as a stream of rows `{ _id, doc, found, exists }`.
    pub(super) async fn orphan_cursor(&self) -> Result<Cursor<Document>> {
        let pipeline = vec![
            doc! { "$lookup": {
                "from": self.target.name(),
                "localField": "doc",
                "foreignField": "_id",
                "as": "found",
            } },
            doc! { "$project": {
                "doc": 1,
                "exists": { "$gt": [{ "$size": "$found" }, 0] },
                "found": { "$arrayElemAt": [
                    { "$map": { "input": "$found", "in": self.key("$$this.") } },
                    0,
                ] },
            } },
            doc! { "$match": { "$expr": { "$ne": ["$found", "$_id"] } } },
        ];
        self.aggregate(&self.proxy, pipeline).await
    }

    /// Calls `each` with every claim that no document holds.
    pub(super) async fn orphans(&self, mut each: impl FnMut(OrphanClaim)) -> Result<()> {
        let mut cursor = self.orphan_cursor().await?;
        while let Some(row) = self.next(&mut cursor, &self.proxy).await? {
            each(orphan(row));
        }
        Ok(())
    }

    /// The documents without a claim of their ID, as a stream of rows `{ _id, key, claim }`.
    pub(super) async fn unclaimed_cursor(&self) -> Result<Cursor<Document>> {
        let pipeline = vec![
            self.with_id(),
            doc! { "$project": { "key": self.key("$") } },
            doc! { "$lookup": {
                "from": self.proxy.name(),
                "localField": "key",
                "foreignField": "_id",
                "as": "claim",
            } },
            doc! { "$project": {
                "key": 1,
                "claim": { "$arrayElemAt": ["$claim.doc", 0] },
            } },
            doc! { "$match": { "$expr": { "$ne": ["$claim", "$_id"] } } },
        ];
        self.aggregate(&self.target, pipeline).await
    }

    /// Calls `each` with every document without a claim of its ID.
    pub(super) async fn unclaimed(&self, mut each: impl FnMut(UnclaimedDocument)) -> Result<()> {
        let mut cursor = self.unclaimed_cursor().await?;
        while let Some(row) = self.next(&mut cursor, &self.target).await? {
            each(unclaimed(row));
        }
        Ok(())
    }

    /// How many documents have no ID field.
    pub(super) async fn without_id(&self) -> Result<u64> {
        self.target
            .count_documents(doc! { &self.field: { "$exists": false } })
            .await
            .map_err(|e| Error::from_driver_on(e, self.target.namespace(), Access::CheckClaims))
    }
}

/// An orphan claim from a row of [`Claims::orphan_cursor`].
pub(super) fn orphan(mut row: Document) -> OrphanClaim {
    let exists = row.get_bool("exists").unwrap_or(false);
    OrphanClaim {
        id: row.remove("_id").unwrap_or(Bson::Null),
        doc: row.remove("doc").unwrap_or(Bson::Null),
        holds: exists.then(|| row.remove("found").unwrap_or(Bson::Null)),
    }
}

/// An unclaimed document from a row of [`Claims::unclaimed_cursor`].
pub(super) fn unclaimed(mut row: Document) -> UnclaimedDocument {
    UnclaimedDocument {
        doc: row.remove("_id").unwrap_or(Bson::Null),
        id: row.remove("key").unwrap_or(Bson::Null),
        claimed_for: row.remove("claim"),
    }
}
