//! What checking and repairing claims find and do.

use mongodb::bson::Bson;
use serde::Serialize;

use crate::error::SharedId;

/// A document that holds an ID without a claim of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct UnclaimedDocument {
    /// The document's `_id`.
    pub doc: Bson,
    /// The key its claim would have: the ID, or the scope values and the ID.
    pub id: Bson,
    /// The `_id` of the document that the claim of this key names instead, when there is one:
    /// another document that holds the ID (see [`ClaimsReport::shared`]), or one that no
    /// longer does (then the claim is also an orphan, and `repair` points it at this document).
    pub claimed_for: Option<Bson>,
}

/// A claim that no document holds: its document is gone, or holds another ID now.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OrphanClaim {
    /// The claim's `_id`: the ID, or the scope values and the ID.
    pub id: Bson,
    /// The `_id` of the document the claim names.
    pub doc: Bson,
    /// What that document holds now, as a claim's key, when it still exists (`null` when it
    /// has no ID); `None`: the document is gone.
    pub holds: Option<Bson>,
}

impl OrphanClaim {
    /// Whether the document the claim names is gone (else it holds another ID).
    pub fn document_gone(&self) -> bool {
        self.holds.is_none()
    }
}

/// What [`Claims::check`](super::Claims::check) found. Each list holds at most the check's
/// [`limit`](crate::action::CheckClaims::limit) items; the counts count all of them.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ClaimsReport {
    /// The target collection, as `database.collection`.
    pub collection: String,
    /// The proxy collection, as `database.collection`.
    pub proxy: String,
    /// Documents that hold an ID without a claim of it, in the order of the target's scan.
    pub unclaimed: Vec<UnclaimedDocument>,
    /// How many there are.
    pub unclaimed_count: u64,
    /// Claims that no document holds.
    pub orphans: Vec<OrphanClaim>,
    /// How many there are.
    pub orphan_count: u64,
    /// IDs held by two or more documents.
    pub shared: Vec<SharedId>,
    /// How many there are.
    pub shared_count: u64,
    /// Documents without the ID field (not counted above: they hold no ID to claim).
    pub without_id: u64,
}

impl ClaimsReport {
    /// Whether every document has its claim, every claim its document, and no ID is held
    /// twice.
    pub fn is_clean(&self) -> bool {
        self.unclaimed_count == 0 && self.orphan_count == 0 && self.shared_count == 0
    }

    /// Counts `o`, and lists it while fewer than `limit` are.
    pub(super) fn count_orphan(&mut self, o: &OrphanClaim, limit: usize) {
        self.orphan_count += 1;
        if self.orphans.len() < limit {
            self.orphans.push(o.clone());
        }
    }

    /// Counts `u`, and lists it while fewer than `limit` are.
    pub(super) fn count_unclaimed(&mut self, u: &UnclaimedDocument, limit: usize) {
        self.unclaimed_count += 1;
        if self.unclaimed.len() < limit {
            self.unclaimed.push(u.clone());
        }
    }
}

/// What [`Claims::repair`](super::Claims::repair) found and did.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RepairReport {
    /// What was found before anything was written (the lists capped as in a check).
    pub found: ClaimsReport,
    /// Documents claimed (in a dry run: that would be), stale claims pointed at them included.
    pub claimed: u64,
    /// Orphan claims deleted (in a dry run: that would be); 0 without `prune`.
    pub pruned: u64,
    /// Documents whose ID another writer claimed between the check and the write: left
    /// unclaimed (check again; two documents may now hold the ID).
    pub raced: u64,
    /// Whether the repair was pruning orphan claims.
    pub prune: bool,
    /// Whether nothing was written (a dry run).
    pub dry_run: bool,
}
