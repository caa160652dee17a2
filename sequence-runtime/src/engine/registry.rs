//! The process-wide registry: one cache per (database, counters collection, counter), and the
//! other per-process state of a sequence (such as the full shards of a ranges one).

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock, Weak};

use mongodb::Collection;

use super::cache::ProcessState;
use super::ranges::FullShards;
use super::series::Labels;
use crate::store::Deployment;

/// Where counters are kept: the deployment, the database and the counters collection.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Place {
    deployment: Deployment,
    db: String,
    counters: String,
}

/// Where counters are kept (see [`Place`]).
pub(crate) fn place(deployment: Deployment, db: &str, counters: &str) -> Place {
    Place {
        deployment,
        db: db.to_owned(),
        counters: counters.to_owned(),
    }
}

/// A sequence's counter (by the id `Kind::cache_id` makes) at a place.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CounterAt {
    pub(crate) place: Place,
    pub(crate) counter: String,
}

/// A gapless group: a model, its collection (in a deployment) and a scope value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct GroupOf {
    pub(crate) model: TypeId,
    pub(crate) deployment: Deployment,
    pub(crate) namespace: String,
    pub(crate) scope: String,
}

/// The state a process keeps per sequence, each kind in a map of its own, with typed keys.
#[derive(Default)]
struct Registry {
    /// The cache, coalesced callers and statistics of each sequence.
    sequences: HashMap<CounterAt, Arc<ProcessState>>,
    /// Which shards of a ranges sequence are full.
    full_shards: HashMap<CounterAt, Arc<FullShards>>,
    /// The queues of gapless groups in use. Their type depends on the model's ID type, which
    /// the key's `model` fixes: a key never holds another type.
    groups: HashMap<GroupOf, Arc<dyn Any + Send + Sync>>,
    /// The state of each sequence built on a store of its own (which no other handle shares),
    /// with the store's location: held weakly, so that it goes with the sequence's last
    /// handle. Dead entries are removed as the list grows (see [`own`]).
    own: Vec<(String, Weak<ProcessState>)>,
    /// How many entries `own` kept when it was last pruned.
    own_kept: usize,
}

/// How many entries the list of sequences on stores of their own holds before the first prune.
const OWN_PRUNE_FROM: usize = 32;

static REGISTRY: LazyLock<RwLock<Registry>> = LazyLock::new(RwLock::default);

/// The entry of `map` at `key`, created with `make` on first use.
fn entry<K: Eq + std::hash::Hash + Clone, V: Clone>(
    map: impl Fn(&mut Registry) -> &mut HashMap<K, V>,
    key: &K,
    make: impl FnOnce() -> V,
) -> V {
    let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    map(&mut registry)
        .entry(key.clone())
        .or_insert_with(make)
        .clone()
}

/// The shared state of the counter `counter` kept at `place`, created on first use.
///
/// Every handle of the same counter in this process, however it was created, shares one cache,
/// so that many model instances or tasks do not each hold a reserved range. `labels` name the
/// sequence in what the state records, when this call creates it.
pub(crate) fn shared(
    place: &Place,
    counter: &str,
    labels: impl FnOnce() -> Labels,
) -> Arc<ProcessState> {
    let key = CounterAt {
        place: place.clone(),
        counter: counter.to_owned(),
    };
    {
        let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = registry.sequences.get(&key) {
            return found.clone();
        }
    }
    entry(
        |r| &mut r.sequences,
        &key,
        || Arc::new(ProcessState::new(labels())),
    )
}

/// Lists `state`, the state of a sequence built on a store of its own at `location`, for the
/// snapshot of this process, without keeping it alive. Entries whose sequence is gone are
/// removed each time the list doubles since the last removal: the list holds at most about
/// twice the sequences alive, and the cost per call stays constant.
pub(crate) fn own(location: String, state: &Arc<ProcessState>) {
    let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    if registry.own.len() >= (2 * registry.own_kept).max(OWN_PRUNE_FROM) {
        registry.own.retain(|(_, state)| state.strong_count() > 0);
        registry.own_kept = registry.own.len();
    }
    registry.own.push((location, Arc::downgrade(state)));
}

/// Where the state of a sequence is kept in the registry.
pub(crate) enum Home {
    /// Shared by the handles of a counter at a place.
    Shared(CounterAt),
    /// A sequence built on a store of its own, at the store's location.
    Own(String),
}

impl Place {
    /// The deployment's identity.
    pub(crate) fn deployment(&self) -> Deployment {
        self.deployment
    }

    /// Where the counters are: `database.collection`.
    pub(crate) fn location(&self) -> String {
        format!("{}.{}", self.db, self.counters)
    }
}

/// The state of every sequence of this process, with where it is kept. The states are held
/// only as long as the caller holds the list: the registry's lock is released on return, so
/// that reading them never blocks other handles.
pub(crate) fn states() -> Vec<(Home, Arc<ProcessState>)> {
    let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    let shared = registry
        .sequences
        .iter()
        .map(|(at, state)| (Home::Shared(at.clone()), state.clone()));
    let own = registry.own.iter().filter_map(|(location, state)| {
        state
            .upgrade()
            .map(|state| (Home::Own(location.clone()), state))
    });
    shared.chain(own).collect()
}

/// How many entries the list of sequences on stores of their own holds, alive or not.
#[cfg(test)]
pub(crate) fn own_entries() -> usize {
    REGISTRY
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .own
        .len()
}

/// Which shards of the ranges sequence `key` are full, shared by its handles.
pub(crate) fn full_shards(key: &CounterAt, count: u32) -> Arc<FullShards> {
    entry(
        |r| &mut r.full_shards,
        key,
        || Arc::new(FullShards::new(count)),
    )
}

/// The queue of the gapless group `group`, created with `make` on first use.
pub(crate) fn group<T: Any + Send + Sync>(group: &GroupOf, make: impl FnOnce() -> T) -> Arc<T> {
    let found = entry(|r| &mut r.groups, group, || Arc::new(make()));
    found
        .downcast::<T>()
        .unwrap_or_else(|_| unreachable!("a group's key fixes its model, so its queue's type"))
}

/// Removes the queue of `group` if it is `queue` (not another one registered since).
pub(crate) fn remove_group<T: Any + Send + Sync>(group: &GroupOf, queue: &Arc<T>) {
    let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    let same = registry
        .groups
        .get(group)
        .is_some_and(|entry| std::ptr::addr_eq(Arc::as_ptr(entry), Arc::as_ptr(queue)));
    if same {
        registry.groups.remove(group);
    }
}

/// How many entries of the registry are about the database or collection `needle`: what a
/// process keeps of the sequences it uses there.
pub(crate) fn entries(needle: &str) -> usize {
    let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    let at = |k: &CounterAt| k.place.db == needle || k.place.counters == needle;
    registry.sequences.keys().filter(|k| at(k)).count()
        + registry.full_shards.keys().filter(|k| at(k)).count()
        + registry
            .groups
            .keys()
            .filter(|k| k.namespace == needle || k.namespace.starts_with(&format!("{needle}.")))
            .count()
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
                &place(deployment, &coll.namespace().db, counters),
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
                    let expected = shared(&place(deployment, db, "counters"), key, Labels::default);
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
