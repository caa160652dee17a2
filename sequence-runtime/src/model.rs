//! The trait `#[derive(SequentialId)]` implements, and the operations it provides.

use std::future::Future;

use mongodb::bson::Bson;
use mongodb::{ClientSession, Collection};
use serde::Serialize;

use crate::config::SequenceConfig;
use crate::error::{Error, Result};
use crate::id::IdValue;
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

    /// Allocates the next ID without inserting anything. A scoped model (`scope = ...`) has no
    /// document to take the scope from here: this fails with [`Error::ScopeRequired`]; use
    /// [`next_id_for`](Self::next_id_for).
    fn next_id(coll: &Collection<Self>) -> impl Future<Output = Result<Self::Id>> + Send {
        async move { Self::sequence(coll).next_id::<Self::Id>().await }
    }

    /// Allocates the next ID for this document without inserting it: from the counter of its
    /// `scope` values for a scoped model, else like [`next_id`](Self::next_id).
    fn next_id_for(
        &self,
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            let seq = crate::scope::for_document(Self::sequence(coll), self)?;
            seq.next_id::<Self::Id>().await
        }
    }

    /// Allocates the next ID, stores it in the ID field, inserts the document and returns the ID.
    ///
    /// If the insert fails, the ID field keeps the allocated value, which is not reused: a
    /// retry of this call takes a new one.
    fn insert_with_id(
        &mut self,
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            let id = self.next_id_for(coll).await?;
            self.set_id(id.clone());
            coll.insert_one(&*self).await.map_err(Error::from_driver)?;
            Ok(id)
        }
    }

    /// Like [`insert_with_id`](Self::insert_with_id), with the insert in `session`.
    fn insert_with_id_in_session(
        &mut self,
        coll: &Collection<Self>,
        session: &mut ClientSession,
    ) -> impl Future<Output = Result<Self::Id>> + Send {
        async move {
            let id = self.next_id_for(coll).await?;
            self.set_id(id.clone());
            coll.insert_one(&*self)
                .session(session)
                .await
                .map_err(Error::from_driver)?;
            Ok(id)
        }
    }

    /// Reserves one contiguous range for all of `docs` in a single round trip (one per distinct
    /// scope for a scoped model), stores the IDs and inserts the documents with one
    /// `insert_many`. Returns the IDs in order.
    fn insert_many_with_ids(
        docs: &mut [Self],
        coll: &Collection<Self>,
    ) -> impl Future<Output = Result<Vec<Self::Id>>> + Send {
        async move {
            if docs.is_empty() {
                return Ok(Vec::new());
            }
            let ids = crate::scope::ids_for(Self::sequence(coll), docs).await?;
            for (doc, id) in docs.iter_mut().zip(&ids) {
                doc.set_id(id.clone());
            }
            coll.insert_many(&*docs).await.map_err(Error::from_driver)?;
            Ok(ids)
        }
    }
}

/// Converts a `scope` field's value to BSON (used by the derive).
pub fn scope_value<T: Serialize + ?Sized>(value: &T) -> Result<Bson> {
    mongodb::bson::to_bson(value)
        .map_err(|e| Error::InvalidOptions(format!("a `scope` field cannot be stored: {e}")))
}
