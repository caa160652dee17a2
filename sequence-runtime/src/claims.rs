//! Checking and repairing the claims of a proxy collection (`unique = "proxy"`): documents
//! without a claim, claims without a document, and IDs held by two documents.
//!
//! A model with `unique = "proxy"` writes, with each document, a claim
//! `{ _id: <key>, doc: <the document's _id> }` in its proxy collection, the key being the ID, or
//! for a scoped model `{ <stored scope field>: value, …, id: <ID> }`. Documents written before
//! the option was turned on, or by another writer, have no claim; a deleted document (or one
//! whose ID was changed by hand) leaves its claim behind. [`Claims::check`] finds both, and the
//! IDs that two or more documents hold; [`Claims::repair`] claims what is unclaimed and, with
//! [`prune`](Repair::prune), deletes the claims no document holds.
//!
//! Each is a few aggregations read as streams (a `$lookup` of the claims of the documents, a
//! `$lookup` of the documents of the claims, a `$group` of the IDs on the server), so that
//! memory stays bounded whatever the size of the collections: a report lists at most
//! [`limit`](Check::limit) items of each kind and counts all of them, and `repair` writes as it
//! reads, in batches.
//!
//! ```no_run
//! # async fn f(orders: mongodb::Collection<mongodb::bson::Document>) -> sequence_runtime::Result<()> {
//! use sequence_runtime::claims::Claims;
//!
//! // The claims of `number` in `orders.claims.number`, the proxy a model names by default.
//! let claims = Claims::with_default_proxy(&orders, "number");
//! let report = claims.check().await?;
//! if !report.is_clean() {
//!     println!("{} unclaimed, {} orphan claim(s)", report.unclaimed_count, report.orphan_count);
//!     let repaired = claims.repair().prune(true).await?;
//!     println!("claimed {}, pruned {}", repaired.claimed, repaired.pruned);
//! }
//! # Ok(()) }
//! ```

use std::future::IntoFuture;

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::{Collection, Cursor};
use sequence_rules::default_proxy;
use serde::Serialize;

use crate::error::{is_duplicate_key, Access, Error, Result};
use crate::store::BoxFuture;

pub use crate::error::SharedId;

/// The items of each kind a report lists by default.
pub const DEFAULT_LIMIT: usize = 100;

/// Claims written or deleted per round trip by `repair`.
const WRITE_BATCH: usize = 500;

/// The name of the proxy collection a model uses by default for the ID field `field` of
/// `collection`: `<collection>.claims.<field>`.
///
/// ```
/// assert_eq!(
///     sequence_runtime::claims::default_proxy_name("orders", "number"),
///     "orders.claims.number"
/// );
/// ```
pub fn default_proxy_name(collection: &str, field: &str) -> String {
    default_proxy(collection, field)
}

/// The claims of the IDs of a target collection, held in a proxy collection of the same
/// database: what [`check`](Self::check) and [`repair`](Self::repair) read.
///
/// The ID field and the scope fields are named as the documents store them (a field renamed
/// by `serde` under its stored name), the scope fields in the model's `scope` order, which is
/// the order of the fields of a claim's key.
#[derive(Clone, Debug)]
pub struct Claims {
    target: Collection<Document>,
    field: String,
    scope: Vec<String>,
    proxy: Collection<Document>,
}

impl Claims {
    /// The claims in `proxy` of the IDs that the documents of `target` store in `field`.
    pub fn new(
        target: &Collection<Document>,
        field: impl Into<String>,
        proxy: &Collection<Document>,
    ) -> Self {
        Claims {
            target: target.clone(),
            field: field.into(),
            scope: Vec::new(),
            proxy: proxy.clone(),
        }
    }

    /// The claims of the IDs that the documents of `target` store in `field`, in the proxy
    /// collection a model uses by default: [`default_proxy_name`] in `target`'s database.
    pub fn with_default_proxy(target: &Collection<Document>, field: impl Into<String>) -> Self {
        let field = field.into();
        let proxy = target
            .client()
            .database(&target.namespace().db)
            .collection(&default_proxy_name(target.name(), &field));
        Claims {
            target: target.clone(),
            field,
            scope: Vec::new(),
            proxy,
        }
    }

    /// The scope fields of a scoped model, as stored, in `scope` order: IDs are unique per
    /// scope values, and a claim's key is `{ <scope field>: value, …, id: <ID> }`. A document
    /// without a scope field counts as holding `null` there.
    pub fn scope<I, S>(mut self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scope = fields.into_iter().map(Into::into).collect();
        self
    }

    /// The target collection.
    pub fn target(&self) -> &Collection<Document> {
        &self.target
    }

