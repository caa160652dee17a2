//! The trait `#[derive(SequentialId)]` implements, and the operations it provides.

use std::any::TypeId;
use std::future::Future;

use mongodb::bson::Bson;
use mongodb::{ClientSession, Collection};
use serde::Serialize;

use crate::config::{BatchConfig, SequenceConfig, Strategy};
use crate::error::{Error, Result};
use crate::gapless::{self, Docs};
use crate::id::IdValue;
use crate::key::CounterKey;
use crate::options::{Batch, DEFAULT_PREFETCH_AT};
use crate::registry;
use crate::sequence::Sequence;

/// A model whose documents get their ID from a sequence.
///
/// Implemented by `#[derive(SequentialId)]`; generic code can take `T: SequentialId` and call
/// the provided methods. The derive also generates inherent methods of the same names, so
/// callers need not import this trait.
pub trait SequentialId: Serialize + Send + Sync + Sized + 'static {
    /// The type of the ID (for an `Option<T>` field, `T`).
    type Id: IdValue;

    /// The configuration from the model's `#[seq(...)]` attributes.
    const SEQUENCE: SequenceConfig;

    /// Stores `id` in the ID field.
    fn set_id(&mut self, id: Self::Id);

    /// The values of the `scope` fields of this document, in `scope` order (empty without
    /// `scope`).
    fn scope_values(&self) -> Result<Vec<(&'static str, Bson)>> {
        Ok(Vec::new())
    }

    /// The sequence of this model for `coll` (its counter lives in `coll`'s database).
    fn sequence(coll: &Collection<Self>) -> Sequence {
        Self::SEQUENCE.sequence(&coll.client().database(coll.namespace().db.as_str()))
    }

    /// Allocates the next ID without inserting anything.
    ///
    /// A gapless sequence refuses with [`Error::Unsupported`]: a number taken outside the
    /// insert's transaction would leave a gap if it were not used.
    fn next_id(coll: &Collection<Self>) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            if Self::SEQUENCE.gapless {
                return Err(Error::Unsupported(format!(
                    "`next_id` would take a number of the gapless sequence `{}` outside the \
                     insert's transaction and leave a gap if it is not used; use \
                     `insert_with_id` or `insert_with_id_in_session`",
                    Self::SEQUENCE.name
                )));
            }
            if let Some(id) = cached_id(coll) {
                return Self::Id::from_counter(id);
            }
            Self::Id::from_counter(Self::sequence(coll).next().await?)
        }
    }

    /// Allocates the next ID, stores it in the ID field, inserts the document and returns the ID.
    ///
    /// If the insert fails, the ID field keeps the allocated value, which is not reused: a
    /// retry of this call takes a new one. A gapless sequence instead runs the counter update
    /// and the insert in one transaction, so a failed insert consumes no number.
    fn insert_with_id(
        &mut self,
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            if Self::SEQUENCE.gapless {
                let seq = Self::sequence(coll);
                let timeout = Self::SEQUENCE.transaction_timeout();
                let ids = gapless::insert(Docs::One(self), coll, &seq, timeout).await?;
                return Ok(ids.into_iter().next().expect("one document, one ID"));
            }
            let id = Self::next_id(coll).await?;
            self.set_id(id.clone());
            coll.insert_one(&*self).await.map_err(Error::from_driver)?;
            Ok(id)
        }
    }

    /// Like [`insert_with_id`](Self::insert_with_id), in `session`: the ID is reserved by a
    /// counter update in the session (not from the batch cache), so when the session is inside
    /// a transaction the number is consumed only if that transaction commits, and an abort
    /// leaves neither the document nor a used number. Outside a transaction the call is
    /// causally consistent with the session's other operations.
    fn insert_with_id_in_session(
        &mut self,
        coll: &Collection<Self>,
        session: &mut ClientSession,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            let range = Self::sequence(coll).reserve_in_session(1, session).await?;
            let id = Self::Id::from_counter(range.first())?;
            self.set_id(id.clone());
            coll.insert_one(&*self)
                .session(session)
                .await
                .map_err(Error::from_driver)?;
            Ok(id)
        }
    }

    /// Reserves one contiguous range for all of `docs` in a single round trip, stores the IDs
    /// and inserts the documents with one `insert_many`. Returns the IDs in order.
    fn insert_many_with_ids(
        docs: &mut [Self],
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Vec<Self::Id>>> + Send {
        async move {
            if docs.is_empty() {
                return Ok(Vec::new());
            }
            if Self::SEQUENCE.gapless {
                let seq = Self::sequence(coll);
                let timeout = Self::SEQUENCE.transaction_timeout();
                return gapless::insert(Docs::Many(docs), coll, &seq, timeout).await;
            }
            let range = Self::sequence(coll).reserve(docs.len() as u64).await?;
            let ids = range
                .iter()
                .map(Self::Id::from_counter)
                .collect::<Result<Vec<_>>>()?;
            for (doc, id) in docs.iter_mut().zip(&ids) {
                doc.set_id(id.clone());
            }
            coll.insert_many(&*docs).await.map_err(Error::from_driver)?;
            Ok(ids)
        }
    }
}

/// The next ID of `M`'s counter straight from this process's cache of it, when the cache holds
/// one and taking it does not make a refill due; `None` otherwise, and for configurations
/// without a cache. This is the same cache a [`Sequence`] uses: the hot path of a batched
/// sequence thus builds no handle (no options, store or registry key) per ID.
fn cached_id<M: SequentialId>(coll: &Collection<M>) -> Option<i64> {
    let config = &M::SEQUENCE;
    // Only a counter keyed by the name alone, with the cache and defaults that
    // `SequenceConfig::sequence` sets up; everything else takes the full path.
    let plain_counter = config.strategy == Strategy::Counter
        && config.scope.is_empty()
        && config.prefix.is_none()
        && !config.gapless;
    if !plain_counter || config.batch == BatchConfig::Fixed(1) {
        return None;
    }
    let batch = Batch::from(config.batch);
    let db = coll.namespace().db;
    registry::with_model_shared(
        TypeId::of::<M>(),
        &db,
        config.counters,
        || CounterKey::named(config.name).canonical().to_owned(),
        |shared| shared.next_cached(batch, DEFAULT_PREFETCH_AT),
    )
}

/// Converts a `scope` field's value to BSON (used by the derive).
pub fn scope_value<T: Serialize + ?Sized>(value: &T) -> Result<Bson> {
    mongodb::bson::to_bson(value)
        .map_err(|e| Error::InvalidOptions(format!("a `scope` field cannot be stored: {e}")))
}
