//! Inserts of the `uuid`, `uuid_v7` and `object_id` strategies.

use mongodb::Collection;

use super::doc::Doc;
use crate::error::{Access, Error, Result};
use crate::values::{Generated, IdValue};

/// Gives each of `docs` a fresh value of the model's strategy and inserts them with one
/// `insert_many`.
pub(crate) async fn insert_many<T: Doc>(
    docs: &mut [T],
    coll: &Collection<T>,
) -> Result<Vec<T::Id>> {
    let strategy = T::CONFIG.strategy;
    let mut ids = Vec::with_capacity(docs.len());
    for doc in docs.iter_mut() {
        let value = Generated::new(strategy).ok_or_else(|| Error::Unsupported {
            operation: "generate",
            strategy: strategy.name(),
            hint: "",
        })?;
        let id = T::Id::from_generated(value)?;
        doc.put_id(id.clone());
        ids.push(id);
    }
    if !docs.is_empty() {
        coll.insert_many(&*docs)
            .await
            .map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::Insert))?;
    }
    Ok(ids)
}
