//! The actions a model's operations return, in the driver's style: `.await` one directly, or
//! first give it the caller's session (`.session(&mut s)`) and the options of the write it
//! makes (`.with_options(...)`, `.write_concern(...)`).
//!
//! In a session, a `counter` model (gapless or not) takes its numbers with a counter update in
//! that session, bypassing the cache: inside a transaction they are consumed only if the
//! transaction commits, and an abort leaves neither the documents nor used numbers. The other
//! strategies take their IDs as they do without a session and write in the session. A write
//! in the caller's session is sent once: retrying it is the caller's transaction's business.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};

use mongodb::bson::Document;
use mongodb::options::{InsertManyOptions, InsertOneOptions, WriteConcern};
use mongodb::{ClientSession, Collection};

use super::gapless::{self, Docs};
use super::{cached, counted, generated, group, proxy, random, scope, upsert, SequentialId};
use crate::error::{Error, Result};
use crate::store::BoxFuture;
use crate::values::{Generated, IdValue};
use sequence_rules::{Strategy, Unique};

/// The refusal of a write concern on a gapless insert outside the caller's session.
fn gapless_write_concern() -> Error {
    Error::InvalidArgument {
        argument: "write_concern",
        reason: "a gapless insert commits its own transaction with write concern `majority`, \
                 which keeps its numbers gapless across a failover; remove `write_concern`, or \
                 insert in your own session and choose the transaction's write concern there"
            .into(),
    }
}

/// Puts `wc` into `options`, creating them if needed.
fn with_write_concern<O: Default>(
    options: &mut Option<O>,
    wc: WriteConcern,
    field: impl FnOnce(&mut O) -> &mut Option<WriteConcern>,
) {
    *field(options.get_or_insert_with(O::default)) = Some(wc);
}

/// The action returned by `insert_with_id`: takes the next ID, stores it in the ID field,
/// inserts the document and returns the ID. `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct InsertWithId<'a, T: SequentialId> {
    doc: &'a mut T,
    coll: &'a Collection<T>,
    session: Option<&'a mut ClientSession>,
    options: Option<InsertOneOptions>,
}

impl<'a, T: SequentialId> InsertWithId<'a, T> {
    pub(crate) fn new(doc: &'a mut T, coll: &'a Collection<T>) -> Self {
        InsertWithId {
            doc,
            coll,
            session: None,
            options: None,
        }
    }

    /// Runs the insert (and, for the `counter` strategy, the counter update) in `session`.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The options of the `insert_one` underneath (write concern, document validation,
    /// comment). The counter's own update keeps write concern `majority`.
    pub fn with_options(mut self, options: impl Into<Option<InsertOneOptions>>) -> Self {
        self.options = options.into();
        self
    }

    /// The write concern of the insert (not of the counter update, which stays `majority`).
    /// A gapless insert outside the caller's session refuses one with
    /// [`Error::InvalidArgument`]: it commits with `majority`.
    pub fn write_concern(mut self, wc: WriteConcern) -> Self {
        with_write_concern(&mut self.options, wc, |o| &mut o.write_concern);
        self
    }
}

impl<'a, T: SequentialId> IntoFuture for InsertWithId<'a, T> {
    type Output = Result<T::Id>;
    type IntoFuture = BoxFuture<'a, Result<T::Id>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let InsertWithId {
                doc,
                coll,
                session,
                options,
            } = self;
            let options = options.as_ref();
            let config = &T::SEQUENCE;
            if let Some(session) = session {
                return in_session::insert_one(doc, coll, session, options).await;
            }
            if config.gapless {
                if options.is_some_and(|o| o.write_concern.is_some()) {
                    return Err(gapless_write_concern());
                }
                return group::insert_one(doc, coll, &T::sequence(coll), options).await;
            }
            if config.unique == Unique::Proxy {
                return proxy::insert_one(doc, coll, options).await;
            }
            match config.strategy {
                Strategy::Random => random::insert_one(doc, coll, None, options).await,
                s if s.uses_counters() => counted::insert_one(doc, coll, options).await,
                _ => {
                    let id = T::Id::from_generated(generated::value(config.strategy)?)?;
                    doc.set_id(id.clone());
                    super::insert::insert_one(coll, &*doc, options).await?;
                    Ok(id)
                }
            }
        })
    }
}

