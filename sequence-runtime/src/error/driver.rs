//! The one place where the driver's errors become this crate's.
//!
//! Every path that talks to the server maps its errors with [`Error::from_driver_on`], naming
//! the collection and what the operation needed ([`Access`]), so that one cause gives one error
//! whichever path meets it: a missing privilege is [`Error::Unauthorized`], a duplicate key
//! [`Error::DuplicateKey`], a transaction on a server without transactions
//! [`Error::TransactionsUnsupported`]. The paths that retry ask the predicates below what kind
//! of failure they met (an unknown outcome, a transient transaction error, a collision on
//! `_id`) before they map it.

use std::fmt::Display;

use mongodb::error::{
    ErrorKind, WriteFailure, RETRYABLE_WRITE_ERROR, TRANSIENT_TRANSACTION_ERROR,
    UNKNOWN_TRANSACTION_COMMIT_RESULT,
};

use super::Error;

/// Duplicate-key error codes the server uses (11000, its legacy twin 11001, and 12582 from
/// older `mongos` versions).
pub(crate) const DUPLICATE_KEY_CODES: [i32; 3] = [11000, 11001, 12582];

/// The server's error code for a missing privilege (`Unauthorized`).
const UNAUTHORIZED: i32 = 13;

/// The server's codes for an index that exists with the same keys under another name or other
/// options (`IndexOptionsConflict`, `IndexKeySpecsConflict`).
const INDEX_CONFLICTS: [i32; 2] = [85, 86];

/// The server's `IllegalOperation` error code, which it gives to a transaction on a server that
/// is not a replica set member or `mongos`.
const ILLEGAL_OPERATION: i32 = 20;

/// The server's `WriteConflict` error code: a statement of a transaction wrote a document that
/// another transaction holds (or wrote after this one's snapshot).
const WRITE_CONFLICT: i32 = 112;

/// What an operation needed of its collection: [`Error::Unauthorized`] names it when the
/// server refuses the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reserving IDs from a counter.
    Reserve,
    /// Reading a counter.
    Read,
    /// Setting a counter (`set_next`, `reset`).
    Set,
    /// Giving values back to a counter (`release`).
    Release,
    /// Deleting counters (`delete`, `purge_periods_before`).
    Delete,
    /// Creating the unique index the counters of a layout or a filter need.
    Index,
    /// Creating the index of a scoped proxy collection's claims.
    ProxyIndex,
    /// Creating the unique index of a model's ID field (with its scope fields).
    IdIndex,
    /// Listing the indexes of a collection, for `ensure_indexes`.
    ListIndexes,
    /// Reading the records of the sequences' settings.
    ReadRecords,
    /// Inserting documents.
    Insert,
    /// Reading back a document whose insert had an unknown outcome.
    Confirm,
    /// Finding the IDs already stored in a target collection (skipping ahead, syncing).
    Find,
    /// Reading a target collection and its proxy collection to check the claims.
    CheckClaims,
    /// Writing and deleting claims in a proxy collection (`repair`).
    RepairClaims,
}

impl Access {
    /// The privileges the operation needs on its collection, and what for.
    pub(crate) const fn needs(self) -> &'static str {
        match self {
            Access::Reserve => "the `find`, `update` and `insert` actions on it to reserve IDs",
            Access::Read => "the `find` action on it to read a counter",
            Access::Set => "the `update` and `insert` actions on it to set a counter",
            Access::Release => "the `update` action on it to give values back",
            Access::Delete => "the `remove` action on it to delete counters",
            Access::Index => {
                "the `createIndex` action on it for the unique index that the counters of its \
                 layout need (mongoose-sequence's, typegoose's, mongoose-auto-increment's, or a \
                 filter's)"
            }
            Access::ProxyIndex => {
                "the `createIndex` action on it for the index of the claims of a scoped \
                 `unique = \"proxy\"` model"
            }
            Access::IdIndex => {
                "the `createIndex` action on it for the unique index of the ID field, by which \
                 inserts detect a stored ID"
            }
            Access::ReadRecords => "the `find` action on it to read the sequences' settings",
            Access::ListIndexes => {
                "the `listIndexes` action on it to find the indexes a model needs"
            }
            Access::Insert => "the `insert` action on it to insert documents",
            Access::Confirm => {
                "the `find` action on it to confirm an insert whose outcome was unknown"
            }
            Access::Find => "the `find` action on it to find the IDs already stored",
            Access::CheckClaims => "the `find` action on it to check the claims of IDs",
            Access::RepairClaims => {
                "the `insert`, `update` and `remove` actions on it to repair the claims of IDs"
            }
        }
    }
}

