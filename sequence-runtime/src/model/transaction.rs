//! The transactions of the insert paths that write in one (gapless numbering, a proxy
//! collection's claims, a gapless upsert): a body run in a transaction of a session of its
//! own, again after transient transaction errors (with jittered backoff) until the sequence's
//! transaction timeout; an unknown commit result retries the commit only, and past the
//! deadline the documents are read back; errors that are the caller's (a duplicate on another
//! unique index, validation) abort and are returned unchanged.

use std::time::{Duration, Instant};

use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{ReadConcern, WriteConcern};
use mongodb::{ClientSession, Collection, Namespace};

use super::counter_turns;
use super::document_scope;
use super::sequential_id::SequentialId;
use super::skip_ahead;
use crate::error::driver::{
    commit_unknown, statement_transient, transaction_transient, write_conflict, Access,
};
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::observability::GAPLESS;
use crate::sequence::{Issued, Sequence};
use crate::store::{literal, BoxFuture};

/// Upper bound of the backoff between two attempts.
const MAX_BACKOFF: Duration = Duration::from_millis(100);

/// How long a transaction that meets the counter held by another transaction starts again at
/// once (each attempt in the other of two sessions, the last one's abort sent meanwhile),
/// before it waits on the server for the holder to end. The holder of a busy counter commits
/// within milliseconds, and a transaction that starts again at once takes the counter over
/// sooner than one the server lets go after its own pauses (see the gapless rows of
/// `docs/performance.md`); a holder that stays (a process killed mid-transaction, held until
/// the server aborts it) is waited for without further attempts.
const AT_ONCE_FOR: Duration = Duration::from_millis(50);

/// How many attempts start again at once however long they took: on a loaded machine a few
/// attempts may outlast [`AT_ONCE_FOR`], and the holder of a busy counter is usually gone
/// within them.
const AT_ONCE_AT_LEAST: u32 = 3;

/// Whether the next attempt after one that met the counter held goes at once (rather than
/// after waiting on the server for the holder to end).
fn at_once(started: Instant, attempts: u32) -> bool {
    attempts < AT_ONCE_AT_LEAST || started.elapsed() < AT_ONCE_FOR
}

/// Why one attempt failed.
pub(crate) enum AttemptFailure {
    /// Retry the whole transaction.
    Transient(mongodb::error::Error),
    /// The counter update met the counter held by another transaction (of another process,
    /// or of another group of this one): wait until that transaction ends, then retry the
    /// whole transaction at once.
    Contended(mongodb::error::Error),
    /// A document met a stored document with the ID that `Issued` gave: move that counter up to
    /// the highest stored value, then retry the whole transaction.
    IdTaken(Issued, i64, Error),
    /// Give up: the error goes to the caller.
    Fatal(Error),
    /// One document of a group failed on its own and its caller got the error: retry the
    /// others at once.
    Dropped,
    /// The ID met a claim of another document: retry at once with a new one (the body bounds
    /// how often).
    Collided,
}

/// What one transaction body did, with its result.
pub(crate) enum Done<R> {
    /// Commit the transaction.
    Commit(R),
    /// Abort it (nothing it did is kept) and return.
    Abort(R),
}

/// How a driver error of the transaction on `namespace` is handled: the errors `transient`
/// accepts run the transaction again (for a statement inside it, `statement_transient`; for
/// its commit, `transaction_transient`), the others are the caller's.
pub(crate) fn classify(
    e: mongodb::error::Error,
    namespace: &Namespace,
    transient: fn(&mongodb::error::Error) -> bool,
) -> AttemptFailure {
    if transient(&e) {
        AttemptFailure::Transient(e)
    } else {
        AttemptFailure::Fatal(Error::from_driver_on(e, namespace, Access::Insert))
    }
}

/// The body of one transaction: what it does in `session`.
pub(crate) trait TransactionBody<R> {
    /// Runs the body once, in `session`'s transaction.
    fn run<'s>(
        &'s mut self,
        session: &'s mut ClientSession,
    ) -> BoxFuture<'s, std::result::Result<Done<R>, AttemptFailure>>;

    /// The documents the last run inserted, as sent: a commit whose outcome stayed unknown
    /// succeeded if they are stored (see [`stored_as_sent`]). `None`: not known.
    fn sent(&self) -> Option<Vec<Document>> {
        None
    }

    /// Told that an attempt met the counter held by another transaction and waited for it.
    fn waited(&mut self) {}
}

