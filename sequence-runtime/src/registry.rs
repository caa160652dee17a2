//! The process-wide registry: one cache per (database, counters collection, counter).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use crate::cache::Shared;

static REGISTRY: LazyLock<RwLock<HashMap<String, Arc<Shared>>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// The shared cache of a counter, created on first use.
///
/// Every handle of the same counter in this process, however it was created, shares one cache,
/// so that many model instances or tasks do not each hold a reserved range.
pub(crate) fn shared(db: &str, counters: &str, key: &str) -> Arc<Shared> {
    let id = format!("{db}\0{counters}\0{key}");
    if let Some(found) = REGISTRY
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
    {
        return found.clone();
    }
    REGISTRY
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(id)
        .or_default()
        .clone()
}