/// The action returned by `insert_many_with_ids`: gives every document an ID (with a counter:
/// one contiguous range, in one round trip per scope), inserts them with one `insert_many`
/// and returns the IDs in order. `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct InsertManyWithIds<'a, T: SequentialId> {
    docs: &'a mut [T],
    coll: &'a Collection<T>,
    session: Option<&'a mut ClientSession>,
    options: Option<InsertManyOptions>,
}

impl<'a, T: SequentialId> InsertManyWithIds<'a, T> {
    pub(crate) fn new(docs: &'a mut [T], coll: &'a Collection<T>) -> Self {
        InsertManyWithIds {
            docs,
            coll,
            session: None,
            options: None,
        }
    }

    /// Runs the insert (and, for the `counter` strategy, the counter update) in `session`.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The options of the `insert_many` underneath (write concern, document validation,
    /// comment). `ordered` is this crate's to choose: the counter strategies insert in order
    /// (so that the documents after one that met a stored ID are the ones to number again),
    /// the random strategy unordered (so that only colliding draws are sent again).
    pub fn with_options(mut self, options: impl Into<Option<InsertManyOptions>>) -> Self {
        self.options = options.into();
        self
    }

    /// The write concern of the insert (not of the counter update, which stays `majority`).
    /// A gapless insert outside the caller's session refuses one with
    /// [`Error::InvalidArgument`]: it commits with `majority`.
    pub fn write_concern(mut self, wc: WriteConcern) -> Self {
        with_write_concern(&mut self.options, wc, |o| &mut o.write_concern);
        self
    }
}

impl<'a, T: SequentialId> IntoFuture for InsertManyWithIds<'a, T> {
    type Output = Result<Vec<T::Id>>;
    type IntoFuture = BoxFuture<'a, Result<Vec<T::Id>>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let InsertManyWithIds {
                docs,
                coll,
                session,
                options,
            } = self;
            let options = options.as_ref();
            let config = &T::SEQUENCE;
            if config.unique == Unique::Proxy && !(config.gapless && session.is_none()) {
                // One claimed insert per document, each in its own transaction or all in the
                // caller's (a gapless bulk insert claims all in its one transaction).
                let one = options.map(proxy::one_options);
                let mut ids = Vec::with_capacity(docs.len());
                match session {
                    Some(session) => {
                        for doc in docs.iter_mut() {
                            ids.push(
                                in_session::insert_one(doc, coll, session, one.as_ref()).await?,
                            );
                        }
                    }
                    None => {
                        for doc in docs.iter_mut() {
                            ids.push(proxy::insert_one(doc, coll, one.as_ref()).await?);
                        }
                    }
                }
                return Ok(ids);
            }
            match config.strategy {
                Strategy::Random => return random::insert_many(docs, coll, session, options).await,
                s if !s.is_numeric() => {
                    return generated::insert_many(docs, coll, session, options).await
                }
                _ => {}
            }
            if docs.is_empty() {
                return Ok(Vec::new());
            }
            if let Some(session) = session {
                return in_session::insert_many(docs, coll, session, options).await;
            }
            if config.gapless {
                if options.is_some_and(|o| o.write_concern.is_some()) {
                    return Err(gapless_write_concern());
                }
                let seq = T::sequence(coll);
                return gapless::insert(Docs::Many(docs, options), coll, &seq).await;
            }
            counted::insert_many(docs, coll, options).await
        })
    }
}

