//! The caches of a scoped sequence with a `batch`: one cache (a `ProcessState`) per scope value
//! in use, so that the inserts of a busy tenant take their numbers from the process's memory like
//! those of an unscoped sequence, while a process that sees many tenants holds a bounded number
//! of caches.
//!
//! - **A scope value seen for the first time gets no cache**: its caller reserves its one value
//!   (in a round with the callers waiting together), as without a batch, and the value is only
//!   remembered as seen. Its second call within [`IDLE`] gets a cache, filled a batch at a time
//!   (its refills queue in the same rounds, with the first calls of other values and the
//!   refills of their caches). A process spread over more tenants than it serves twice in a
//!   while thus reserves nothing it does not use.
//! - **At most [`MAX_SCOPES`] values are remembered** (with or without a cache); past that,
//!   those idle for [`IDLE`] are forgotten first, then the least recently used, down to three
//!   quarters of the bound.
//! - **A cache idle for [`IDLE`] is given back**: its unused values go back to their counter
//!   where they are still its last ones (as `release` gives them back), so an idle tenant keeps
//!   no values and no memory.
//!
//! Forgotten caches are returned to the caller, which gives their values back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most scope values a sequence remembers in a process.
const MAX_SCOPES: usize = 4096;

/// How long a scope value stays remembered, and its cache held, without a call.
const IDLE: Duration = Duration::from_secs(30);

/// A remembered scope value: when it was last used, and its cache once it has one.
struct Entry<C> {
    last: Instant,
    cache: Option<Arc<C>>,
}

/// The scope values of one sequence that this process remembers, with their caches.
pub(crate) struct ScopeCaches<C> {
    entries: Mutex<Entries<C>>,
}

impl<C> Default for ScopeCaches<C> {
    fn default() -> Self {
        ScopeCaches {
            entries: Mutex::new(Entries {
                map: HashMap::new(),
                swept: None,
            }),
        }
    }
}

struct Entries<C> {
    map: HashMap<String, Entry<C>>,
    /// When idle entries were last looked for.
    swept: Option<Instant>,
}

impl<C> std::fmt::Debug for ScopeCaches<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeCaches")
            .field("remembered", &self.remembered())
            .finish()
    }
}

/// What [`ScopeCaches::cache_for`] found: the cache to take the value from (`None`: reserve it
/// directly), and the caches forgotten meanwhile, whose values go back.
pub(crate) struct Found<C> {
    pub(crate) cache: Option<Arc<C>>,
    pub(crate) forgotten: Vec<Arc<C>>,
}

impl<C> ScopeCaches<C> {
    /// The cache of the scope value `canonical`, made with `make` on its second call within
    /// [`IDLE`]; `None` on its first (it is remembered).
    pub(crate) fn cache_for(
        &self,
        canonical: &str,
        now: Instant,
        make: impl FnOnce() -> Arc<C>,
    ) -> Found<C> {
        self.cache_with_bound(canonical, now, MAX_SCOPES, make)
    }

    fn cache_with_bound(
        &self,
        canonical: &str,
        now: Instant,
        bound: usize,
        make: impl FnOnce() -> Arc<C>,
    ) -> Found<C> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let mut forgotten = Vec::new();
        let cache = match entries.map.get_mut(canonical) {
            Some(entry) if now.duration_since(entry.last) < IDLE => {
                entry.last = now;
                Some(entry.cache.get_or_insert_with(make).clone())
            }
            Some(entry) => {
                // Idle too long: seen anew, its cache given back.
                entry.last = now;
                forgotten.extend(entry.cache.take());
                None
            }
            None => {
                entries.map.insert(
                    canonical.to_owned(),
                    Entry {
                        last: now,
                        cache: None,
                    },
                );
                None
            }
        };
        let sweep_due = entries
            .swept
            .is_none_or(|at| now.duration_since(at) >= IDLE / 2);
        if sweep_due || entries.map.len() > bound {
            entries.swept = Some(now);
            forgotten.extend(forget(&mut entries.map, now, bound, canonical));
        }
        Found { cache, forgotten }
    }

    /// Forgets every scope value; returns their caches, whose values go back.
    pub(crate) fn take_all(&self) -> Vec<Arc<C>> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken whole, so that the table's memory goes too.
        std::mem::take(&mut entries.map)
            .into_values()
            .filter_map(|e| e.cache)
            .collect()
    }

    /// Forgets the scope value `canonical` (its cached values were found in use); returns its
    /// cache, if it had one.
    pub(crate) fn forget(&self, canonical: &str) -> Option<Arc<C>> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.map.remove(canonical).and_then(|e| e.cache)
    }

    /// How many scope values are remembered now.
    pub(crate) fn remembered(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .len()
    }

    /// How many entries the table has room for.
    #[cfg(test)]
    fn room(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .capacity()
    }

    /// Every cache held now.
    pub(crate) fn caches(&self) -> Vec<Arc<C>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .map
            .values()
            .filter_map(|e| e.cache.clone())
            .collect()
    }
}

