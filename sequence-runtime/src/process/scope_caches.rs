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
//! - **Unless the values come back**: once at least half of the sequence's recent calls (of
//!   the last 512 to 1,024, after the first [`EVIDENCE`]) found their value remembered, a value
//!   seen for the first time gets its cache on its first call, so that its second call does
//!   not wait for the cache's first batch, and the caches made then prefetch from their first
//!   range on, once half of it is used (see [`Returns`]).
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

/// How many calls a sequence records before their share that found their value remembered
/// decides anything.
const EVIDENCE: u32 = 64;

/// The calls after which the counts of [`Returns`] halve, so that the share follows what the
/// recent calls do.
const WINDOW: u32 = 1024;

/// How many of a sequence's recent calls found their scope value remembered (within
/// [`IDLE`]): when at least half did, the values come back.
#[derive(Debug, Default)]
struct Returns {
    calls: u32,
    found: u32,
}

impl Returns {
    fn record(&mut self, found: bool) {
        self.calls += 1;
        self.found += u32::from(found);
        if self.calls >= WINDOW {
            self.calls /= 2;
            self.found /= 2;
        }
    }

    /// Whether the recent calls show the values coming back.
    fn come_back(&self) -> bool {
        self.calls >= EVIDENCE && 2 * self.found >= self.calls
    }
}

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
                returns: Returns::default(),
            }),
        }
    }
}

struct Entries<C> {
    map: HashMap<String, Entry<C>>,
    /// When idle entries were last looked for.
    swept: Option<Instant>,
    returns: Returns,
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
    /// [`IDLE`], or on its first while the values come back; `None` on a first call otherwise
    /// (it is remembered). `make` is told whether the values come back (its cache then
    /// prefetches from its first range on, once half of it is used). Each call is one call of
    /// the value: it counts in the share of calls that found their value.
    pub(crate) fn cache_for(
        &self,
        canonical: &str,
        now: Instant,
        make: impl FnOnce(bool) -> Arc<C>,
    ) -> Found<C> {
        self.cache_with_bound(canonical, now, MAX_SCOPES, make)
    }

    fn cache_with_bound(
        &self,
        canonical: &str,
        now: Instant,
        bound: usize,
        make: impl FnOnce(bool) -> Arc<C>,
    ) -> Found<C> {
        let mut guard = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let entries = &mut *guard;
        let come_back = entries.returns.come_back();
        let mut forgotten = Vec::new();
        let cache = match entries.map.get_mut(canonical) {
            Some(entry) if now.duration_since(entry.last) < IDLE => {
                entries.returns.record(true);
                entry.last = now;
                Some(entry.cache.get_or_insert_with(|| make(come_back)).clone())
            }
            Some(entry) => {
                // Idle too long: seen anew, its cache given back.
                entries.returns.record(false);
                entry.last = now;
                forgotten.extend(entry.cache.take());
                entry.cache = come_back.then(|| make(true));
                entry.cache.clone()
            }
            None => {
                entries.returns.record(false);
                let cache = come_back.then(|| make(true));
                entries.map.insert(
                    canonical.to_owned(),
                    Entry {
                        last: now,
                        cache: cache.clone(),
                    },
                );
                cache
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

    /// Forgets every scope value, and what their calls showed; returns their caches, whose
    /// values go back.
    pub(crate) fn take_all(&self) -> Vec<Arc<C>> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.returns = Returns::default();
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

    /// A stand-in for a cache: whether it was made while the values came back.
    fn state(come_back: bool) -> Arc<bool> {
        Arc::new(come_back)
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
        // Values called once each: their share of calls that found them stays under half, so
        // (past the first few) they get no cache.
        assert!(caches.take_all().len() <= EVIDENCE as usize);
        assert_eq!(caches.room(), 0, "release leaves no table behind");
    }

    #[test]
    fn values_that_come_back_get_their_cache_on_their_first_call() {
        let caches = ScopeCaches::default();
        let t0 = Instant::now();
        let first_call = |key: &str| caches.cache_for(key, t0, state).cache;
        // Few calls yet: a new value waits for its second call, even if every call came back.
        for i in 0..EVIDENCE / 2 - 1 {
            assert!(first_call(&format!("a{i}")).is_none());
            assert!(
                !*first_call(&format!("a{i}")).unwrap(),
                "made on a second call"
            );
        }
        // Enough calls, half of them finding their value: a new value gets its cache at once,
        // made to prefetch from its first range.
        first_call("a0");
        first_call("a0");
        let eager = first_call("new").expect("a cache on the first call");
        assert!(*eager);
        let again = first_call("new").unwrap();
        assert!(
            Arc::ptr_eq(&eager, &again),
            "its second call finds the same cache"
        );
        // A spread of values seen once each: the share falls under half, and a new value
        // again gets no cache until it comes back.
        let mut eager_firsts = 0;
        for i in 0..2000 {
            eager_firsts += usize::from(first_call(&format!("s{i}")).is_some());
        }
        assert!(first_call("late").is_none());
        assert!(
            eager_firsts < 200,
            "{eager_firsts} of 2000 values seen once got a cache"
        );
        // Values called four times each: the share climbs back over half. Forgetting
        // everything forgets what the calls showed.
        for i in 0..4000 {
            first_call(&format!("b{}", i / 4));
        }
        assert!(first_call("b-new").is_some());
        caches.take_all();
        assert!(first_call("after-release").is_none());
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