/// The action returned by `upsert_with_id`: updates the document a filter matches, keeping its
/// stored ID, or inserts this document with a new ID; returns the stored ID. `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct UpsertWithId<'a, T: SequentialId> {
    doc: &'a mut T,
    coll: &'a Collection<T>,
    filter: Document,
    session: Option<&'a mut ClientSession>,
    write_concern: Option<WriteConcern>,
}

impl<'a, T: SequentialId> UpsertWithId<'a, T> {
    pub(crate) fn new(doc: &'a mut T, coll: &'a Collection<T>, filter: Document) -> Self {
        UpsertWithId {
            doc,
            coll,
            filter,
            session: None,
            write_concern: None,
        }
    }

    /// Runs the update, the counter update (for the `counter` strategy) and the upsert in
    /// `session`. Nothing is sent again.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The write concern of the update and the upsert (not of the counter update, which stays
    /// `majority`). A gapless upsert outside the caller's session refuses one with
    /// [`Error::InvalidArgument`]: it commits with `majority`.
    pub fn write_concern(mut self, wc: WriteConcern) -> Self {
        self.write_concern = Some(wc);
        self
    }
}

impl<'a, T: SequentialId> IntoFuture for UpsertWithId<'a, T> {
    type Output = Result<T::Id>;
    type IntoFuture = BoxFuture<'a, Result<T::Id>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let UpsertWithId {
                doc,
                coll,
                filter,
                session,
                write_concern,
            } = self;
            if T::SEQUENCE.gapless && session.is_none() && write_concern.is_some() {
                return Err(gapless_write_concern());
            }
            upsert::upsert(doc, coll, filter, session, write_concern).await
        })
    }
}

/// The action returned by `next_id` and `next_id_for`: takes the next ID without inserting
/// anything. `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct NextId<'a, T: SequentialId> {
    coll: &'a Collection<T>,
    /// The document whose scope values choose the counter (`next_id_for`).
    doc: Option<&'a T>,
    session: Option<&'a mut ClientSession>,
}

impl<'a, T: SequentialId> NextId<'a, T> {
    pub(crate) fn new(coll: &'a Collection<T>, doc: Option<&'a T>) -> Self {
        NextId {
            coll,
            doc,
            session: None,
        }
    }

    /// Takes the number with a counter update in `session` (`counter` strategy, bypassing the
    /// cache): inside a transaction it is consumed only if the transaction commits, which is
    /// also the one way a gapless model hands out a number without inserting. Other strategies
    /// make their value as without a session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }
}

/// The future of a [`NextId`]: a value from this process's cache is ready at once, without an
/// allocation (and rendered as the ID only when polled); anything else goes to the counter.
#[must_use = "a future does nothing until it is polled"]
pub struct NextIdFuture<'a, I>(NextIdState<'a, I>);

enum NextIdState<'a, I> {
    Cached(Option<i64>),
    Pending(BoxFuture<'a, Result<I>>),
}