impl Error {
    /// Whether this error is (or wraps) a duplicate-key error.
    pub fn is_duplicate_key(&self) -> bool {
        match self {
            Error::DuplicateKey { .. } => true,
            Error::Mongo(e) => is_duplicate_key(e),
            _ => false,
        }
    }

    /// The error of an operation on `namespace` that needed `access`: the server's
    /// `Unauthorized` becomes [`Error::Unauthorized`] naming the collection and the
    /// privileges, its refusal of a transaction [`Error::TransactionsUnsupported`], and the
    /// rest as [`From`] makes it.
    pub(crate) fn from_driver_on(
        err: mongodb::error::Error,
        namespace: impl Display,
        access: Access,
    ) -> Self {
        match code(&err) {
            Some(UNAUTHORIZED) => Error::Unauthorized {
                namespace: namespace.to_string(),
                needs: access.needs(),
                source: err,
            },
            Some(ILLEGAL_OPERATION) => Error::TransactionsUnsupported {
                needed_by: "gapless numbering",
                detail: err.to_string(),
            },
            _ => Error::from(err),
        }
    }
}

/// A driver error becomes [`Error::DuplicateKey`] when it is a duplicate key, else
/// [`Error::Mongo`], so that `?` on a driver call in code that returns this crate's
/// [`Result`](crate::Result) keeps the one mapping:
///
/// ```no_run
/// # async fn f(client: mongodb::Client) -> sequence_runtime::Result<()> {
/// let mut session = client.start_session().await?;
/// session.start_transaction().await?;
/// # Ok(()) }
/// ```
impl From<mongodb::error::Error> for Error {
    fn from(err: mongodb::error::Error) -> Self {
        match duplicate_key_message(&err) {
            Some(message) => Error::DuplicateKey {
                message,
                source: err,
            },
            None => Error::Mongo(err),
        }
    }
}

/// The server's error code of a command or write error.
fn code(err: &mongodb::error::Error) -> Option<i32> {
    match &*err.kind {
        ErrorKind::Command(e) => Some(e.code),
        ErrorKind::Write(WriteFailure::WriteError(e)) => Some(e.code),
        _ => None,
    }
}

/// Whether a driver error says that an index of the same keys exists with other options or
/// another name.
pub(crate) fn is_index_options_conflict(err: &mongodb::error::Error) -> bool {
    code(err).is_some_and(|c| INDEX_CONFLICTS.contains(&c))
}

/// Whether a driver error is a duplicate-key error (codes 11000, 11001, 12582), in any of the
/// forms the driver reports it: a write error, a command error (`findAndModify`), or inside the
/// errors of `insert_many` and `bulk_write`.
pub(crate) fn is_duplicate_key(err: &mongodb::error::Error) -> bool {
    duplicate_key_message(err).is_some()
}

fn duplicate_key_message(err: &mongodb::error::Error) -> Option<String> {
    let dup = |code: i32| DUPLICATE_KEY_CODES.contains(&code);
    match &*err.kind {
        ErrorKind::Write(WriteFailure::WriteError(e)) if dup(e.code) => Some(e.message.clone()),
        ErrorKind::Command(e) if dup(e.code) => Some(e.message.clone()),
        ErrorKind::InsertMany(e) => e
            .write_errors
            .iter()
            .flatten()
            .find(|w| dup(w.code))
            .map(|w| w.message.clone()),
        ErrorKind::BulkWrite(e) => e
            .write_errors
            .values()
            .find(|w| dup(w.code))
            .map(|w| w.message.clone()),
        _ => None,
    }
}

/// The index and the key fields a duplicate-key message names (`E11000 duplicate key error
/// collection: shop.orders index: tenant_1_number_1 dup key: { tenant: "a", number: 5 }`):
/// the driver exposes neither `keyPattern` nor `keyValue`, so they are read from the message.
pub(crate) fn duplicate_key_fields(message: &str) -> Option<(&str, Vec<&str>)> {
    let index = message.split(" index: ").nth(1)?.split(' ').next()?;
    let key = message.split(" dup key: { ").nth(1)?;
    // Field names up to `: `, then values to skip: strings (with escapes), and nested
    // documents, arrays and calls (`ObjectId('…')`) to the matching bracket.
    let mut fields = Vec::new();
    let mut rest = key;
    loop {
        rest = rest.trim_start();
        if rest.starts_with('}') || rest.is_empty() {
            break;
        }
        let colon = rest.find(": ")?;
        fields.push(rest[..colon].trim_matches('"'));
        rest = &rest[colon + 2..];
        let (mut depth, mut quote, mut escaped) = (0_i32, None, false);
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match (quote, c) {
                (Some(_), _) if escaped => escaped = false,
                (Some(_), '\\') => escaped = true,
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '{' | '[' | '(') => depth += 1,
                (None, '}' | ']' | ')') if depth > 0 => depth -= 1,
                (None, ',' | '}') if depth == 0 => {
                    end = i;
                    break;
                }
                (None, _) => {}
            }
        }
        rest = rest[end..].strip_prefix(',').unwrap_or(&rest[end..]);
    }
    Some((index, fields))
}

