//! Group commit: concurrent gapless inserts of one counter into one collection, in one
//! process, commit together; so do the concurrent inserts of a model with a proxy collection
//! whose numbers come from outside the transaction (`proxy_group.rs` queues them; their
//! rounds are `attempt_taken`).
//!
//! The first insert of an idle group runs its own transaction (as [`gapless::insert`] does).
//! Inserts arriving meanwhile queue, serialized, and a round task commits them together once it
//! ends: one transaction takes `k` numbers (one counter update), inserts the `k` documents in
//! order (one `insert_many`) and commits once. A document that fails on its own (a duplicate on
//! another unique index, a validation error) gets that error and the others go on without it
//! in a new transaction, so the stored numbers stay exactly `start, start + 1, …`. A round
//! whose counter update meets the counter held by another process's transaction takes in the
//! inserts that queued meanwhile before it starts again (they share its transaction timeout).
//! Transient errors retry the group until the sequence's transaction timeout; a commit whose
//! outcome stays unknown is settled by reading the documents back, so a document is never
//! numbered twice. A round takes at most [`MAX_DOCS`] documents of at most [`MAX_BYTES`] in
//! all, far inside the server's transaction limits.

use std::any::TypeId;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mongodb::bson::Document;
use mongodb::options::InsertOneOptions;
use mongodb::{ClientSession, Collection};
use sequence_rules::Unique;

use super::gapless::{self, Docs};
use super::round_member::{prepare, Member, StoredAs};
use super::sequential_id::SequentialId;
use super::transaction::{self, counter_failure, AttemptFailure, Done, TransactionBody};
use super::{proxy, skip_ahead};
use crate::error::driver::{insert_many_failed_at, statement_transient, Access};
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::observability::GAPLESS;
use crate::process::{self, GroupOf};
use crate::sequence::{Issued, Sequence};
use crate::store::{BoxFuture, Deployment};

/// The least a group whose round met another group's transaction on the counter lets pass
/// before its next round (see [`pause_after`]).
const MIN_PAUSE: Duration = Duration::from_millis(1);

/// The most a group whose round met another group's transaction on the counter lets pass
/// before its next round (see [`pause_after`]).
const MAX_PAUSE: Duration = Duration::from_millis(10);

/// How many inserts wait before a group whose limit allows several rounds at once starts
/// another beside those in flight.
const MIN_EXTRA_ROUND: usize = 8;

/// The most documents one round commits.
const MAX_DOCS: usize = 256;

/// The most bytes of documents one round commits (the server takes 16 MiB per command and
/// transactions of several commands; a round stays far inside both).
const MAX_BYTES: usize = 4 << 20;

/// The inserts of one group (a model's counter, collection and scope) waiting for a round.
/// It is registered under `id` while the group is in use, and removed from the registry when
/// the group goes idle, so that a process keeps no queue per scope value it has seen.
struct GroupQueue<I> {
    id: GroupOf,
    state: Mutex<GroupState<I>>,
}

/// The state of a group.
struct GroupState<I> {
    /// How many inserts or rounds of the group are in flight (each commits waiting ones once
    /// it ends), at most `limit`: one for the inserts of one counter, whose transactions
    /// would only collide; a few for the first values of many scope values, whose rounds hold
    /// no counter.
    in_flight: usize,
    limit: usize,
    /// The inserts waiting for the next round.
    waiting: VecDeque<Member<I>>,
}