impl<I: IdValue> Future for NextIdFuture<'_, I> {
    type Output = Result<I>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<I>> {
        match &mut self.0 {
            NextIdState::Cached(value) => {
                let value = value
                    .take()
                    .expect("a `NextIdFuture` polled after it was ready");
                Poll::Ready(I::from_counter(value))
            }
            NextIdState::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

impl<'a, T: SequentialId> IntoFuture for NextId<'a, T> {
    type Output = Result<T::Id>;
    type IntoFuture = NextIdFuture<'a, T::Id>;

    fn into_future(self) -> Self::IntoFuture {
        if self.session.is_none() {
            if let Some(value) = cached::cached_id(self.coll) {
                return NextIdFuture(NextIdState::Cached(Some(value)));
            }
        }
        NextIdFuture(NextIdState::Pending(Box::pin(async move {
            let NextId { coll, doc, session } = self;
            let seq = T::sequence(coll);
            let seq = match doc {
                Some(doc) => scope::for_document(seq, doc)?,
                None => seq,
            };
            if let Some(session) = session {
                if T::SEQUENCE.strategy == Strategy::Counter {
                    return seq.issue_id_in::<T::Id>(session).await.map(|(id, _)| id);
                }
            }
            if let Some(value) = Generated::new(T::SEQUENCE.strategy) {
                return T::Id::from_generated(value);
            }
            seq.next_id::<T::Id>().await
        })))
    }
}

/// The paths of writes in the caller's session.
mod in_session {
    use mongodb::options::{InsertManyOptions, InsertOneOptions};
    use mongodb::{ClientSession, Collection};

    use super::super::doc::Doc;
    use super::super::{proxy, random, scope, skip_ahead, SequentialId};
    use crate::error::{Access, Error, Result};
    use crate::sequence::Issued;
    use sequence_rules::{Strategy, Unique};

    /// The error of a write in `coll`: a duplicate on the ID field of a value the counter gave
    /// is [`Error::IdTaken`] (the caller's session is not retried), anything else as mapped.
    fn refused<T: Doc>(
        coll: &Collection<T>,
        e: mongodb::error::Error,
        ids: &[(T::Id, Issued)],
        at: Option<usize>,
    ) -> Error {
        let e = Error::from_driver_on(e, coll.namespace(), Access::Insert);
        match at.and_then(|at| ids.get(at)) {
            Some((id, issued)) if skip_ahead::on_id_field::<T>(&e) => {
                skip_ahead::taken(coll, id, issued, e, skip_ahead::IN_SESSION)
            }
            _ => e,
        }
    }

    /// `insert_with_id` in `session`.
    pub(super) async fn insert_one<T: SequentialId>(
        doc: &mut T,
        coll: &Collection<T>,
        session: &mut ClientSession,
        options: Option<&InsertOneOptions>,
    ) -> Result<T::Id> {
        let proxy = T::SEQUENCE.unique == Unique::Proxy;
        let (id, issued) = match T::SEQUENCE.strategy {
            Strategy::Random if !proxy => {
                return random::insert_one(doc, coll, Some(session), options).await
            }
            Strategy::Counter => {
                let seq = scope::for_document(T::sequence(coll), &*doc)?;
                let (id, issued) = seq.issue_id_in::<T::Id>(session).await?;
                (id.clone(), vec![(id, issued)])
            }
            _ => (T::next_id_for(doc, coll).await?, Vec::new()),
        };
        doc.set_id(id.clone());
        let inserted = if proxy {
            let document = proxy::claim_in(&*doc, coll, session).await?;
            coll.clone_with_type()
                .insert_one(document)
                .with_options(options.cloned())
                .session(session)
                .await
        } else {
            coll.insert_one(&*doc)
                .with_options(options.cloned())
                .session(session)
                .await
        };
        match inserted {
            Ok(_) => Ok(id),
            Err(e) => Err(refused(coll, e, &issued, Some(0))),
        }
    }

    /// `insert_many_with_ids` in `session`, for the strategies with counters: one reservation
    /// per scope, in the session.
    pub(super) async fn insert_many<T: SequentialId>(
        docs: &mut [T],
        coll: &Collection<T>,
        session: &mut ClientSession,
        options: Option<&InsertManyOptions>,
    ) -> Result<Vec<T::Id>> {
        let issued = match T::SEQUENCE.strategy {
            Strategy::Counter => scope::issue_all(&T::sequence(coll), docs, Some(session)).await?,
            // Shards are not numbered in a session: their ranges come as without one.
            _ => scope::issue_all(&T::sequence(coll), docs, None).await?,
        };
        for (doc, (id, _)) in docs.iter_mut().zip(&issued) {
            doc.put_id(id.clone());
        }
        let mut options = options.cloned().unwrap_or_default();
        options.ordered = Some(true);
        match coll
            .insert_many(&*docs)
            .with_options(options)
            .session(session)
            .await
        {
            Ok(_) => Ok(issued.into_iter().map(|(id, _)| id).collect()),
            Err(e) => {
                let at = skip_ahead::duplicate_at::<T>(&e);
                Err(refused(coll, e, &issued, at))
            }
        }
    }
}
