//! The one error type of the crate. [`driver`] turns the driver's errors into it.

mod driver;

pub(crate) use driver::{
    collided_on_id, collisions_on_id, commit_unknown, duplicate_key_fields, insert_many_duplicate,
    insert_many_failed_at, outcome_unknown, statement_transient, transaction_transient, Access,
};
pub use driver::{is_duplicate_key, DUPLICATE_KEY_CODES};

use mongo_sequence_rules::names::{self, NameError};
use mongo_sequence_rules::{Problem, Violation};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    #[error("{}", names::describe(what, name, reason))]
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

    /// The ID given to a document is already used by a stored document (an imported or
    /// restored one, or another writer's), so its counter is behind the stored IDs. Outside a
    /// caller's session, inserts skip ahead of the stored IDs on their own; this error means
    /// they could not, and nothing was inserted.
    #[error(
        "ID {id} is already taken in `{namespace}` by a stored document, so the counter \
         `{counter}` is behind the stored IDs{hint}"
    )]
    IdTaken {
        /// The target collection, as `database.collection`.
        namespace: String,
        /// The ID, as the document held it.
        id: String,
        /// The counter's key.
        counter: String,
        /// Why the insert did not skip ahead, and what to do (starts with `; `).
        hint: &'static str,
        /// The duplicate-key error.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// A stored document holds an ID whose counter value is beyond the counter's `max`: the
    /// counter cannot move past it. Nothing was written.
    #[error(
        "`{namespace}` stores the value {stored} of counter `{counter}`, beyond its `max` \
         ({max}): the counter cannot move past it; raise `max`, or change that document's ID"
    )]
    StoredBeyondMax {
        /// The target collection, as `database.collection`.
        namespace: String,
        /// The counter's key.
        counter: String,
        /// The stored counter value.
        stored: i64,
        /// The counter's `max`.
        max: i64,
    },

    /// Any other error from the MongoDB driver.
    #[error(transparent)]
    Mongo(#[from] mongodb::error::Error),
}

impl From<NameError> for Error {
    fn from(e: NameError) -> Self {
        Error::InvalidName {
            what: e.kind.what(),
            name: e.name,
            reason: e.reason,
        }
    }
}

impl From<Violation> for Error {
    /// A broken configuration rule: [`Error::InvalidName`] for a name, else
    /// [`Error::InvalidOptions`] with the rule's message.
    fn from(v: Violation) -> Self {
        match v.problem {
            Problem::Name(e) => e.into(),
            Problem::Invalid(message) => Error::InvalidOptions(message),
            _ => Error::InvalidOptions(v.to_string()),
        }
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
}