impl<I: Send + 'static> GroupQueue<I> {
    fn new(id: GroupOf, limit: usize) -> Self {
        GroupQueue {
            id,
            state: Mutex::new(GroupState {
                in_flight: 0,
                limit,
                waiting: VecDeque::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GroupState<I>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends one insert or round in flight if nothing waits; returns whether it did. A group
    /// with none left in flight leaves the registry (a caller that still holds it may lead it
    /// once more, beside a new one: two transactions of one counter at once are correct, only
    /// not grouped).
    fn go_idle_if_empty(self: &Arc<Self>, mut state: MutexGuard<'_, GroupState<I>>) -> bool {
        if !state.waiting.is_empty() {
            return false;
        }
        state.in_flight = state.in_flight.saturating_sub(1);
        let idle = state.in_flight == 0;
        drop(state);
        if idle {
            process::remove_group(&self.id, self);
        }
        true
    }
}

/// Inserts `doc` with the next number of `seq`, in a transaction of its own or committed with
/// the inserts of the same counter and collection waiting at the same time.
pub(crate) async fn insert_one<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    seq: &Sequence,
    options: Option<&InsertOneOptions>,
) -> Result<T::Id> {
    if T::SEQUENCE.unique == Unique::Proxy {
        // Before any transaction of the group.
        proxy::ensure_index(coll).await?;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return single(doc, coll, seq, options).await;
    };
    if options.is_some() {
        // A group commits its members with one `insert_many`: options of one insert go alone.
        return single(doc, coll, seq, options).await;
    }
    let scoped = super::document_scope::for_document(seq.clone(), &*doc)?;
    let Some((member, rx, shape)) = prepare(doc, &scoped)? else {
        return single(doc, coll, seq, None).await; // an ID field this module cannot write: alone
    };
    let round = Round {
        coll: coll.clone(),
        seq: scoped,
        scope: skip_ahead::scope_filter(&*doc)?,
        shape: Some(shape),
        own: None,
    };
    let Some(_next) = join(member, round, runtime) else {
        return match rx.await {
            Ok(result) => {
                let id = result?.expect("a gapless member is never sent to insert alone");
                doc.set_id(id.clone());
                Ok(id)
            }
            // The round task ended without an answer (its runtime shut down) before it
            // committed anything for this insert: insert alone.
            Err(_) => single(doc, coll, seq, None).await,
        };
    };
    single(doc, coll, seq, None).await
}

/// Puts `member` in the group of `round`'s model, collection and scope: behind the insert or
/// rounds in flight (`None`: its reply will come), or, when the group is idle, as its leader,
/// which inserts alone; the guard returned then hands the inserts that queue meanwhile to a
/// round task when it is dropped. A group with rounds of its own ([`OwnRounds`]) has no
/// leader: a round task starts at once when none is in flight, and another beside those in
/// flight (up to [`OwnRounds::in_flight`]) once [`MIN_EXTRA_ROUND`] wait.
pub(super) fn join<T: SequentialId>(
    member: Member<T::Id>,
    round: Round<T>,
    runtime: tokio::runtime::Handle,
) -> Option<GroupHandOff<T>> {
    let id = GroupOf {
        model: TypeId::of::<T>(),
        deployment: Deployment::of_collection(&round.coll),
        namespace: round.coll.namespace().to_string(),
        scope: round
            .seq
            .scope()
            .map(|s| s.canonical().to_owned())
            .unwrap_or_default(),
    };
    let (limit, leads) = match &round.own {
        Some(own) => (own.in_flight, false),
        None => (1, true),
    };
    let queue = process::group(&id, || GroupQueue::<T::Id>::new(id.clone(), limit));
    {
        let mut state = queue.lock();
        if state.in_flight > 0 || !leads {
            state.waiting.push_back(member);
            let another = state.in_flight == 0
                || (state.in_flight < state.limit && state.waiting.len() >= MIN_EXTRA_ROUND);
            if another {
                state.in_flight += 1;
                drop(state);
                runtime.spawn(rounds(queue.clone(), round));
            }
            return None;
        }
        state.in_flight = 1;
    }
    Some(GroupHandOff {
        queue,
        round: Some(round),
        runtime,
    })
}

/// Inserts `doc` in a transaction of its own.
async fn single<T: SequentialId>(
    doc: &mut T,
    coll: &Collection<T>,
    seq: &Sequence,
    options: Option<&InsertOneOptions>,
) -> Result<T::Id> {
    let ids = gapless::insert(Docs::One(doc, options), coll, seq).await?;
    Ok(ids.into_iter().next().expect("one document, one ID"))
}

/// What a round task needs: the collection, the sequence (in the group's scope), the filter of
/// the group's scope among stored documents, how IDs are stored, and, for a group that is not
/// of one counter's inserts, its own rounds.
pub(super) struct Round<T: SequentialId> {
    pub(super) coll: Collection<T>,
    pub(super) seq: Sequence,
    pub(super) scope: Document,
    /// How the round writes the numbers it takes; `None` when its members took theirs.
    pub(super) shape: Option<StoredAs>,
    /// `None`: the members are inserts of one counter, committed in its transactions.
    pub(super) own: Option<OwnRounds<T>>,
}

/// How a round of a group with rounds of its own commits its members, answering each.
pub(super) type Commit<T> =
    for<'a> fn(&'a Round<T>, Vec<Member<<T as SequentialId>::Id>>) -> BoxFuture<'a, ()>;

/// The rounds of a group whose members are not inserts of one counter (the first values of
/// many scope values, `first_values.rs`): how a round commits them, and how many rounds may be
/// in flight at once. Such members never insert alone.
pub(super) struct OwnRounds<T: SequentialId> {
    pub(super) commit: Commit<T>,
    pub(super) in_flight: usize,
}

/// Ends the insert of the caller that went alone, however it ends: the inserts that queued
/// meanwhile get a round task, or the group goes idle if none did.
pub(super) struct GroupHandOff<T: SequentialId> {
    queue: Arc<GroupQueue<T::Id>>,
    /// Taken by the round task, if one is needed.
    round: Option<Round<T>>,
    runtime: tokio::runtime::Handle,
}

impl<T: SequentialId> Drop for GroupHandOff<T> {
    fn drop(&mut self) {
        if self.queue.go_idle_if_empty(self.queue.lock()) {
            return;
        }
        if let Some(round) = self.round.take() {
            self.runtime.spawn(rounds(self.queue.clone(), round));
        }
    }
}

/// Commits the queued inserts round after round, until none is left.
async fn rounds<T: SequentialId>(queue: Arc<GroupQueue<T::Id>>, round: Round<T>) {
    loop {
        let members = {
            let mut state = queue.lock();
            // Inserts whose caller gave up take no number.
            state.waiting.retain(|m| !m.reply.is_closed());
            if queue.go_idle_if_empty(state) {
                return;
            }
            let mut state = queue.lock();
            next_round(&mut state.waiting)
        };
        if let Some(met) = round.commit_all(members, &queue).await {
            tokio::time::sleep(pause_after(met.waited())).await;
        }
    }
}

/// How long a group whose round waited `waited` for the counter, held by other groups'
/// transactions, lets pass after its commit before its next round, so that the groups waiting
/// meanwhile take their turn: as long again, within [`MIN_PAUSE`] and [`MAX_PAUSE`]. With one
/// other process that is about the rest of one of its rounds; with more, about a round for
/// each of them, so that the process just served does not take the counter back from them.
fn pause_after(waited: Duration) -> Duration {
    waited.clamp(MIN_PAUSE, MAX_PAUSE)
}

/// Takes the members of the next round off the front of `waiting`, in order: at most
/// [`MAX_DOCS`] documents of at most [`MAX_BYTES`] in all, and at least one if any waits.
fn next_round<I>(waiting: &mut VecDeque<Member<I>>) -> Vec<Member<I>> {
    take_waiting(waiting, 0, 0)
}

/// Takes members off the front of `waiting`, in order, to join a round of `have` members of
/// `bytes` in all: while the round stays within [`MAX_DOCS`] documents and [`MAX_BYTES`]
/// (a round without members takes the first one whatever its size).
fn take_waiting<I>(
    waiting: &mut VecDeque<Member<I>>,
    have: usize,
    mut bytes: usize,
) -> Vec<Member<I>> {
    let mut n = 0;
    while n < waiting.len()
        && have + n < MAX_DOCS
        && (have + n == 0 || bytes + waiting[n].bytes <= MAX_BYTES)
    {
        bytes += waiting[n].bytes;
        n += 1;
    }
    waiting.drain(..n).collect()
}

impl<T: SequentialId> Round<T> {
    /// Commits `members` in transactions (see [`transaction::in_transactions`]) until each has its
    /// ID or its error; those of a group with rounds of its own as it commits them.
    /// Returns when its attempts met the counter held by a transaction of another group (of
    /// another process), if they did.
    async fn commit_all(
        &self,
        mut members: Vec<Member<T::Id>>,
        queue: &GroupQueue<T::Id>,
    ) -> Option<HolderMet> {
        if let Some(own) = &self.own {
            (own.commit)(self, members).await;
            return None;
        }
        tracing::debug!(
            target: GAPLESS,
            sequence = %self.seq.options().name,
            counter = %self.seq.base_key(),
            inserts = members.len(),
            "Gapless group committing"
        );
        let mut body = Group {
            round: self,
            queue,
            members: &mut members,
            sent: Vec::new(),
            met: None,
        };
        let result = transaction::in_transactions(&self.coll, &self.seq, &mut body).await;
        let met = body.met;
        // Inserts that queued while the round met the counter held joined it.
        self.seq.record_group(members.len());
        match result {
            Ok(ids) => answer(members, ids),
            Err(e) => answer_all(members, &e),
        }
        met
    }

    /// One transaction body: numbers for every member, their documents inserted in order. A
    /// member whose document fails on its own is answered with its error and removed (the
    /// transaction is then retried without it).
    /// Returns the IDs and the documents as sent.
    async fn attempt(
        &self,
        members: &mut Vec<Member<T::Id>>,
        session: &mut ClientSession,
    ) -> std::result::Result<(Vec<T::Id>, Vec<Document>), AttemptFailure> {
        let Some(shape) = self.shape else {
            return attempt_taken(self, members, session).await;
        };
        let issued = self
            .seq
            .issue_ids::<T::Id>(members.len() as u64, Some(&mut *session))
            .await
            .map_err(counter_failure)?;
        let field = T::SEQUENCE.id_field;
        let mut docs = Vec::with_capacity(members.len());
        for (member, (_, issued)) in members.iter().zip(&issued) {
            let stored = shape
                .bson(issued.value, &issued.slot.rendering, T::Id::TYPE_NAME)
                .map_err(AttemptFailure::Fatal)?;
            let mut doc = member.doc.clone();
            doc.insert(field, stored);
            docs.push(doc);
        }
        if T::SEQUENCE.unique == Unique::Proxy {
            proxy::claim_all(&self.coll, &self.seq, &docs, |at| &issued[at].1, session).await?;
        }
        let docs_coll = self.coll.clone_with_type::<Document>();
        let Err(e) = docs_coll.insert_many(&docs).session(&mut *session).await else {
            return Ok((issued.into_iter().map(|(id, _)| id).collect(), docs));
        };
        let at = insert_many_failed_at(&e);
        let namespace = self.coll.namespace();
        let duplicate_id = skip_ahead::duplicate_at::<T>(&e);
        match (Error::from_driver_on(e, &namespace, Access::Insert), at) {
            (e, Some(at)) if duplicate_id == Some(at) && skip_ahead::on_id_field::<T>(&e) => {
                let issued = issued[at].1.clone();
                let floor = skip_ahead::stored_floor_in::<T>(
                    self.scope.clone(),
                    &self.coll,
                    &self.seq,
                    &issued,
                )
                .await
                .map_err(AttemptFailure::Fatal)?;
                Err(AttemptFailure::IdTaken(issued, floor, e))
            }
            (Error::Mongo(e), _) if statement_transient(&e) => Err(AttemptFailure::Transient(e)),
            (e, Some(at)) => {
                // This document's own error: its caller gets it, the others go on without it.
                let _ = members.remove(at).reply.send(Err(e));
                Err(AttemptFailure::Dropped)
            }
            (e, None) => Err(AttemptFailure::Fatal(e)),
        }
    }
}

/// One transaction body of a round whose members took their numbers before they queued:
/// their claims in one `insert_many`, their documents in another. A member whose number
/// meets a claim (or a stored document) leaves the round to insert alone with a new number
/// (answered `Ok(None)`), and the others go on without it; a member whose document fails on
/// its own gets its error.
async fn attempt_taken<T: SequentialId>(
    round: &Round<T>,
    members: &mut Vec<Member<T::Id>>,
    session: &mut ClientSession,
) -> std::result::Result<(Vec<T::Id>, Vec<Document>), AttemptFailure> {
    let taken: Vec<(T::Id, Issued)> = members
        .iter()
        .map(|m| {
            m.taken
                .clone()
                .expect("every member of the round took its number")
        })
        .collect();
    let docs: Vec<Document> = members.iter().map(|m| m.doc.clone()).collect();
    match proxy::claim_all(&round.coll, &round.seq, &docs, |at| &taken[at].1, session).await {
        Err(AttemptFailure::IdTaken(issued, _, _)) => return Err(alone(members, &issued)),
        claimed => claimed?,
    }
    let docs_coll = round.coll.clone_with_type::<Document>();
    let Err(e) = docs_coll.insert_many(&docs).session(&mut *session).await else {
        return Ok((taken.into_iter().map(|(id, _)| id).collect(), docs));
    };
    let at = insert_many_failed_at(&e);
    let duplicate_id = skip_ahead::duplicate_at::<T>(&e);
    match (
        Error::from_driver_on(e, round.coll.namespace(), Access::Insert),
        at,
    ) {
        (e, Some(at)) if duplicate_id == Some(at) && skip_ahead::on_id_field::<T>(&e) => {
            Err(alone(members, &taken[at].1))
        }
        (Error::Mongo(e), _) if statement_transient(&e) => Err(AttemptFailure::Transient(e)),
        (e, Some(at)) => {
            let _ = members.remove(at).reply.send(Err(e));
            Err(AttemptFailure::Dropped)
        }
        (e, None) => Err(AttemptFailure::Fatal(e)),
    }
}

/// Sends the member whose number `issued` met a claim or a stored document to insert alone;
/// the round goes on without it.
fn alone<I>(members: &mut Vec<Member<I>>, issued: &Issued) -> AttemptFailure {
    let at = members.iter().position(|m| {
        m.taken
            .as_ref()
            .is_some_and(|(_, t)| t.value == issued.value && t.slot.key == issued.slot.key)
    });
    match at {
        Some(at) => {
            let _ = members.remove(at).reply.send(Ok(None));
            AttemptFailure::Dropped
        }
        None => AttemptFailure::Fatal(Error::InvalidArgument {
            argument: "document",
            reason: "a number met a claim that no member of the group took".into(),
        }),
    }
}

/// The transaction body of a round: its members still waiting, and the documents its last
/// run inserted.
struct Group<'r, T: SequentialId> {
    round: &'r Round<T>,
    /// The group's queue, whose waiting inserts join a round that met the counter held.
    queue: &'r GroupQueue<T::Id>,
    members: &'r mut Vec<Member<T::Id>>,
    sent: Vec<Document>,
    /// When its attempts met another group's transaction on the counter, if they did.
    met: Option<HolderMet>,
}