    /// The proxy collection.
    pub fn proxy(&self) -> &Collection<Document> {
        &self.proxy
    }

    /// Finds the documents without a claim, the claims without a document and the IDs held by
    /// two or more documents; writes nothing.
    pub fn check(&self) -> Check<'_> {
        Check {
            claims: self,
            limit: DEFAULT_LIMIT,
        }
    }

    /// Claims every document without a claim (after checking that no ID is held by two
    /// documents: [`Error::SharedIds`] lists them, and nothing is written), and with
    /// [`prune`](Repair::prune) deletes the claims no document holds.
    pub fn repair(&self) -> Repair<'_> {
        Repair {
            claims: self,
            limit: DEFAULT_LIMIT,
            prune: false,
            dry_run: false,
        }
    }
}

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

/// What [`Claims::check`] found. Each list holds at most the check's
/// [`limit`](Check::limit) items; the counts count all of them.
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
    fn count_orphan(&mut self, o: &OrphanClaim, limit: usize) {
        self.orphan_count += 1;
        if self.orphans.len() < limit {
            self.orphans.push(o.clone());
        }
    }

    /// Counts `u`, and lists it while fewer than `limit` are.
    fn count_unclaimed(&mut self, u: &UnclaimedDocument, limit: usize) {
        self.unclaimed_count += 1;
        if self.unclaimed.len() < limit {
            self.unclaimed.push(u.clone());
        }
    }
}

/// What [`Claims::repair`] found and did.
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

/// The action returned by [`Claims::check`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Check<'a> {
    claims: &'a Claims,
    limit: usize,
}

impl Check<'_> {
    /// The most items of each kind the report lists (default [`DEFAULT_LIMIT`]); all are
    /// counted.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

impl<'a> IntoFuture for Check<'a> {
    type Output = Result<ClaimsReport>;
    type IntoFuture = BoxFuture<'a, Result<ClaimsReport>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let claims = self.claims;
            claims.same_database()?;
            let mut report = claims.empty_report();
            claims.shared(&mut report, self.limit).await?;
            claims
                .orphans(|o| report.count_orphan(&o, self.limit))
                .await?;
            claims
                .unclaimed(|u| report.count_unclaimed(&u, self.limit))
                .await?;
            report.without_id = claims.without_id().await?;
            Ok(report)
        })
    }
}

/// The action returned by [`Claims::repair`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Repair<'a> {
    claims: &'a Claims,
    limit: usize,
    prune: bool,
    dry_run: bool,
}

impl Repair<'_> {
    /// Also deletes the claims that no document holds (whose document is gone, or holds
    /// another ID now): their IDs may then be given again.
    pub fn prune(mut self, prune: bool) -> Self {
        self.prune = prune;
        self
    }

    /// Finds what would be written and deleted, and writes nothing.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// The most items of each kind the report lists (default [`DEFAULT_LIMIT`]).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

impl<'a> IntoFuture for Repair<'a> {
    type Output = Result<RepairReport>;
    type IntoFuture = BoxFuture<'a, Result<RepairReport>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let claims = self.claims;
            let limit = self.limit;
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
            let write = !self.dry_run;
            let mut pruned = 0;
            if self.prune && write {
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
                if self.prune {
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
                prune: self.prune,
                dry_run: self.dry_run,
            })
        })
    }
}

impl Claims {
    fn empty_report(&self) -> ClaimsReport {
        ClaimsReport {
            collection: self.target.namespace().to_string(),
            proxy: self.proxy.namespace().to_string(),
            unclaimed: Vec::new(),
            unclaimed_count: 0,
            orphans: Vec::new(),
            orphan_count: 0,
            shared: Vec::new(),
            shared_count: 0,
            without_id: 0,
        }
    }

    /// `$lookup` reads a collection of the same database only.
    fn same_database(&self) -> Result<()> {
        let (target, proxy) = (self.target.namespace(), self.proxy.namespace());
        if target.db != proxy.db {
            return Err(Error::InvalidArgument {
                argument: "proxy",
                reason: format!(
                    "the proxy collection `{proxy}` must be in the database of `{target}`"
                ),
            });
        }
        Ok(())
    }

    /// The key of a claim of the document `base` names (`$` for the stage's document,
    /// `$$this.` for a variable's): the ID, or the scope values (`null` when missing) and the
    /// ID.
    fn key(&self, base: &str) -> Bson {
        let id = Bson::String(format!("{base}{}", self.field));
        if self.scope.is_empty() {
            return id;
        }
        let mut key: Document = self
            .scope
            .iter()
            .map(|f| {
                let value = doc! { "$ifNull": [format!("{base}{f}"), Bson::Null] };
                (f.clone(), Bson::Document(value))
            })
            .collect();
        key.insert("id", id);
        Bson::Document(key)
    }

