//! Inserts of the `uuid`, `uuid_v7` and `object_id` strategies.

use mongodb::options::InsertManyOptions;
use mongodb::{ClientSession, Collection};
use sequence_rules::Strategy;

use super::sequential_id::SequentialId;
use crate::error::driver::Access;
use crate::error::{Error, Result};
use crate::id::{Generated, IdValue};

/// A fresh value of `strategy`, which must be one that makes values without a counter.
pub(crate) fn value(strategy: Strategy) -> Result<Generated> {
    Generated::new(strategy).ok_or(Error::Unsupported {
        operation: "generate",
        strategy: strategy.name(),
        hint: "",
    })
}

/// Gives each of `docs` a fresh value of the model's strategy and inserts them with one
/// `insert_many`, in `session` if given.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
    session: Option<&mut ClientSession>,
    options: Option<&InsertManyOptions>,
) -> Result<Vec<T::Id>> {
    let mut ids = Vec::with_capacity(docs.len());
    for doc in docs.iter_mut() {
        let id = T::Id::from_generated(value(T::SEQUENCE.strategy)?)?;
        doc.set_id(id.clone());
        ids.push(id);
    }
    if !docs.is_empty() {
        let insert = coll.insert_many(&*docs).with_options(options.cloned());
        match session {
            Some(session) => insert.session(session).await,
            None => insert.await,
        }
        .map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::Insert))?;
    }
    Ok(ids)
}