/// When the attempts of a round met the counter held by another group's transaction: the
/// first and the last of them.
#[derive(Clone, Copy)]
struct HolderMet {
    first: Instant,
    last: Instant,
}

impl HolderMet {
    /// How long the round waited for the counter: from its first attempt that met the holder
    /// to its last.
    fn waited(self) -> Duration {
        self.last - self.first
    }
}

impl<T: SequentialId> TransactionBody<Vec<T::Id>> for Group<'_, T> {
    fn run<'s>(
        &'s mut self,
        session: &'s mut ClientSession,
    ) -> BoxFuture<'s, std::result::Result<Done<Vec<T::Id>>, AttemptFailure>> {
        Box::pin(async move {
            if self.members.is_empty() {
                // Every member failed on its own: nothing is left to commit.
                return Ok(Done::Abort(Vec::new()));
            }
            let (ids, sent) = self.round.attempt(self.members, session).await?;
            self.sent = sent;
            Ok(Done::Commit(ids))
        })
    }

    fn sent(&self) -> Option<Vec<Document>> {
        Some(self.sent.clone())
    }

    fn waited(&mut self) {
        let last = Instant::now();
        let first = self.met.map_or(last, |met| met.first);
        self.met = Some(HolderMet { first, last });
        // The attempt ended at its counter update, before it wrote anything: the inserts that
        // queued meanwhile join the next one, behind the round's own.
        let bytes = self.members.iter().map(|m| m.bytes).sum();
        let mut state = self.queue.lock();
        state.waiting.retain(|m| !m.reply.is_closed());
        let more = take_waiting(&mut state.waiting, self.members.len(), bytes);
        drop(state);
        self.members.extend(more);
    }
}

