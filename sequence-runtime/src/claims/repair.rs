//! Repairing the claims of a proxy collection: claiming the documents without one and, when
//! asked, deleting the claims no document holds, written in batches as the streams are read.

use mongodb::bson::{doc, Bson, Document};

use super::check::{orphan, unclaimed};
use super::claims_report::{OrphanClaim, RepairReport, UnclaimedDocument};
use super::collections::Claims;
use crate::error::driver::{is_duplicate_key, DUPLICATE_KEY_CODES};
use crate::error::{Error, Result};
use crate::store::literal;

/// Claims written or deleted per round trip.
const WRITE_BATCH: usize = 500;

/// Claims every document of `claims` without a claim (after checking that no ID is held by two
/// documents: [`Error::SharedIds`] lists them, and nothing is written), and with `prune`
/// deletes the claims no document holds; with `dry_run`, finds what would be written and
/// writes nothing. At most `limit` items of each kind are listed.
pub(crate) async fn repair(
    claims: &Claims,
    limit: usize,
    prune: bool,
    dry_run: bool,
) -> Result<RepairReport> {
    claims.same_database()?;
    let mut found = claims.empty_report();
    claims.shared(&mut found, limit).await?;
    if found.shared_count > 0 {
        return Err(Error::SharedIds {
            namespace: found.collection,
            ids: found.shared,
            count: found.shared_count,
        });
    }
    let write = !dry_run;
    let mut pruned = 0;
    if prune && write {
        // Deleted in batches as the stream goes, so that memory stays bounded.
        let mut doomed: Vec<OrphanClaim> = Vec::new();
        let mut cursor = claims.orphan_cursor().await?;
        while let Some(row) = claims.next(&mut cursor, &claims.proxy).await? {
            let o = orphan(row);
            found.count_orphan(&o, limit);
            doomed.push(o);
            if doomed.len() >= WRITE_BATCH {
                pruned += claims.delete(&std::mem::take(&mut doomed)).await?;
            }
        }
        pruned += claims.delete(&doomed).await?;
    } else {
        claims.orphans(|o| found.count_orphan(&o, limit)).await?;
        if prune {
            pruned = found.orphan_count;
        }
    }
    let mut claimed = 0;
    let mut raced = 0;
    let mut batch: Vec<UnclaimedDocument> = Vec::new();
    let mut cursor = claims.unclaimed_cursor().await?;
    while let Some(row) = claims.next(&mut cursor, &claims.target).await? {
        let u = unclaimed(row);
        found.count_unclaimed(&u, limit);
        if !write {
            claimed += 1;
            continue;
        }
        match &u.claimed_for {
            // A stale claim holds the key: pointed at this document (prune may have
            // deleted it already; then the claim is inserted).
            Some(other) => match claims.repoint(&u, other).await? {
                true => claimed += 1,
                false => batch.push(u),
            },
            None => batch.push(u),
        }
        if batch.len() >= WRITE_BATCH {
            let (c, r) = claims.insert(&std::mem::take(&mut batch)).await?;
            claimed += c;
            raced += r;
        }
    }
    if write {
        let (c, r) = claims.insert(&batch).await?;
        claimed += c;
        raced += r;
    }
    found.without_id = claims.without_id().await?;
    Ok(RepairReport {
        found,
        claimed,
        pruned,
        raced,
        prune,
        dry_run,
    })
}

/// The filter of the claim `id` while it names the document `doc`.
fn claim_filter(id: &Bson, doc: &Bson) -> Result<Document> {
    Ok(doc! { "_id": literal::exactly("_id", id)?, "doc": literal::exactly("doc", doc)? })
}

impl Claims {
    /// Deletes `orphans`, each only if it still names the same document; returns how many
    /// were deleted.
    pub(super) async fn delete(&self, orphans: &[OrphanClaim]) -> Result<u64> {
        if orphans.is_empty() {
            return Ok(0);
        }
        let each: Vec<Document> = orphans
            .iter()
            .map(|o| claim_filter(&o.id, &o.doc))
            .collect::<Result<_>>()?;
        let deleted = self
            .proxy
            .delete_many(doc! { "$or": each })
            .await
            .map_err(|e| self.write_error(e))?;
        Ok(deleted.deleted_count)
    }

    /// Points the stale claim of `u`'s key, naming `other`, at `u`'s document; false when
    /// that claim no longer names `other` (pruned, or changed meanwhile).
    pub(super) async fn repoint(&self, u: &UnclaimedDocument, other: &Bson) -> Result<bool> {
        let updated = self
            .proxy
            .update_one(
                claim_filter(&u.id, other)?,
                doc! { "$set": { "doc": u.doc.clone() } },
            )
            .await
            .map_err(|e| self.write_error(e))?;
        Ok(updated.modified_count == 1)
    }

    /// Inserts the claims of `docs`; returns how many were inserted, and how many met a claim
    /// another writer inserted meanwhile.
    pub(super) async fn insert(&self, docs: &[UnclaimedDocument]) -> Result<(u64, u64)> {
        if docs.is_empty() {
            return Ok((0, 0));
        }
        let claims = docs
            .iter()
            .map(|u| doc! { "_id": u.id.clone(), "doc": u.doc.clone() });
        match self.proxy.insert_many(claims).ordered(false).await {
            Ok(done) => Ok((done.inserted_ids.len() as u64, 0)),
            Err(e) => {
                let failed = match &*e.kind {
                    mongodb::error::ErrorKind::InsertMany(failure) => {
                        let errors = failure.write_errors.as_deref().unwrap_or_default();
                        let duplicates = errors
                            .iter()
                            .filter(|w| DUPLICATE_KEY_CODES.contains(&w.code))
                            .count();
                        (failure.write_concern_error.is_none() && duplicates == errors.len())
                            .then_some(duplicates as u64)
                    }
                    _ if is_duplicate_key(&e) => Some(docs.len() as u64),
                    _ => None,
                };
                match failed {
                    Some(raced) => Ok((docs.len() as u64 - raced, raced)),
                    None => Err(self.write_error(e)),
                }
            }
        }
    }
}
