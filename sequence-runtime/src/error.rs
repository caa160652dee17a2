//! The one error type of the crate, and helpers to classify driver errors.

use mongodb::error::{ErrorKind, WriteFailure};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Duplicate-key error codes the server uses (11000, its legacy twin 11001, and 12582 from
/// older `mongos` versions).
pub const DUPLICATE_KEY_CODES: [i32; 3] = [11000, 11001, 12582];

/// Everything that can go wrong while allocating an ID or inserting a document with one.
///
/// Every variant says what happened and, where there is one, what to do about it. Errors that
/// come from the server are wrapped in [`Error::Mongo`] with the driver's error as
/// [`source`](std::error::Error::source).
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The counter has no values left below its `max`; nothing was written. For a sharded
    /// sequence, `max - last` is the most values one shard still holds (0 when all are full).
    #[error(
        "sequence `{counter}` is exhausted: {requested} more value(s) requested but the last issued \
         value is {last} and the maximum is {max}; raise `max` or use another counter"
    )]
    Exhausted {
        /// The counter's key, as stored in the counters collection.
        counter: String,
        /// How many values the reservation asked for.
        requested: u64,
        /// The last value issued (or the value right before the first one, if none was).
        last: i64,
        /// The configured maximum.
        max: i64,
    },

    /// The counter document holds something this crate cannot use; it was left untouched.
    #[error(
        "counter document `{counter}` in `{collection}` is corrupt: {reason}; fix or delete it \
         (see `Sequence::set_next`)"
    )]
    CorruptCounter {
        /// The counter's key.
        counter: String,
        /// The counters collection.
        collection: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A counter, collection or field name that MongoDB would reject or misread.
    #[error("invalid {what} `{name}`: {reason}")]
    InvalidName {
        /// Which kind of name (`counter name`, `collection name`, `field name`).
        what: &'static str,
        /// The rejected name (with NUL bytes escaped).
        name: String,
        /// Why it is rejected.
        reason: &'static str,
    },

    /// Options that contradict each other (for example `start > max`).
    #[error("invalid sequence options: {0}")]
    InvalidOptions(String),

    /// A value that does not fit the ID field's type.
    #[error("ID value {value} does not fit the ID field type `{target}`")]
    IdOutOfRange {
        /// The allocated value.
        value: i64,
        /// The Rust type of the ID field.
        target: &'static str,
    },

    /// A duplicate-key error that reached the caller, for example from another unique index of
    /// the target collection. The document was not inserted.
    #[error("duplicate key: {message}")]
    DuplicateKey {
        /// The server's message, naming the index and the key.
        message: String,
        /// The driver error.
        #[source]
        source: mongodb::error::Error,
    },

    /// The admin operation would move the counter backwards (which could reissue IDs).
    #[error(
        "refusing to move sequence `{counter}` backwards from last issued {current} to next {requested}; \
         pass `force` if no document uses these IDs"
    )]
    WouldMoveBackwards {
        /// The counter's key.
        counter: String,
        /// The last issued value.
        current: i64,
        /// The next value asked for.
        requested: i64,
    },

    /// A gapless sequence (or a counter joining a transaction) needs multi-document
    /// transactions, which this deployment does not offer. Nothing was written.
    #[error(
        "gapless numbering needs transactions, which need a replica set (a single-node one is \
         enough) or a sharded cluster: {detail}"
    )]
    TransactionsUnsupported {
        /// What the server or store said.
        detail: String,
    },

    /// A gapless insert kept failing with transient transaction errors until its deadline.
    #[error(
        "gapless insert into sequence `{counter}` gave up after {attempts} attempt(s) in {elapsed_ms} ms \
         of transient transaction errors; raise the transaction timeout or reduce contention"
    )]
    TransactionTimeout {
        /// The counter's key.
        counter: String,
        /// Transactions tried.
        attempts: u32,
        /// Time spent.
        elapsed_ms: u64,
        /// The last transient error.
        #[source]
        source: mongodb::error::Error,
    },

    /// A counter document exists with other fixed fields than this configuration gives it
    /// (for a sharded sequence: another slice of the ID space); it was left untouched.
    #[error(
        "counter document `{counter}` in `{collection}` holds {found} but this configuration \
         expects {expected}; the slices of a sharded sequence in use cannot change (that would \
         issue IDs twice): keep `shards`, `digits`, `start` and `max`, or use another `name`"
    )]
    CounterMismatch {
        /// The counter's key.
        counter: String,
        /// The counters collection.
        collection: String,
        /// The fields this configuration expects.
        expected: String,
        /// The fields the document holds.
        found: String,
    },

    /// Every random draw collided with an existing ID.
    #[error(
        "no free random ID for `{collection}` after {attempts} draws in {start}..={max}: the \
         space is (nearly) full; widen it (`digits`, `start`, `max`) or raise `retries`"
    )]
    RandomIdsExhausted {
        /// The target collection.
        collection: String,
        /// How many IDs were drawn for the document that got none.
        attempts: u32,
        /// The smallest value drawn.
        start: i64,
        /// The largest value drawn.
        max: i64,
    },

    /// The operating system's random number generator failed.
    #[error("the operating system's random number generator failed: {0}")]
    Random(String),

    /// An operation the sequence's strategy does not have (for example `set_next` on random
    /// IDs, or `next_id` on a gapless sequence).
    #[error("`{operation}` is not available for `{strategy}` sequences{hint}")]
    Unsupported {
        /// The operation.
        operation: &'static str,
        /// The strategy's name, as written in `#[seq(strategy = "...")]`, or `gapless`.
        strategy: &'static str,
        /// What to do instead, if anything (starts with `; `).
        hint: &'static str,
    },

    /// An ID field type that cannot hold what the strategy makes (for example a UUID in an
    /// `i64` field).
    #[error("the ID field type `{target}` cannot hold {made}; see the ID types of each strategy")]
    IdTypeMismatch {
        /// What the strategy made (`a counter value`, `a UUID`, `an ObjectId`).
        made: &'static str,
        /// The Rust type of the ID field.
        target: &'static str,
    },

    /// The sequence is scoped: which counter to use depends on the values of its `scope`
    /// fields, so an ID cannot be taken without them.
    #[error(
        "sequence `{counter}` is scoped by {fields}: take IDs for a document with \
         `insert_with_id` or `next_id_for`, or bind values with `Sequence::in_scope`"
    )]
    ScopeRequired {
        /// The sequence name.
        counter: String,
        /// The `scope` fields, for example `` `tenant`, `year` ``.
        fields: String,
    },

    /// The server refused the operation for lack of a privilege (its error 13, `Unauthorized`).
    /// Nothing was written by the refused operation.
    #[error(
        "not authorized on `{namespace}`: the user needs {needs} (MongoDB error 13, Unauthorized)"
    )]
    Unauthorized {
        /// The collection, as `database.collection`.
        namespace: String,
        /// The privileges the refused operation needs on that collection, and what for.
        needs: &'static str,
        /// The driver error, with the server's message.
        #[source]
        source: mongodb::error::Error,
    },

    /// Any other error from the MongoDB driver.
    #[error(transparent)]
    Mongo(#[from] mongodb::error::Error),
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

    /// Turns a driver error into [`Error::DuplicateKey`] when it is one, else [`Error::Mongo`].
    pub fn from_driver(err: mongodb::error::Error) -> Self {
        match duplicate_key_message(&err) {
            Some(message) => Error::DuplicateKey {
                message,
                source: err,
            },
            None => Error::Mongo(err),
        }
    }
}