    /// The documents that hold the ID field.
    fn with_id(&self) -> Document {
        doc! { "$match": { &self.field: { "$exists": true } } }
    }

    /// The next row of `cursor`, reading `coll`.
    async fn next(
        &self,
        cursor: &mut Cursor<Document>,
        coll: &Collection<Document>,
    ) -> Result<Option<Document>> {
        cursor
            .try_next()
            .await
            .map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::CheckClaims))
    }

    /// Runs `pipeline` on `coll`.
    async fn aggregate(
        &self,
        coll: &Collection<Document>,
        pipeline: Vec<Document>,
    ) -> Result<Cursor<Document>> {
        coll.aggregate(pipeline)
            .allow_disk_use(true)
            .await
            .map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::CheckClaims))
    }

    /// The IDs held by two or more documents, into `report` (at most `limit` listed).
    async fn shared(&self, report: &mut ClaimsReport, limit: usize) -> Result<()> {
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
    async fn orphan_cursor(&self) -> Result<Cursor<Document>> {
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
    async fn orphans(&self, mut each: impl FnMut(OrphanClaim)) -> Result<()> {
        let mut cursor = self.orphan_cursor().await?;
        while let Some(row) = self.next(&mut cursor, &self.proxy).await? {
            each(orphan(row));
        }
        Ok(())
    }

    /// The documents without a claim of their ID, as a stream of rows `{ _id, key, claim }`.
    async fn unclaimed_cursor(&self) -> Result<Cursor<Document>> {
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
    async fn unclaimed(&self, mut each: impl FnMut(UnclaimedDocument)) -> Result<()> {
        let mut cursor = self.unclaimed_cursor().await?;
        while let Some(row) = self.next(&mut cursor, &self.target).await? {
            each(unclaimed(row));
        }
        Ok(())
    }

    /// How many documents have no ID field.
    async fn without_id(&self) -> Result<u64> {
        self.target
            .count_documents(doc! { &self.field: { "$exists": false } })
            .await
            .map_err(|e| Error::from_driver_on(e, self.target.namespace(), Access::CheckClaims))
    }

    /// Deletes `orphans`, each only if it still names the same document; returns how many
    /// were deleted.
    async fn delete(&self, orphans: &[OrphanClaim]) -> Result<u64> {
        if orphans.is_empty() {
            return Ok(0);
        }
        let each: Vec<Document> = orphans
            .iter()
            .map(|o| doc! { "_id": o.id.clone(), "doc": o.doc.clone() })
            .collect();
        let deleted = self
            .proxy
            .delete_many(doc! { "$or": each })
            .await
            .map_err(|e| self.write_error(e))?;
        Ok(deleted.deleted_count)
    }

    /// Points the stale claim of `u`'s key, naming `other`, at `u`'s document; false when
    /// that claim no longer names `other` (pruned, or changed meanwhile).
    async fn repoint(&self, u: &UnclaimedDocument, other: &Bson) -> Result<bool> {
        let updated = self
            .proxy
            .update_one(
                doc! { "_id": u.id.clone(), "doc": other.clone() },
                doc! { "$set": { "doc": u.doc.clone() } },
            )
            .await
            .map_err(|e| self.write_error(e))?;
        Ok(updated.modified_count == 1)
    }

    /// Inserts the claims of `docs`; returns how many were inserted, and how many met a claim
    /// another writer inserted meanwhile.
    async fn insert(&self, docs: &[UnclaimedDocument]) -> Result<(u64, u64)> {
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
                            .filter(|w| crate::error::DUPLICATE_KEY_CODES.contains(&w.code))
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

    fn write_error(&self, e: mongodb::error::Error) -> Error {
        Error::from_driver_on(e, self.proxy.namespace(), Access::RepairClaims)
    }
}

/// An orphan claim from a row of [`Claims::orphan_cursor`].
fn orphan(mut row: Document) -> OrphanClaim {
    let exists = row.get_bool("exists").unwrap_or(false);
    OrphanClaim {
        id: row.remove("_id").unwrap_or(Bson::Null),
        doc: row.remove("doc").unwrap_or(Bson::Null),
        holds: exists.then(|| row.remove("found").unwrap_or(Bson::Null)),
    }
}

/// An unclaimed document from a row of [`Claims::unclaimed_cursor`].
fn unclaimed(mut row: Document) -> UnclaimedDocument {
    UnclaimedDocument {
        doc: row.remove("_id").unwrap_or(Bson::Null),
        id: row.remove("key").unwrap_or(Bson::Null),
        claimed_for: row.remove("claim"),
    }
}
