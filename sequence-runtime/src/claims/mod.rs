//! Checking and repairing the claims of a proxy collection (`unique = "proxy"`): documents
//! without a claim, claims without a document, and IDs held by two documents.
//!
//! A model with `unique = "proxy"` writes, with each document, a claim
//! `{ _id: <key>, doc: <the document's _id> }` in its proxy collection, the key being the ID, or
//! for a scoped model `{ <stored scope field>: value, …, id: <ID> }`. Documents written before
//! the option was turned on, or by another writer, have no claim; a deleted document (or one
//! whose ID was changed by hand) leaves its claim behind. [`Claims::check`] finds both, and the
//! IDs that two or more documents hold; [`Claims::repair`] claims what is unclaimed and, with
//! [`prune`](crate::action::RepairClaims::prune), deletes the claims no document holds.
//!
//! Each is a few aggregations read as streams (a `$lookup` of the claims of the documents, a
//! `$lookup` of the documents of the claims, a `$group` of the IDs on the server), so that
//! memory stays bounded whatever the size of the collections: a report lists at most
//! [`limit`](crate::action::CheckClaims::limit) items of each kind and counts all of them, and `repair` writes as it
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

mod check;
mod claims_report;
mod collections;
mod repair;

pub(crate) use check::check;
pub use claims_report::{ClaimsReport, OrphanClaim, RepairReport, UnclaimedDocument};
pub(crate) use collections::index_keys;
pub use collections::Claims;
pub(crate) use repair::repair;

/// The items of each kind a report lists by default.
pub const DEFAULT_LIMIT: usize = 100;
