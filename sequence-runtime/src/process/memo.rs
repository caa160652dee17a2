//! Per-thread memos of what a model's calls need, by model type and collection handle: the
//! shared state of a model's counter (the hot path of cached IDs), and a model's `Sequence`.
//! A collection handle is kept alive while remembered, so that its address stays its own.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::sync::Arc;

use mongodb::Collection;

use super::cache::ProcessState;
use super::registry::shared;
use crate::observability::{Labels, Place};
use crate::store::Deployment;

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
/// as [`shared`]`(Place::collection(deployment, db, counters), key())` for the deployment and database of
/// `coll`, remembered per thread under the model's type, whose configuration fixes `counters`
/// and `key` (and `labels`, which name the sequence).
pub(crate) fn with_model_shared<T: Send + Sync + 'static, R>(
    model: TypeId,
    coll: &Collection<T>,
    counters: &str,
    key: impl FnOnce() -> String,
    labels: impl FnOnce() -> Labels,
    f: impl FnOnce(&ProcessState) -> R,
) -> R {
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        let cache = recent.get(model, coll, || {
            let deployment = Deployment::of_collection(coll);
            shared(
                &Place::collection(deployment, &coll.namespace().db, counters),
                &key(),
                labels,
            )
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
                    let expected = shared(
                        &Place::collection(deployment, db, "counters"),
                        key,
                        Labels::default,
                    );
                    let same = with_model_shared(
                        model,
                        &coll.clone(),
                        "counters",
                        || key.to_owned(),
                        Labels::default,
                        |s| std::ptr::eq(s, &*expected),
                    );
                    assert!(same, "model {key} in {db}");
                }
            }
        }
    }
}
