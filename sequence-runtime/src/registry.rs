//! The process-wide registry: one cache per (database, counters collection, counter), and the
//! other per-process state of a sequence (such as the full shards of a sharded one).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use crate::cache::Shared;

type Entry = Arc<dyn Any + Send + Sync>;

static REGISTRY: LazyLock<RwLock<HashMap<String, Entry>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// The shared cache of a counter, created on first use.
///
/// Every handle of the same counter in this process, however it was created, shares one cache,
/// so that many model instances or tasks do not each hold a reserved range.
pub(crate) fn shared(db: &str, counters: &str, key: &str) -> Arc<Shared> {
    entry(format!("{db}\0{counters}\0{key}"), Shared::default)
}

/// The state of type `T` registered under `id`, created with `make` on first use. Callers give
/// each type ids of its own (a prefix), so that an id never holds another type.
pub(crate) fn entry<T: Any + Send + Sync>(id: String, make: impl FnOnce() -> T) -> Arc<T> {
    let get = |map: &HashMap<String, Entry>| map.get(&id).cloned().map(Arc::downcast::<T>);
    if let Some(Ok(found)) = get(&REGISTRY.read().unwrap_or_else(PoisonError::into_inner)) {
        return found;
    }
    let mut map = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(Ok(found)) = get(&map) {
        return found;
    }
    let fresh = Arc::new(make());
    map.insert(id, fresh.clone());
    fresh
}
