//! The trait `#[derive(SequentialId)]` implements, and the insert paths of each strategy that
//! its actions take:
//!
//! - `sequential_id.rs`: the [`SequentialId`] trait;
//! - `dispatch.rs`: awaiting a model's action, by strategy;
//! - `in_session.rs`: the paths of writes in the caller's session;
//! - `insert.rs`: the insert of one document, sent again while its outcome is unknown;
//! - `counter_ids.rs`: inserts of the counter strategies, a number per document;
//! - `cached_id.rs`: the hot path of batched counters;
//! - `skip_ahead.rs`: inserts that meet IDs already stored move the counter past them;
//! - `gapless.rs`: the counter update and the insert in one transaction;
//! - `gapless_group.rs`: concurrent gapless inserts committed together;
//! - `round_member.rs`: an insert waiting in a group, and how a round writes its number;
//! - `first_values.rs`: scope values' first values taken and inserted in rounds, several
//!   scope values at once;
//! - `transaction.rs`: the retries and commits of the paths that write in a transaction;
//! - `random_ids.rs`: inserts that draw again on a collision;
//! - `generated_ids.rs`: inserts of UUIDs and ObjectIds;
//! - `proxy.rs`: `unique = "proxy"`, a claim and the write in one transaction;
//! - `upsert.rs`, `upsert_parts.rs`: update the document a filter matches, or insert with a
//!   new ID;
//! - `document_scope.rs`: the counter of a document's scope;
//! - `handle.rs`: a model's `Sequence`, built once per collection handle and thread;
//! - `indexes.rs`: the indexes a model needs, created on request, and the warning of a missing
//!   one.

mod cached_id;
mod counter_ids;
mod counter_turns;
mod dispatch;
mod document_scope;
mod first_values;
mod gapless;
mod gapless_group;
mod generated_ids;
mod handle;
mod in_session;
mod indexes;
mod insert;
mod proxy;
mod proxy_group;
mod random_ids;
mod round_member;
mod sequential_id;
mod skip_ahead;
mod transaction;
mod upsert;
mod upsert_parts;

pub use sequential_id::{scope_value, SequentialId};
