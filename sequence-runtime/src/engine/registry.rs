//! The process-wide registry: one cache per (database, counters collection, counter), and the
//! other per-process state of a sequence (such as the full shards of a ranges one).

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use mongodb::Collection;

use super::cache::ProcessState;
use crate::store::Deployment;

type Entry = Arc<dyn Any + Send + Sync>;

static REGISTRY: LazyLock<RwLock<HashMap<String, Entry>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// Where counters are kept, as the registry's ids start: the deployment, the database and the
/// counters collection.
pub(crate) fn place(deployment: Deployment, db: &str, counters: &str) -> String {
    format!("{deployment}\0{db}\0{counters}")
}

/// The shared cache of the counter `key` kept at `place` (see [`place`]), created on first use.
///
/// Every handle of the same counter in this process, however it was created, shares one cache,
/// so that many model instances or tasks do not each hold a reserved range.
pub(crate) fn shared(place: &str, key: &str) -> Arc<ProcessState> {
    entry(format!("{place}\0{key}"), ProcessState::default)
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

/// Removes the entry `id` if it is `value` (not another one registered since).
pub(crate) fn remove_entry<T: Any + Send + Sync>(id: &str, value: &Arc<T>) {
    let mut map = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    let same = map
        .get(id)
        .is_some_and(|entry| std::ptr::addr_eq(Arc::as_ptr(entry), Arc::as_ptr(value)));
    if same {
        map.remove(id);
    }
}

/// How many entries of the registry have an id containing `needle` (a namespace, a counter
/// name): what a process keeps of the sequences it uses.
pub(crate) fn entries(needle: &str) -> usize {
    let map = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    map.keys().filter(|id| id.contains(needle)).count()
}

/// How many (model, collection handle) pairs each thread remembers.
const RECENT_CAPACITY: usize = 16;

/// A model type, and the collection handle it is used with, by address (see
/// [`Deployment::handle_address`]).
type HandleKey = (TypeId, usize);

/// Values of a thread per model type and collection handle, the most recently used last, at
/// most [`RECENT_CAPACITY`]: a lookup neither reads the handle's namespace, nor formats a key,
/// nor takes a lock. Each entry keeps a clone of its handle, so that the address stays the
/// handle's own while it is remembered.
pub(crate) struct HandleMemo<V> {
    recent: Vec<(HandleKey, Box<dyn Any>, V)>,
}

impl<V> HandleMemo<V> {
    /// An empty memo.
    pub(crate) const fn new() -> Self {
        HandleMemo { recent: Vec::new() }
    }

    /// The value of `model` with `coll`, made by `make` when it is not remembered.
    pub(crate) fn get<T: Send + Sync + 'static>(
        &mut self,
        model: TypeId,
        coll: &Collection<T>,
        make: impl FnOnce() -> V,
    ) -> &V {
        let handle = (model, Deployment::handle_address(coll.client()));
        let recent = &mut self.recent;
        let last = match recent.iter().rposition(|(k, _, _)| *k == handle) {
            Some(i) => {
                let last = recent.len() - 1;
                recent.swap(i, last);
                last
            }
            None => {
                if recent.len() == RECENT_CAPACITY {
                    recent.remove(0);
                }
                recent.push((handle, Box::new(coll.clone()), make()));
                recent.len() - 1
            }
        };
        &recent[last].2
    }
}

thread_local! {
    /// The caches this thread used last, by model and collection handle.
    static RECENT: RefCell<HandleMemo<Arc<ProcessState>>> = const { RefCell::new(HandleMemo::new()) };
}

/// Calls `f` with the shared cache of the counter of a model used with `coll`: the same cache
/// as [`shared`]`(place(deployment, db, counters), key())` for the deployment and database of
/// `coll`, remembered per thread under the model's type, whose configuration fixes `counters`
/// and `key`.
pub(crate) fn with_model_shared<T: Send + Sync + 'static, R>(
    model: TypeId,
    coll: &Collection<T>,
    counters: &str,
    key: impl FnOnce() -> String,
    f: impl FnOnce(&ProcessState) -> R,
) -> R {
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        let cache = recent.get(model, coll, || {
            let deployment = Deployment::of_collection(coll);
            shared(&place(deployment, &coll.namespace().db, counters), &key())
        });
        // `f` gets a reference: no reference count is touched on the way.
        f(cache)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct ModelA;
    struct ModelB;

    #[tokio::test]
    async fn model_lookups_find_the_registry_entry() {
        let a = TypeId::of::<ModelA>();
        let b = TypeId::of::<ModelB>();
        let uri = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=10";
        let client = mongodb::Client::with_uri_str(uri).await.unwrap();
        let deployment = Deployment::of_database(&client.database("x"));
        // More handles than a thread remembers, twice over: hits and misses alike must give the
        // registry's cache of the counter of the handle's database.
        let handles: Vec<_> = (0..RECENT_CAPACITY + 4)
            .map(|i| {
                let db = format!("registry_test_{i}");
                (client.database(&db).collection::<()>("c"), db)
            })
            .collect();
        for _ in 0..2 {
            for (coll, db) in &handles {
                for (model, key) in [(a, "s:a"), (b, "s:b")] {
                    let expected = shared(&place(deployment, db, "counters"), key);
                    let same = with_model_shared(
                        model,
                        &coll.clone(),
                        "counters",
                        || key.to_owned(),
                        |s| std::ptr::eq(s, &*expected),
                    );
                    assert!(same, "model {key} in {db}");
                }
            }
        }
    }
}