/// The server's error code for a missing privilege (`Unauthorized`).
const UNAUTHORIZED: i32 = 13;

/// The privileges a reservation needs on the counters collection.
pub(crate) const COUNTER_PRIVILEGES: &str =
    "the `find`, `update` and `insert` actions on it to reserve IDs";
/// The privilege an insert needs on the target collection.
pub(crate) const INSERT_PRIVILEGES: &str = "the `insert` action on it to insert documents";

impl Error {
    /// Like [`Error::from_driver`], except that the server's `Unauthorized` becomes
    /// [`Error::Unauthorized`], naming the collection and the privileges the operation needs.
    pub(crate) fn from_driver_on(
        err: mongodb::error::Error,
        namespace: impl std::fmt::Display,
        needs: &'static str,
    ) -> Self {
        let code = match &*err.kind {
            ErrorKind::Command(e) => Some(e.code),
            ErrorKind::Write(WriteFailure::WriteError(e)) => Some(e.code),
            _ => None,
        };
        if code == Some(UNAUTHORIZED) {
            Error::Unauthorized {
                namespace: namespace.to_string(),
                needs,
                source: err,
            }
        } else {
            Error::from_driver(err)
        }
    }
}

/// Whether a driver error is a duplicate-key error (codes 11000, 11001, 12582), in any of the
/// forms the driver reports it: a write error, a command error (`findAndModify`), or inside the
/// errors of `insert_many` and `bulk_write`.
pub fn is_duplicate_key(err: &mongodb::error::Error) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhausted_names_the_counter_and_the_way_out() {
        let e = Error::Exhausted {
            counter: "invoice".into(),
            requested: 5,
            last: 98,
            max: 100,
        };
        let text = e.to_string();
        assert!(text.contains("`invoice`"), "{text}");
        assert!(text.contains("raise `max`"), "{text}");
        assert!(!e.is_duplicate_key());
    }

    #[test]
    fn unauthorized_names_the_collection_and_the_privileges() {
        let refused: mongodb::error::CommandError = mongodb::bson::from_document(
            mongodb::bson::doc! { "code": 13, "codeName": "Unauthorized", "errmsg": "not authorized on shop to execute command { findAndModify: \"counters\" }" },
        )
        .unwrap();
        let e = Error::from_driver_on(
            ErrorKind::Command(refused).into(),
            "shop.counters",
            COUNTER_PRIVILEGES,
        );
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
        assert!(source.contains("Unauthorized"), "{source}");

        let other = Error::from_driver_on(
            mongodb::error::Error::custom("nope"),
            "shop.orders",
            INSERT_PRIVILEGES,
        );
        assert!(matches!(other, Error::Mongo(_)));
    }

    #[test]
    fn custom_errors_are_not_duplicate_keys() {
        let err = mongodb::error::Error::custom("nope");
        assert!(!is_duplicate_key(&err));
        assert!(matches!(Error::from_driver(err), Error::Mongo(_)));
    }
}