/// Runs `body` in a transaction of a session of its own, and commits what it says to:
/// again after transient transaction errors (with jittered backoff) until the sequence's
/// transaction timeout, and after a document met a stored ID once its counter moved up (a
/// bounded number of times).
pub(crate) async fn in_transactions<T: SequentialId, R>(
    coll: &Collection<T>,
    seq: &Sequence,
    body: &mut impl TransactionBody<R>,
) -> Result<R> {
    // Numbers taken in the transaction: one transaction of this process at a time per counter.
    let _turn = match seq.options().gapless {
        true => Some(counter_turns::take(seq).await?),
        false => None,
    };
    let timeout = seq.options().transaction_timeout;
    let namespace = coll.namespace();
    let mapped = |e| Error::from_driver_on(e, &namespace, Access::Insert);
    let mut session = coll.client().start_session().await.map_err(mapped)?;
    let mut spare = AbortingSession::default();
    let started = Instant::now();
    let mut attempts = 0_u32;
    let mut taken_rounds = 0;
    loop {
        attempts += 1;
        session
            .start_transaction()
            .write_concern(WriteConcern::majority())
            .await
            .map_err(mapped)?;
        let failure = match body.run(&mut session).await {
            Ok(Done::Commit(result)) => {
                match commit(&mut session, &namespace, started, timeout).await {
                    Ok(()) => return Ok(result),
                    Err(AttemptFailure::Fatal(e)) => {
                        // The commit's outcome may still be unknown: read the documents back.
                        let stored = match body.sent() {
                            Some(sent) => stored_as_sent(coll, &sent).await,
                            None => None,
                        };
                        return match stored {
                            Some(true) => Ok(result),
                            _ => Err(e),
                        };
                    }
                    Err(e) => e,
                }
            }
            Ok(Done::Abort(result)) => {
                let _ = session.abort_transaction().await;
                return Ok(result);
            }
            Err(e @ AttemptFailure::Contended(_)) if at_once(started, attempts) => {
                // The server ended the transaction at its counter update: the next attempt
                // goes at once in the other session, this one's abort meanwhile.
                session = spare.swap(session, coll.client()).await.map_err(mapped)?;
                e
            }
            Err(e) => {
                // Best effort: the server aborts an unfinished transaction on its own too.
                let _ = session.abort_transaction().await;
                e
            }
        };
        let contended = matches!(failure, AttemptFailure::Contended(_));
        match failure {
            // A document of a group failed on its own: the others go on at once; a drawn ID
            // met a claim: a new draw goes at once.
            AttemptFailure::Dropped | AttemptFailure::Collided => {}
            AttemptFailure::Fatal(e) => return Err(e),
            AttemptFailure::IdTaken(issued, floor, e) => {
                if taken_rounds == skip_ahead::ROUNDS {
                    let id = T::Id::render(issued.value, &issued.slot.rendering)?;
                    let hint = skip_ahead::AFTER_ROUNDS;
                    return Err(skip_ahead::taken(coll, &id, &issued, e, hint));
                }
                taken_rounds += 1;
                // Numbers go on from the highest stored ID, without a hole.
                seq.raise(&issued, floor).await?;
            }
            AttemptFailure::Transient(e) | AttemptFailure::Contended(e)
                if started.elapsed() >= timeout =>
            {
                return Err(Error::TransactionTimeout {
                    counter: seq.base_key().to_string(),
                    attempts,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    source: e,
                })
            }
            AttemptFailure::Contended(e) | AttemptFailure::Transient(e) => {
                tracing::debug!(
                    target: GAPLESS,
                    sequence = %seq.options().name,
                    counter = %seq.base_key(),
                    attempt = attempts,
                    contended,
                    error = %e,
                    "Gapless transaction retried"
                );
                seq.record_transaction_retry();
                if contended {
                    body.waited();
                    if at_once(started, attempts) {
                        continue;
                    }
                    // The server holds the wait until the other transaction ends; then the
                    // transaction starts again at once.
                    let within = timeout.saturating_sub(started.elapsed());
                    if seq.wait_for_counter(within).await.is_ok() {
                        continue;
                    }
                }
                // Back off (also when the holder could not be waited for).
                tokio::time::sleep(backoff(attempts)).await;
            }
        }
    }
}

