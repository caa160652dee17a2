//! The indexes a model needs, from its configuration (see `action::EnsureIndexes`, which
//! creates them), and the warning of the first insert into a collection that lacks the unique
//! index of its ID field.

use std::any::TypeId;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{LazyLock, Mutex, PoisonError};

use mongodb::bson::Document;
use mongodb::Collection;
use sequence_rules::Unique;

use super::sequential_id::{target_of, SequentialId};
use crate::action::find_index;
use crate::observability::INSERT;

/// On the first insert of `T` in this process, when `T` needs a unique index on its ID field
/// in `coll` that is missing, logs a warning naming the index to create: without it, an insert
/// cannot detect a stored ID (imported, or another writer's) and two documents may hold one.
/// The insert goes on either way. Models whose ID is `_id` without a scope need nothing, and
/// pay nothing.
pub(crate) async fn warn_once_if_missing<T: SequentialId>(coll: &Collection<T>) {
    let config = &T::SEQUENCE;
    if config.unique != Unique::Index || (config.id_field == "_id" && config.scope.is_empty()) {
        return;
    }
    thread_local! {
        static SEEN: RefCell<Vec<TypeId>> = const { RefCell::new(Vec::new()) };
    }
    let model = TypeId::of::<T>();
    if SEEN.with(|seen| seen.borrow().contains(&model)) {
        return;
    }
    SEEN.with(|seen| seen.borrow_mut().push(model));
    static CHECKED: LazyLock<Mutex<HashSet<TypeId>>> = LazyLock::new(Default::default);
    if !CHECKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(model)
    {
        return;
    }
    let Some(needed) = target_of(coll).id_index() else {
        return;
    };
    let target = coll.clone_with_type::<Document>();
    match find_index(&target, &needed.keys).await {
        Ok(Some(found)) if found.unique => {}
        Ok(_) => tracing::warn!(
            target: INSERT,
            collection = %coll.namespace(),
            index = %needed.keys,
            "Unique index missing"
        ),
        Err(e) => tracing::debug!(
            target: INSERT,
            collection = %coll.namespace(),
            error = %e,
            "Indexes not checked"
        ),
    }
}
