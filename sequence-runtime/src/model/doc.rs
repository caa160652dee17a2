//! What the insert paths need of a model's documents.
//!
//! The public [`SequentialId`](crate::SequentialId) trait provides the insert methods, and the
//! insert paths of each strategy (in the files beside this one) are generic over this trait,
//! which every `SequentialId` type implements: so the paths do not depend on the public trait
//! that calls them.

use mongodb::bson::Bson;
use mongodb::Collection;
use serde::Serialize;

use crate::error::Result;
use crate::options::SequenceConfig;
use crate::sequence::Sequence;
use crate::values::IdValue;

/// A model whose documents get their ID from a sequence, as the insert paths see it.
pub(crate) trait Doc: Serialize + Send + Sync + Sized + 'static {
    /// The type of the ID.
    type Id: IdValue;

    /// The model's configuration.
    const CONFIG: SequenceConfig;

    /// Stores `id` in the ID field.
    fn put_id(&mut self, id: Self::Id);

    /// The values of the `scope` fields, in `scope` order.
    fn scope_of(&self) -> Result<Vec<(&'static str, Bson)>>;

    /// The model's sequence for `coll`.
    fn sequence_of(coll: &Collection<Self>) -> Sequence;
}
