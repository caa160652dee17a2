//! What a store knows of which counters exist, so that a round of several counters inserts
//! those it expects missing and updates those it expects stored: the keys of the counters it
//! reserved from lately (at most [`KNOWN_KEYS`], forgotten all at once when full), and
//! whether the last counters of a round it did not know turned out mostly missing.
//!
//! The stores of the same counters (same deployment, collection and layout) share what they
//! know in the process (see [`shared`]): a model's sequence is built once per thread, and each
//! would otherwise fill a set of its own. `Sequence::release` empties it ([`forget`]).

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use crate::id::CounterKey;

/// How many keys a store remembers (8 bytes each, about 300 KiB when full).
pub(super) const KNOWN_KEYS: usize = 16_384;

/// The counters a store knows to exist, and what it expects of the others.
#[derive(Debug)]
pub(super) struct KnownCounters {
    /// Hashes of the keys of counters reserved from lately. A collision only costs the
    /// expectation (a missing counter is then inserted one step later).
    keys: Mutex<HashSet<u64>>,
    /// Whether the counters the store did not know were mostly missing in their last round.
    unknown_missing: AtomicBool,
}

impl Default for KnownCounters {
    fn default() -> Self {
        KnownCounters {
            keys: Mutex::new(HashSet::new()),
            unknown_missing: AtomicBool::new(true),
        }
    }
}

impl KnownCounters {
    /// Whether the counters not known are expected missing: they were mostly missing in
    /// their last round (and before any round).
    pub(super) fn unknown_missing(&self) -> bool {
        self.unknown_missing.load(Ordering::Relaxed)
    }

    /// Whether the counter of `key` was reserved from lately.
    pub(super) fn knows(&self, key: &CounterKey) -> bool {
        let keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        keys.contains(&hash(key))
    }

    /// Remembers the counters of `keys`, reserved from; forgets all others first if there is
    /// no room.
    pub(super) fn remember<'a>(&self, keys: impl IntoIterator<Item = &'a CounterKey>) {
        let mut known = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        for key in keys {
            remember_at_most(&mut known, hash(key), KNOWN_KEYS);
        }
    }

    /// Records that of `unknown` counters not known before a round, `missing` were missing.
    pub(super) fn found(&self, unknown: usize, missing: usize) {
        if unknown > 0 {
            (self.unknown_missing).store(missing * 2 > unknown, Ordering::Relaxed);
        }
    }
}

/// What the stores of each identity (see `CounterStore::identity`) know, while one of them is
/// in use.
static SHARED: LazyLock<Mutex<HashMap<String, Weak<KnownCounters>>>> =
    LazyLock::new(Mutex::default);

/// What the stores of `identity` know, shared by those alive; the entries of identities no
/// store uses any more are dropped meanwhile.
pub(super) fn shared(identity: &str) -> Arc<KnownCounters> {
    let mut all = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = all.get(identity).and_then(Weak::upgrade) {
        return known;
    }
    all.retain(|_, known| known.strong_count() > 0);
    let known = Arc::new(KnownCounters::default());
    all.insert(identity.to_owned(), Arc::downgrade(&known));
    known
}

/// Forgets what the stores of `identity` know, and the memory it took.
pub(crate) fn forget(identity: &str) {
    let known = {
        let all = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        all.get(identity).and_then(Weak::upgrade)
    };
    if let Some(known) = known {
        let mut keys = known.keys.lock().unwrap_or_else(PoisonError::into_inner);
        *keys = HashSet::new();
    }
}

/// Puts `value` in `set`, which holds at most `bound` values: when it is full, it forgets them
/// all first.
pub(super) fn remember_at_most<T: Eq + Hash>(set: &mut HashSet<T>, value: T, bound: usize) {
    if set.len() >= bound {
        set.clear();
        set.shrink_to(bound);
    }
    set.insert(value);
}

fn hash(key: &CounterKey) -> u64 {
    let mut hasher = DefaultHasher::new();
    key.canonical().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_reserved_from_are_known_and_the_others_expected_as_the_last_were() {
        let known = KnownCounters::default();
        let (a, b) = (CounterKey::named("a"), CounterKey::named("b"));
        assert!(
            known.unknown_missing(),
            "a new store expects unknown counters missing"
        );
        known.remember([&a]);
        assert!(known.knows(&a));
        assert!(!known.knows(&b));
        known.found(4, 2);
        assert!(!known.unknown_missing(), "half missing is not mostly");
        known.found(0, 0);
        assert!(
            !known.unknown_missing(),
            "a round without unknown counters tells nothing"
        );
        known.found(3, 2);
        assert!(known.unknown_missing());
    }

    #[test]
    fn the_stores_of_the_same_counters_share_what_they_know_until_released() {
        let identity = "known_counters_test\0app.counters";
        let (a, b) = (shared(identity), shared(identity));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(
            &a,
            &shared("known_counters_test\0other.counters")
        ));
        let keys: Vec<CounterKey> = (0..1000)
            .map(|i| CounterKey::named(format!("c{i}")))
            .collect();
        a.remember(&keys);
        assert!(b.knows(&keys[999]));
        forget(identity);
        assert!(!b.knows(&keys[999]));
        assert_eq!(b.keys.lock().unwrap().capacity(), 0, "its memory went too");
        drop((a, b));
        // No store of it left: the next one starts anew.
        assert_eq!(Arc::strong_count(&shared(identity)), 1);
    }

    #[test]
    fn a_full_memory_forgets_everything_at_once() {
        let known = KnownCounters::default();
        let keys: Vec<CounterKey> = (0..=KNOWN_KEYS)
            .map(|i| CounterKey::named(format!("c{i}")))
            .collect();
        known.remember(&keys[..KNOWN_KEYS]);
        assert!(keys[..KNOWN_KEYS].iter().all(|k| known.knows(k)));
        known.remember([&keys[KNOWN_KEYS]]);
        assert!(known.knows(&keys[KNOWN_KEYS]));
        assert!(!known.knows(&keys[0]));
        assert_eq!(known.keys.lock().unwrap().len(), 1);
    }
}
