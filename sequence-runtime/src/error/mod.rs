//! The one error type of the crate, [`Error`]; every error of the driver passes one mapping
//! (`From<mongodb::error::Error>`) on its way into it, and [`Error::is_duplicate_key`] tells a
//! duplicate key whatever path it came by.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use sequence_runtime::{Error, Sequence, SequenceOptions};
//!
//! let seq = Sequence::in_memory(SequenceOptions::builder("t").max(2).build())?;
//! seq.reserve(2).await?;
//! match seq.next().await {
//!     Err(Error::Exhausted { counter, max, .. }) => assert_eq!((counter.as_str(), max), ("t", 2)),
//!     other => panic!("expected exhaustion, got {other:?}"),
//! }
//! # Ok::<(), Error>(()) }).unwrap();
//! ```

pub(crate) mod driver;
mod id_problem;

pub use id_problem::IdProblem;

use mongodb::bson::Bson;
use sequence_rules::names::{self, NameError};
use sequence_rules::{At, Key, Problem, Violation};

/// `a and b`, or `a, b and c`, for messages.
fn and_list(items: &[Bson]) -> String {
    let items: Vec<String> = items.iter().map(ToString::to_string).collect();
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while allocating an ID or inserting a document with one.
///
/// Every variant says what happened and, where there is one, what to do about it. Errors that
/// come from the server are wrapped in [`Error::Mongo`] with the driver's error as
/// [`source`](std::error::Error::source).
///
/// ```
/// use sequence_runtime::{Error, Sequence, SequenceOptions};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let options = SequenceOptions::builder("seat").start(1).max(2).build();
/// let seats = Sequence::in_memory(options)?;
/// seats.next().await?;
/// seats.next().await?;
/// match seats.next().await {
///     Err(Error::Exhausted { .. }) => {} // raise `max`, or number from another counter
///     other => panic!("expected Exhausted, got {other:?}"),
/// }
/// # Ok::<(), Error>(()) }).unwrap();
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The counter has no values left below its `max`; nothing was written. For a `ranges`
    /// sequence, `max - last` is the most values one shard still holds (0 when all are full).
    #[error(
        "sequence `{counter}` is exhausted: {requested} more value(s) requested but the last issued \
         value is {last} and the maximum is {max}; raise `{limit}` or use another counter"
    )]
    Exhausted {
        /// The counter's key, as stored in the counters collection.
        counter: String,
        /// How many values the reservation asked for.
        requested: u64,
        /// The last value issued (or the value right before the first one, if none was).
        last: i64,
        /// The largest value.
        max: i64,
        /// The option that sets the largest value: `max`, `width` or `digits`.
        limit: &'static str,
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

    /// A record of a sequence's settings (see
    /// [`SequenceRecord`](crate::store::SequenceRecord)) that this version cannot read.
    #[error(
        "the record of sequence {sequence} in `{collection}` has no readable `{field}`: another \
         version of this crate or a hand edit wrote it; delete the record, and the next process \
         that uses the sequence writes it again"
    )]
    UnreadableRecord {
        /// The record's `_id`, as stored.
        sequence: String,
        /// The collection of records.
        collection: String,
        /// The field that cannot be read.
        field: &'static str,
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

    /// A configuration that breaks a rule (for example `start > max`, or a key the strategy
    /// does not use); nothing was sent to the server. The derive refuses the same
    /// configurations at compile time with the same message.
    #[error("invalid configuration of `{key}`: {message}")]
    #[non_exhaustive]
    InvalidConfig {
        /// The key or option the rule is about (`batch`, `prefix`, `prefetch_at`, …).
        key: &'static str,
        /// What is wrong and what to change.
        message: String,
    },

    /// An argument of a call that it cannot take (for example `reserve(0)`, a purge date after
    /// the current period, or scope values that do not match the sequence's `scope`); nothing
    /// was written.
    #[error("invalid argument `{argument}`: {reason}")]
    #[non_exhaustive]
    InvalidArgument {
        /// The argument, as the method names it.
        argument: &'static str,
        /// What is wrong and what to give instead.
        reason: String,
    },

    /// A value that a filter cannot match as the data it is (a scope value that is an array or
    /// null where a counter is found by it, a `$`-prefixed field name inside a key): it would
    /// find another value's counter or claim, so it is refused before anything is written.
    /// Operator-shaped values (`{ "$ne": null }`) and regular expressions are not refused:
    /// they are matched as data. See the guide's chapter on guarantees, "What user input can
    /// do".
    #[error(
        "the value {value} of `{field}` cannot be matched as data: {reason}; nothing was written"
    )]
    #[non_exhaustive]
    UnmatchableValue {
        /// The field the value was given for (a scope field, `_id`, a filter's field).
        field: String,
        /// The value, as extended JSON.
        value: String,
        /// Why no filter can match it exactly.
        reason: String,
    },

    /// A document, or a value of it, that cannot be stored as BSON; nothing was written.
    #[error("cannot serialize {what} to BSON: {source}; check its `Serialize` implementation")]
    #[non_exhaustive]
    Serialization {
        /// What was being serialized (`the document`, `a scope field`).
        what: &'static str,
        /// The serializer's error.
        #[source]
        source: mongodb::error::Error,
    },

    /// A counter store that does not implement an operation (a custom
    /// [`CounterStore`](crate::store::CounterStore) without it); nothing was written.
    #[error(
        "the counter store `{store}` cannot {operation}; implement it in the store, or use \
         `MongoStore` or `MemoryStore`"
    )]
    #[non_exhaustive]
    StoreUnsupported {
        /// The store, as it names itself.
        store: String,
        /// The operation it lacks.
        operation: &'static str,
    },

    /// An index this crate needs conflicts with what the collection holds; nothing was
    /// changed.
    #[error("cannot create the index {index} in `{collection}`: {reason}")]
    #[non_exhaustive]
    IndexConflict {
        /// The counters or target collection.
        collection: String,
        /// The index's keys.
        index: String,
        /// Why, and what to do.
        reason: String,
        /// The server's error.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// Two counter documents match the filter of one counter, so that neither can be picked
    /// safely: a program that finds, then creates its counter (typegoose, the
    /// mongoose-auto-increment plugins) raced another creating the same one. Nothing was
    /// written.
    #[error(
        "two counter documents in `{collection}` match {filter}: `_id` {} (another program \
         created one while the other was being created); keep the one with the higher count, \
         delete the other, and restart the programs that number from it",
        and_list(.ids)
    )]
    #[non_exhaustive]
    DuplicateCounters {
        /// The counters collection.
        collection: String,
        /// The filter the documents match.
        filter: String,
        /// The `_id` of each (two).
        ids: Vec<Bson>,
    },

    /// A text that is not an ID of the sequence (from `parse_id`): what is wrong with it.
    #[error("`{id}` is not an ID of sequence `{sequence}`: {problem}")]
    InvalidId {
        /// The sequence.
        sequence: String,
        /// The text given.
        id: String,
        /// What is wrong.
        problem: IdProblem,
    },

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

    /// A gapless sequence, a counter joining a transaction, or `unique = "proxy"` needs
    /// multi-document transactions, which this deployment (or store) does not offer. Nothing
    /// was written.
    #[error(
        "{needed_by} needs transactions, which need a replica set (a single-node one is \
         enough) or a sharded cluster: {detail}"
    )]
    #[non_exhaustive]
    TransactionsUnsupported {
        /// What needed them: `gapless numbering`, `a counter in a transaction`, or
        /// `` `unique = "proxy"` ``.
        needed_by: &'static str,
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
    /// (for a ranges sequence: another slice of the ID space); it was left untouched.
    #[error(
        "counter document `{counter}` in `{collection}` holds {found} but this configuration \
         expects {expected}; the slices of a ranges sequence in use cannot change (that would \
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
    #[error(
        "`{operation}` is not available for `{strategy}` sequences{}",
        then(hint)
    )]
    Unsupported {
        /// The operation.
        operation: &'static str,
        /// The strategy's name, as written in `#[seq(strategy = "...")]`, or `gapless`.
        strategy: &'static str,
        /// Why, or what to do instead (empty: nothing to add).
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

    /// Two or more documents of a collection hold one ID (with a scope: one ID in one scope), so
    /// claims cannot be repaired: a claim names one document. Nothing was written. Found by
    /// `claims::Claims::repair`.
    #[error(
        "{count} ID(s) of `{namespace}` are held by more than one document, so no claim was \
         written: {listed}; give each of these documents an ID of its own, then repair again",
        listed = SharedId::list(.ids, *.count)
    )]
    #[non_exhaustive]
    SharedIds {
        /// The target collection, as `database.collection`.
        namespace: String,
        /// The IDs held twice, at most as many as the report's limit lists.
        ids: Vec<SharedId>,
        /// How many IDs are held by more than one document.
        count: u64,
    },

    /// Any other error from the MongoDB driver (mapped by `From<mongodb::error::Error>`).
    #[error(transparent)]
    Mongo(mongodb::error::Error),
}