/// Gives each member its ID.
fn answer<I>(members: Vec<Member<I>>, ids: Vec<I>) {
    for (member, id) in members.into_iter().zip(ids) {
        let _ = member.reply.send(Ok(Some(id)));
    }
}

/// Gives every member the error `e`.
fn answer_all<I>(members: Vec<Member<I>>, e: &Error) {
    for member in members {
        let _ = member.reply.send(Err(e.clone()));
    }
}

#[cfg(test)]
mod tests {
    use mongodb::bson::doc;

    use super::*;

    fn waiting(sizes: &[usize]) -> VecDeque<Member<i64>> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &bytes)| Member {
                doc: doc! { "i": i as i64 },
                bytes,
                taken: None,
                scoped: None,
                reply: tokio::sync::oneshot::channel().0,
            })
            .collect()
    }

    /// The positions in the queue of the members of the next round.
    fn round(waiting: &mut VecDeque<Member<i64>>) -> Vec<i64> {
        next_round(waiting)
            .iter()
            .map(|m| m.doc.get_i64("i").unwrap())
            .collect()
    }

    #[test]
    fn a_round_takes_at_most_max_docs_documents() {
        let mut queue = waiting(&[100; MAX_DOCS + 44]);
        assert_eq!(round(&mut queue), (0..MAX_DOCS as i64).collect::<Vec<_>>());
        assert_eq!(
            round(&mut queue),
            (MAX_DOCS as i64..MAX_DOCS as i64 + 44).collect::<Vec<_>>()
        );
        assert!(round(&mut queue).is_empty());
    }

    #[test]
    fn a_round_takes_documents_in_order_up_to_max_bytes() {
        let half = MAX_BYTES / 2;
        let mut exact = waiting(&[half, half, 1]);
        assert_eq!(round(&mut exact), [0, 1], "exactly `MAX_BYTES` fits");
        assert_eq!(round(&mut exact), [2]);
        let mut over = waiting(&[half, half + 1, 1]);
        assert_eq!(
            round(&mut over),
            [0],
            "a small document does not overtake one that does not fit"
        );
        assert_eq!(round(&mut over), [1, 2]);
    }

    #[test]
    fn waiting_inserts_join_a_round_within_its_limits() {
        let ids = |taken: Vec<Member<i64>>| -> Vec<i64> {
            taken.iter().map(|m| m.doc.get_i64("i").unwrap()).collect()
        };
        let mut queue = waiting(&[100; 20]);
        assert_eq!(
            ids(take_waiting(&mut queue, MAX_DOCS - 3, 0)),
            [0, 1, 2],
            "up to `MAX_DOCS` in the round, in order"
        );
        assert!(take_waiting(&mut queue, MAX_DOCS, 0).is_empty());
        assert_eq!(
            ids(take_waiting(&mut queue, 1, MAX_BYTES - 250)),
            [3, 4],
            "up to `MAX_BYTES` with the round's own"
        );
        let mut big = waiting(&[MAX_BYTES + 1]);
        assert!(
            take_waiting(&mut big, 1, 1).is_empty(),
            "a round with members leaves a document that does not fit"
        );
        assert_eq!(ids(take_waiting(&mut big, 0, 0)), [0]);
    }

    #[test]
    fn the_pause_after_a_round_that_met_the_holder_is_its_wait_within_bounds() {
        let ms = Duration::from_millis;
        assert_eq!(
            pause_after(Duration::ZERO),
            MIN_PAUSE,
            "one attempt met the holder"
        );
        assert_eq!(pause_after(ms(4)), ms(4), "the others' turns");
        assert_eq!(pause_after(ms(60_000)), MAX_PAUSE, "a holder that stayed");
    }

    #[test]
    fn a_document_larger_than_max_bytes_goes_in_a_round_of_its_own() {
        let mut queue = waiting(&[MAX_BYTES + 1, 1, MAX_BYTES + 1]);
        assert_eq!(round(&mut queue), [0]);
        assert_eq!(round(&mut queue), [1]);
        assert_eq!(round(&mut queue), [2]);
    }
}