/// The failure of a body whose document `doc` met a stored ID that `issued` gave: with the
/// highest value stored for that counter (read outside the transaction, which the duplicate
/// aborted).
pub(crate) async fn taken<T: SequentialId>(
    doc: &T,
    coll: &Collection<T>,
    seq: &Sequence,
    issued: Issued,
    e: Error,
) -> AttemptFailure {
    let floor = match document_scope::for_document(seq.clone(), doc) {
        Ok(scoped) => skip_ahead::stored_floor(doc, coll, &scoped, &issued).await,
        Err(e) => Err(e),
    };
    match floor {
        Ok(floor) => AttemptFailure::IdTaken(issued, floor, e),
        Err(e) => AttemptFailure::Fatal(e),
    }
}

/// How a failed counter update in the transaction is handled.
pub(crate) fn counter_failure(e: Error) -> AttemptFailure {
    match e {
        // Another transaction holds the counter: wait for it rather than collide again.
        Error::Mongo(e) if write_conflict(&e) => AttemptFailure::Contended(e),
        Error::Mongo(e) if statement_transient(&e) => AttemptFailure::Transient(e),
        // A duplicate key from racing first upserts aborted the transaction: try again.
        Error::DuplicateKey { source, .. } => AttemptFailure::Transient(source),
        e => AttemptFailure::Fatal(e),
    }
}

/// Commits, retrying the commit alone while its result is unknown.
async fn commit(
    session: &mut ClientSession,
    namespace: &Namespace,
    started: Instant,
    timeout: Duration,
) -> std::result::Result<(), AttemptFailure> {
    loop {
        match session.commit_transaction().await {
            Ok(()) => return Ok(()),
            Err(e) if commit_unknown(&e) && started.elapsed() < timeout => {
                tracing::debug!(
                    target: GAPLESS,
                    collection = %namespace,
                    error = %e,
                    "Gapless commit retried"
                );
            }
            Err(e) => return Err(classify(e, namespace, transaction_transient)),
        }
    }
}

/// Whether the documents `sent` are stored as sent, read by `_id` with majority read concern:
/// `Some(true)` if all are, `Some(false)` if none is (a document of another writer under one
/// of their `_id`s is not one of them), `None` if that cannot be told (none sent, one without
/// an `_id`, a failed read, some stored and some not).
async fn stored_as_sent<T: Send + Sync>(coll: &Collection<T>, sent: &[Document]) -> Option<bool> {
    let ids: Vec<Bson> = (sent.iter())
        .map(|d| d.get("_id").cloned())
        .collect::<Option<_>>()?;
    if ids.is_empty() {
        return None;
    }
    let mut cursor = coll
        .clone_with_type::<Document>()
        .find(doc! { "_id": literal::any_of("_id", &ids).ok()? })
        .read_concern(ReadConcern::majority())
        .await
        .ok()?;
    let mut ours = 0;
    while cursor.advance().await.ok()? {
        let stored = cursor.deserialize_current().ok()?;
        if sent.contains(&stored) {
            ours += 1;
        }
    }
    match ours {
        0 => Some(false),
        n if n == sent.len() => Some(true),
        _ => None,
    }
}

/// The second session of a transaction whose attempts meet the counter held: the session of
/// the last such attempt, whose abort goes in the background so that the next attempt need not
/// wait for it. The attempts alternate between two sessions, so a transaction takes at most two
/// connections at once.
#[derive(Default)]
struct AbortingSession(Option<tokio::task::JoinHandle<ClientSession>>);

impl AbortingSession {
    /// Sends `ended`'s abort in the background and returns the session for the next attempt:
    /// the one aborted before (once its abort is done) or, the first time, a new one.
    async fn swap(
        &mut self,
        ended: ClientSession,
        client: &mongodb::Client,
    ) -> mongodb::error::Result<ClientSession> {
        let aborted = match self.0.take() {
            Some(aborting) => aborting.await.ok(),
            None => None,
        };
        let next = match aborted {
            Some(session) => session,
            None => client.start_session().await?,
        };
        self.0 = Some(tokio::spawn(async move {
            let mut ended = ended;
            let _ = ended.abort_transaction().await;
            ended
        }));
        Ok(next)
    }
}

/// Full jitter: a random pause up to an exponentially growing bound.
fn backoff(attempt: u32) -> Duration {
    let bound = Duration::from_millis(2)
        .saturating_mul(1 << attempt.min(10))
        .min(MAX_BACKOFF);
    // Any source of spread will do; without one, the full bound.
    let share = getrandom::u32().map_or(1.0, |r| f64::from(r) / f64::from(u32::MAX));
    bound.mul_f64(share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_bounded() {
        for attempt in 0..50 {
            assert!(backoff(attempt) <= MAX_BACKOFF);
        }
    }
}