/// `"; {hint}"`, or nothing for an empty hint: the tail of a message.
fn then(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!("; {hint}")
    }
}

/// An ID that two or more documents of a collection hold (with a scope: in one scope), as a
/// check of claims finds it and [`Error::SharedIds`] lists it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct SharedId {
    /// The ID as a claim's `_id` holds it: the ID, or the scope values and the ID
    /// (`{ <scope field>: value, …, id: <ID> }`).
    pub id: Bson,
    /// The `_id`s of the documents that hold it (at most [`SharedId::LISTED`] of them).
    pub docs: Vec<Bson>,
    /// How many documents hold it.
    pub count: u64,
}

impl SharedId {
    /// The most document `_id`s listed per ID.
    pub const LISTED: usize = 10;

    /// `id` held by the documents `docs` (of `count`).
    pub fn new(id: Bson, docs: Vec<Bson>, count: u64) -> Self {
        SharedId { id, docs, count }
    }

    /// The IDs as one line: `7 (by 1, 2), 9 (by 3, 4 and 1 more)`, and how many more IDs.
    fn list(ids: &[SharedId], count: u64) -> String {
        let mut parts: Vec<String> = ids
            .iter()
            .map(|s| {
                let docs: Vec<String> = s.docs.iter().map(Bson::to_string).collect();
                let more = s.count.saturating_sub(s.docs.len() as u64);
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                format!("{} (by {}{more})", s.id, docs.join(", "))
            })
            .collect();
        let more = count.saturating_sub(ids.len() as u64);
        if more > 0 {
            parts.push(format!("and {more} more ID(s)"));
        }
        parts.join(", ")
    }
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
    /// [`Error::InvalidConfig`] with the rule's key and message.
    fn from(v: Violation) -> Self {
        let key = match v.at {
            At::Option(option) => option,
            At::IdType => "id",
            _ => v.key().map_or("options", Key::name),
        };
        match v.problem {
            Problem::Name(e) => e.into(),
            Problem::Invalid(message) => Error::InvalidConfig { key, message },
            _ => Error::InvalidConfig {
                key,
                message: v.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver error to wrap, made without a server.
    fn driver_error() -> mongodb::error::Error {
        std::io::Error::other("boom").into()
    }

    /// Every variant's message, with what each must name for the reader to act on it.
    #[test]
    fn every_message_names_what_to_fix() {
        let cases: Vec<(Error, &[&str])> = vec![
            (
                Error::Exhausted {
                    counter: "invoice".into(),
                    requested: 5,
                    last: 98,
                    max: 100,
                    limit: "max",
                },
                &["`invoice`", "raise `max`"],
            ),
            (
                Error::Exhausted {
                    counter: "INV-".into(),
                    requested: 1,
                    last: 9999,
                    max: 9999,
                    limit: "width",
                },
                &["`INV-`", "raise `width`"],
            ),
            (
                Error::CorruptCounter {
                    counter: "invoice".into(),
                    collection: "app.counters".into(),
                    reason: "`seq` is a string".into(),
                },
                &["`invoice`", "`app.counters`", "fix or delete it"],
            ),
            (
                names::check(names::NameKind::Counter, "$a")
                    .unwrap_err()
                    .into(),
                &["`$a`", "`$`"],
            ),
            (
                Error::InvalidConfig {
                    key: "batch",
                    message: "`batch` must be at least 1".into(),
                },
                &["`batch`", "at least 1"],
            ),
            (
                Error::InvalidArgument {
                    argument: "n",
                    reason: "cannot reserve 0 IDs; ask for at least 1".into(),
                },
                &["`n`", "at least 1"],
            ),
            (
                Error::UnmatchableValue {
                    field: "shop".into(),
                    value: "[\"victim\"]".into(),
                    reason: "an array also matches a field holding it".into(),
                },
                &["`shop`", "[\"victim\"]", "nothing was written"],
            ),
            (
                Error::Serialization {
                    what: "the document",
                    source: driver_error(),
                },
                &["the document", "`Serialize`"],
            ),
            (
                Error::StoreUnsupported {
                    store: "redis".into(),
                    operation: "delete periods",
                },
                &["`redis`", "delete periods", "implement it"],
            ),
            (
                Error::IndexConflict {
                    collection: "app.counters".into(),
                    index: "{ id: 1, reference_value: 1 } (unique)".into(),
                    reason: "keep the two layouts in separate collections".into(),
                    source: Box::new(driver_error()),
                },
                &["`app.counters`", "reference_value", "separate collections"],
            ),
            (
                Error::DuplicateCounters {
                    collection: "app.identitycounters".into(),
                    filter: "{ \"model\": \"Ticket\" }".into(),
                    ids: vec![Bson::Int32(1), Bson::Int32(2)],
                },
                &[
                    "`app.identitycounters`",
                    "\"Ticket\"",
                    "higher count",
                    "delete the other",
                ],
            ),
            (
                Error::IdOutOfRange {
                    value: 1 << 40,
                    target: "i32",
                },
                &["`i32`", "1099511627776"],
            ),
            (
                Error::DuplicateKey {
                    message: "E11000 duplicate key error index: email_1".into(),
                    source: driver_error(),
                },
                &["email_1"],
            ),
            (
                Error::WouldMoveBackwards {
                    counter: "invoice".into(),
                    current: 10,
                    requested: 3,
                },
                &["`invoice`", "pass `force`"],
            ),
            (
                Error::TransactionsUnsupported {
                    needed_by: "`unique = \"proxy\"`",
                    detail: "standalone".into(),
                },
                &["`unique = \"proxy\"` needs transactions", "replica set"],
            ),
            (
                Error::TransactionTimeout {
                    counter: "invoice".into(),
                    attempts: 3,
                    elapsed_ms: 30_000,
                    source: driver_error(),
                },
                &["`invoice`", "raise the transaction timeout"],
            ),
            (
                Error::CounterMismatch {
                    counter: "order".into(),
                    collection: "app.counters".into(),
                    expected: "shard 1".into(),
                    found: "shard 2".into(),
                },
                &["`order`", "use another `name`"],
            ),
            (
                Error::RandomIdsExhausted {
                    collection: "app.tickets".into(),
                    attempts: 11,
                    start: 10,
                    max: 99,
                },
                &["`app.tickets`", "widen it"],
            ),
            (Error::Random("no entropy".into()), &["no entropy"]),
            (
                Error::Unsupported {
                    operation: "next",
                    strategy: "gapless",
                    hint: "use `insert_with_id`",
                },
                &["`next`", "`gapless`", "use `insert_with_id`"],
            ),
            (
                Error::IdTypeMismatch {
                    made: "a UUID",
                    target: "i64",
                },
                &["`i64`", "a UUID"],
            ),
            (
                Error::ScopeRequired {
                    counter: "order".into(),
                    fields: "`tenant`".into(),
                },
                &["`tenant`", "next_id_for", "in_scope"],
            ),
            (
                Error::Unauthorized {
                    namespace: "app.counters".into(),
                    needs: "`find` and `update`",
                    source: driver_error(),
                },
                &["`app.counters`", "`find` and `update`"],
            ),
            (
                Error::IdTaken {
                    namespace: "app.orders".into(),
                    id: "7".into(),
                    counter: "order".into(),
                    hint: "run `sync_counters`",
                    source: Box::new(driver_error()),
                },
                &["`app.orders`", "`order`", "sync_counters"],
            ),
            (
                Error::StoredBeyondMax {
                    namespace: "app.orders".into(),
                    counter: "order".into(),
                    stored: 120,
                    max: 99,
                },
                &["`app.orders`", "raise `max`"],
            ),
            (
                Error::SharedIds {
                    namespace: "app.orders".into(),
                    ids: vec![SharedId::new(Bson::Int64(7), vec![1.into(), 2.into()], 3)],
                    count: 2,
                },
                &[
                    "`app.orders`",
                    "7 (by 1, 2 and 1 more)",
                    "and 1 more ID(s)",
                    "an ID of its own",
                ],
            ),
            (Error::from(driver_error()), &["boom"]),
        ];
        for (error, names) in cases {
            let text = error.to_string();
            for name in names {
                assert!(
                    text.contains(name),
                    "{error:?} says {text:?}, without {name:?}"
                );
            }
        }
    }

    #[test]
    fn driver_errors_keep_their_source() {
        use std::error::Error as _;
        let e = Error::Serialization {
            what: "the document",
            source: driver_error(),
        };
        assert!(e.source().is_some());
        assert!(!Error::from(driver_error()).is_duplicate_key());
    }

    #[test]
    fn violations_carry_their_key() {
        let spec = sequence_rules::Spec {
            batch: Some(sequence_rules::Batch::Fixed(0)),
            ..sequence_rules::Spec::new("order")
        };
        let v = sequence_rules::check(&spec).unwrap_err().remove(0);
        match Error::from(v) {
            Error::InvalidConfig { key, message } => {
                assert_eq!(key, "batch");
                assert!(message.contains("`batch`"), "{message}");
            }
            other => panic!("expected InvalidConfig, got {other:?}"),
        }
    }
}
