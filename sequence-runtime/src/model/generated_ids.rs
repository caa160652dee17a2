//! Inserts of the `uuid`, `uuid_v7` and `object_id` strategies.

use mongodb::action::Action;
use mongodb::options::InsertManyOptions;
use mongodb::{ClientSession, Collection};

use super::sequential_id::SequentialId;
use crate::error::driver::Access;
use crate::error::{Error, Result};
use crate::id::{Generated, IdValue};

/// A fresh ID of the model's strategy, if it makes values without a counter (`uuid`,
/// `uuid_v7`, `object_id`); an error if the model's ID type cannot hold it.
pub(crate) fn fresh<T: SequentialId>() -> Option<Result<T::Id>> {
    Generated::new(T::SEQUENCE.strategy).map(T::Id::from_generated)
}

/// Gives each of `docs` a fresh value of the model's strategy and inserts them with one
/// `insert_many`, in `session` if given.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
    session: Option<&mut ClientSession>,
    options: Option<&InsertManyOptions>,
) -> Result<Vec<T::Id>> {
    let strategy = T::SEQUENCE.strategy;
    let unsupported = || Error::Unsupported {
        operation: "generate",
        strategy: strategy.name(),
        hint: "",
    };
    let mut ids = Vec::with_capacity(docs.len());
    for doc in docs.iter_mut() {
        let id = fresh::<T>().ok_or_else(unsupported)??;
        doc.set_id(id.clone());
        ids.push(id);
    }
    if !docs.is_empty() {
        coll.insert_many(&*docs)
            .with_options(options.cloned())
            .optional(session, |a, s| a.session(s))
            .await
            .map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::Insert))?;
    }
    Ok(ids)
}
