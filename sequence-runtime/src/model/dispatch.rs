//! Awaiting a model's action: which insert path the model's strategy takes, and the paths in
//! the caller's session.

use std::future::IntoFuture;

use super::cached_id::Cached;
use super::gapless::{self, Docs};
use super::sequential_id::SequentialId;
use super::{
    cached_id, counter_ids, document_scope, gapless_group, generated_ids, in_session, indexes,
    proxy, proxy_group, random_ids, upsert,
};
use crate::action::{InsertManyWithIds, InsertWithId, NextId, NextIdFuture, UpsertWithId};
use crate::error::{Error, Result};

use crate::store::BoxFuture;
use mongodb::options::WriteConcern;
use mongodb::Collection;
use sequence_rules::{Strategy, Unique};

/// What every write of a model does first: warns once if the collection lacks an index the
/// model needs, and refuses a write concern of the caller's on a gapless write outside the
/// caller's session (`in_session`), since such a write commits its own transaction.
async fn before_writing<T: SequentialId>(
    coll: &Collection<T>,
    in_session: bool,
    write_concern: Option<&WriteConcern>,
) -> Result<()> {
    indexes::warn_once_if_missing(coll).await;
    if T::SEQUENCE.gapless && !in_session && write_concern.is_some() {
        return Err(Error::InvalidArgument {
            argument: "write_concern",
            reason: "a gapless insert commits its own transaction with write concern \
                     `majority`, which keeps its numbers gapless across a failover; remove \
                     `write_concern`, or insert in your own session and choose the \
                     transaction's write concern there"
                .into(),
        });
    }
    Ok(())
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
            let write_concern = options.and_then(|o| o.write_concern.as_ref());
            before_writing(coll, session.is_some(), write_concern).await?;
            let config = &T::SEQUENCE;
            if let Some(session) = session {
                return in_session::insert_one(doc, coll, session, options).await;
            }
            if config.gapless {
                return gapless_group::insert_one(doc, coll, &T::sequence(coll), options).await;
            }
            if config.unique == Unique::Proxy {
                return proxy_group::insert_one(doc, coll, options).await;
            }
            if let Some(id) = generated_ids::fresh::<T>() {
                let id = id?;
                doc.set_id(id.clone());
                super::insert::insert_one(coll, &*doc, options).await?;
                return Ok(id);
            }
            if config.strategy == Strategy::Random {
                random_ids::insert_one(doc, coll, None, options).await
            } else {
                counter_ids::insert_one(doc, coll, options).await
            }
        })
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
            let write_concern = options.and_then(|o| o.write_concern.as_ref());
            before_writing(coll, session.is_some(), write_concern).await?;
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
                Strategy::Random => {
                    return random_ids::insert_many(docs, coll, session, options).await
                }
                s if !s.is_numeric() => {
                    return generated_ids::insert_many(docs, coll, session, options).await
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
                let seq = T::sequence(coll);
                return gapless::insert(Docs::Many(docs, options), coll, &seq).await;
            }
            counter_ids::insert_many(docs, coll, options).await
        })
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
                options,
            } = self;
            let write_concern = options.as_ref().and_then(|o| o.write_concern.as_ref());
            before_writing(coll, session.is_some(), write_concern).await?;
            upsert::upsert(doc, coll, filter, session, options).await
        })
    }
}

impl<'a, T: SequentialId> IntoFuture for NextId<'a, T> {
    type Output = Result<T::Id>;
    type IntoFuture = NextIdFuture<'a, T::Id>;

    fn into_future(self) -> Self::IntoFuture {
        if self.session.is_none() {
            match cached_id::cached_id(self.coll) {
                Some(Cached::Taken { id, .. }) => return NextIdFuture::ready(id),
                Some(Cached::Failed(e)) => return NextIdFuture::failed(*e),
                Some(Cached::Later(seq, later)) => {
                    return NextIdFuture::pending(Box::pin(async move {
                        Ok(seq.finish_id::<T::Id>(later).await?.0)
                    }))
                }
                None => {}
            }
        }
        NextIdFuture::pending(Box::pin(async move {
            let NextId { coll, doc, session } = self;
            let seq = T::sequence(coll);
            let seq = match doc {
                Some(doc) => document_scope::for_document(seq, doc)?,
                None => seq,
            };
            if let Some(session) = session {
                if T::SEQUENCE.strategy == Strategy::Counter {
                    return seq.issue_id_in::<T::Id>(session).await.map(|(id, _)| id);
                }
            }
            if let Some(id) = generated_ids::fresh::<T>() {
                return id;
            }
            seq.next_id::<T::Id>().await
        }))
    }
}