/// Forgets the entries idle for [`IDLE`], then, if more than `bound` remain, the least
/// recently used down to three quarters of `bound`, never `keep`; returns their caches. The
/// table then keeps room for twice the entries left, no more, so that a table once full does
/// not keep its size after its values went idle.
fn forget<C>(
    map: &mut HashMap<String, Entry<C>>,
    now: Instant,
    bound: usize,
    keep: &str,
) -> Vec<Arc<C>> {
    let mut forgotten = Vec::new();
    map.retain(|key, entry| {
        let idle = now.duration_since(entry.last) >= IDLE && key != keep;
        if idle {
            forgotten.extend(entry.cache.take());
        }
        !idle
    });
    if map.len() > bound {
        let mut by_age: Vec<(Instant, String)> = map
            .iter()
            .filter(|(key, _)| *key != keep)
            .map(|(key, entry)| (entry.last, key.clone()))
            .collect();
        by_age.sort_unstable();
        let excess = map.len() - bound * 3 / 4;
        for (_, key) in by_age.into_iter().take(excess) {
            if let Some(entry) = map.remove(&key) {
                forgotten.extend(entry.cache);
            }
        }
    }
    map.shrink_to(map.len() * 2);
    forgotten
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a cache.
    fn state() -> Arc<u32> {
        Arc::new(0)
    }

    #[test]
    fn a_scope_value_gets_a_cache_on_its_second_call() {
        let caches = ScopeCaches::default();
        let t0 = Instant::now();
        assert!(caches.cache_for("a", t0, state).cache.is_none());
        let first = caches.cache_for("a", t0, state).cache.unwrap();
        let again = caches.cache_for("a", t0, state).cache.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "one cache per scope value");
        assert!(caches.cache_for("b", t0, state).cache.is_none());
        assert_eq!(caches.remembered(), 2);
    }

    #[test]
    fn an_idle_cache_is_given_back() {
        let caches = ScopeCaches::default();
        let t0 = Instant::now();
        caches.cache_for("a", t0, state);
        caches.cache_for("a", t0, state);
        // Its own next call, after the idle time, finds it given back and starts anew.
        let later = caches.cache_for("a", t0 + IDLE, state);
        assert!(later.cache.is_none());
        assert_eq!(later.forgotten.len(), 1);
        // Another value's call after the idle time forgets the idle ones.
        caches.cache_for("a", t0 + IDLE, state);
        let swept = caches.cache_for("b", t0 + 3 * IDLE, state);
        assert_eq!(swept.forgotten.len(), 1);
        assert_eq!(caches.remembered(), 1, "only `b` is remembered");
    }

    #[test]
    fn the_memory_of_forgotten_values_goes_with_them() {
        let caches = ScopeCaches::default();
        let t0 = Instant::now();
        for i in 0..10_000 {
            let key = format!("t{i}");
            caches.cache_with_bound(&key, t0, 1000, state);
            caches.cache_with_bound(&key, t0, 1000, state);
        }
        assert!(
            caches.room() >= 750,
            "the table holds the values remembered"
        );
        // Every value idle: the next call forgets them, and their table's room with them.
        caches.cache_for("late", t0 + IDLE, state);
        assert_eq!(caches.remembered(), 1);
        assert!(caches.room() < 32, "room for {} entries", caches.room());
        for i in 0..1000 {
            caches.cache_for(&format!("u{i}"), t0 + IDLE, state);
        }
        assert_eq!(caches.take_all().len(), 0, "no value was called twice");
        assert_eq!(caches.room(), 0, "release leaves no table behind");
    }

    #[test]
    fn remembered_values_stay_within_the_bound() {
        let caches = ScopeCaches::default();
        let t0 = Instant::now();
        let bound = 100;
        let mut forgotten = 0;
        for i in 0..1000 {
            let at = t0 + Duration::from_millis(i);
            // Each value twice in a row (a cache on its second call), 300 values in turn.
            let key = format!("t{}", (i / 2) % 300);
            let found = caches.cache_with_bound(&key, at, bound, state);
            forgotten += found.forgotten.len();
            assert!(
                caches.remembered() <= bound,
                "{} remembered",
                caches.remembered()
            );
        }
        assert!(forgotten > 0, "caches past the bound were given back");
        assert!(
            caches.room() <= 4 * bound,
            "room for {} entries",
            caches.room()
        );
        // The most recent value is never the one forgotten.
        assert!(caches
            .cache_with_bound("t199", t0 + Duration::from_millis(1000), bound, state)
            .cache
            .is_some());
    }
}
