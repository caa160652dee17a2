//! The process-wide registry: one cache per (database, counters collection, counter), and the
//! other per-process state of a sequence (such as the full shards of a ranges one).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use super::cache::ProcessState;
use crate::observability::{self, Labels, Place};
use crate::store::Deployment;
use crate::strategy::FullShards;

/// A sequence's counter (by the id `Maker::cache_id` makes) at a place.
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
}

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
        || watched(place.clone(), labels()),
    )
}

/// A new state of the sequence `labels` name, whose counters are at `place`, listed in the
/// snapshots of this process while it lives.
pub(crate) fn watched(place: Place, labels: Labels) -> Arc<ProcessState> {
    let state = Arc::new(ProcessState::new(labels));
    observability::watch(place, &state);
    state
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
    let at = |k: &CounterAt| k.place.is_in(needle);
    registry.sequences.keys().filter(|k| at(k)).count()
        + registry.full_shards.keys().filter(|k| at(k)).count()
        + registry
            .groups
            .keys()
            .filter(|k| k.namespace == needle || k.namespace.starts_with(&format!("{needle}.")))
            .count()
}