/// The position and the message of the duplicate key that stopped an ordered `insert_many`,
/// if a duplicate key did.
pub(crate) fn insert_many_duplicate(err: &mongodb::error::Error) -> Option<(usize, &str)> {
    match &*err.kind {
        ErrorKind::InsertMany(e) if e.write_concern_error.is_none() => e
            .write_errors
            .as_ref()?
            .iter()
            .find(|w| DUPLICATE_KEY_CODES.contains(&w.code))
            .map(|w| (w.index, w.message.as_str())),
        _ => None,
    }
}

/// The position of the document whose write error failed an ordered `insert_many`, unless the
/// error is of another kind (a write concern error, a network error, ...).
pub(crate) fn insert_many_failed_at(err: &mongodb::error::Error) -> Option<usize> {
    match &*err.kind {
        ErrorKind::InsertMany(e) => e.write_errors.as_ref()?.first().map(|w| w.index),
        _ => None,
    }
}

/// Whether a write error is a duplicate key on the `_id` index. The server names the index in
/// its message (`E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 42 }`);
/// the driver exposes no `keyPattern`. The `_id` index is always named `_id_`, and no other
/// index of a collection can have that name.
fn is_id_collision(code: i32, message: &str) -> bool {
    DUPLICATE_KEY_CODES.contains(&code) && message.contains(" index: _id_ ")
}

/// Whether the error of an `insert_one` is a duplicate key on `_id`.
pub(crate) fn collided_on_id(err: &mongodb::error::Error) -> bool {
    matches!(&*err.kind, ErrorKind::Write(WriteFailure::WriteError(e)) if is_id_collision(e.code, &e.message))
}

/// The positions of the documents of an `insert_many` that collided on `_id`, if that is all
/// that went wrong.
pub(crate) fn collisions_on_id(err: &mongodb::error::Error) -> Option<Vec<usize>> {
    match &*err.kind {
        ErrorKind::InsertMany(e) if e.write_concern_error.is_none() => e
            .write_errors
            .as_ref()?
            .iter()
            .map(|w| is_id_collision(w.code, &w.message).then_some(w.index))
            .collect(),
        _ => None,
    }
}

/// Whether a failed write may nevertheless have been applied, or was not applied for a reason
/// that goes away (a connection dropped, an election, an unconfirmed write concern, also of an
/// `insert_many` without a write error).
pub(crate) fn outcome_unknown(err: &mongodb::error::Error) -> bool {
    err.contains_label(RETRYABLE_WRITE_ERROR)
        || matches!(
            &*err.kind,
            ErrorKind::Io(_)
                | ErrorKind::ConnectionPoolCleared { .. }
                | ErrorKind::Write(WriteFailure::WriteConcernError(_))
        )
        || insert_many_unconfirmed(err)
}

/// Whether an `insert_many` failed only on its write concern: no document was refused.
fn insert_many_unconfirmed(err: &mongodb::error::Error) -> bool {
    matches!(&*err.kind, ErrorKind::InsertMany(e) if e.write_concern_error.is_some() && e.write_errors.as_ref().is_none_or(Vec::is_empty))
}

/// Whether a statement of a transaction met a document that another transaction holds.
pub(crate) fn write_conflict(err: &mongodb::error::Error) -> bool {
    code(err) == Some(WRITE_CONFLICT)
}

/// Whether a transaction failed in a way that retrying the whole transaction may get past.
pub(crate) fn transaction_transient(err: &mongodb::error::Error) -> bool {
    err.contains_label(TRANSIENT_TRANSACTION_ERROR)
}

/// Whether a statement inside a transaction (not its commit) failed in a way that retrying the
/// whole transaction may get past: a transient transaction error, and also an error the server
/// marks retryable (a node stepping down) or a write concern error, after which the aborted
/// transaction has committed nothing.
pub(crate) fn statement_transient(err: &mongodb::error::Error) -> bool {
    transaction_transient(err)
        || err.contains_label(RETRYABLE_WRITE_ERROR)
        || matches!(
            &*err.kind,
            ErrorKind::Write(WriteFailure::WriteConcernError(_))
        )
        || insert_many_unconfirmed(err)
}

/// Whether the result of a commit is unknown, so that the commit alone may be retried.
pub(crate) fn commit_unknown(err: &mongodb::error::Error) -> bool {
    err.contains_label(UNKNOWN_TRANSACTION_COMMIT_RESULT)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mongodb::bson::{doc, from_document};
    use mongodb::error::CommandError;

    use super::*;

    fn command(code: i32, message: &str) -> mongodb::error::Error {
        let e: CommandError =
            from_document(doc! { "code": code, "codeName": "X", "errmsg": message }).unwrap();
        ErrorKind::Command(e).into()
    }

    #[test]
    fn unauthorized_names_the_collection_and_the_privileges() {
        let refused = command(
            13,
            "not authorized on shop to execute command { findAndModify: \"counters\" }",
        );
        let e = Error::from_driver_on(refused, "shop.counters", Access::Reserve);
        let text = e.to_string();
        assert!(
            text.starts_with("not authorized on `shop.counters`: the user needs"),
            "{text}"
        );
        assert!(
            text.contains("`find`, `update` and `insert` actions on it to reserve IDs"),
            "{text}"
        );
        let source = std::error::Error::source(&e).unwrap().to_string();
        assert!(source.contains("not authorized"), "{source}");
    }

    #[test]
    fn every_cause_has_its_error() {
        let dup = command(
            11000,
            "E11000 duplicate key error collection: a.b index: _id_",
        );
        assert!(matches!(
            Error::from_driver_on(dup, "a.b", Access::Insert),
            Error::DuplicateKey { .. }
        ));
        let illegal = command(
            20,
            "Transaction numbers are only allowed on a replica set member or mongos",
        );
        assert!(matches!(
            Error::from_driver_on(illegal, "a.b", Access::Insert),
            Error::TransactionsUnsupported { .. }
        ));
        let other = mongodb::error::Error::custom("nope");
        assert!(!is_duplicate_key(&other));
        assert!(matches!(
            Error::from_driver_on(other, "a.b", Access::Insert),
            Error::Mongo(_)
        ));
    }

    #[test]
    fn duplicate_key_messages_name_their_index_and_fields() {
        let m = "E11000 duplicate key error collection: shop.orders index: tenant_1_number_1 \
                 dup key: { tenant: \"a, b: {c}\", number: 5 }";
        assert_eq!(
            duplicate_key_fields(m),
            Some(("tenant_1_number_1", vec!["tenant", "number"]))
        );
        let m = "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 42 }";
        assert_eq!(duplicate_key_fields(m), Some(("_id_", vec!["_id"])));
        let m = "E11000 duplicate key error collection: db.c index: a_1 dup key: { a: \
                 ObjectId('65a1b2c3d4e5f60718293a4b'), b: { x: [1, 2] }, c: \"q\\\"x\" }";
        assert_eq!(duplicate_key_fields(m), Some(("a_1", vec!["a", "b", "c"])));
        assert_eq!(duplicate_key_fields("no such thing"), None);
    }

    #[test]
    fn only_the_id_index_counts_as_a_collision() {
        assert!(is_id_collision(
            11000,
            "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 42 }"
        ));
        assert!(!is_id_collision(
            11000,
            "E11000 duplicate key error collection: db.c index: email_1 dup key: { email: \"a\" }"
        ));
        assert!(!is_id_collision(
            11000,
            "E11000 duplicate key error collection: db.c index: my_id_1 dup key: { my_id: 1 }"
        ));
        assert!(!is_id_collision(121, "index: _id_ "));
    }

    #[test]
    fn unknown_outcomes_are_told_apart_from_final_errors() {
        let io: mongodb::error::Error =
            ErrorKind::Io(Arc::new(std::io::ErrorKind::ConnectionReset.into())).into();
        assert!(outcome_unknown(&io));
        let wce: mongodb::error::WriteConcernError =
            from_document(doc! { "code": 64, "errmsg": "waiting for replication timed out" })
                .unwrap();
        let wce: mongodb::error::Error =
            ErrorKind::Write(WriteFailure::WriteConcernError(wce)).into();
        assert!(outcome_unknown(&wce));
        assert!(!outcome_unknown(&command(11000, "dup")));
        let insert_many = |e: mongodb::bson::Document| -> mongodb::error::Error {
            ErrorKind::InsertMany(from_document(e).unwrap()).into()
        };
        let concern = doc! { "code": 64, "errmsg": "waiting for replication timed out" };
        let unconfirmed = insert_many(doc! { "writeConcernError": concern.clone() });
        assert!(outcome_unknown(&unconfirmed) && statement_transient(&unconfirmed));
        let refused = doc! { "index": 0, "code": 11000, "errmsg": "dup" };
        let refused = insert_many(doc! { "writeErrors": [refused], "writeConcernError": concern });
        assert!(!outcome_unknown(&refused) && !statement_transient(&refused));
        assert!(!transaction_transient(&io) && !commit_unknown(&io));
    }

    #[test]
    fn write_conflicts_are_told_apart() {
        assert!(write_conflict(&command(112, "WriteConflict error")));
        assert!(!write_conflict(&command(11000, "dup")));
    }
}
