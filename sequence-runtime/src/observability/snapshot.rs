//! The snapshot of every sequence this process uses: its statistics and the state of its cache.
//!
//! The per-process state of each sequence is watched here as it is made ([`watch`]), weakly:
//! taking a snapshot reads the states alive and keeps none of them.

use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use serde::Serialize;

use super::metrics::Labels;
use super::stats::Stats;
use crate::id::IdRange;

/// The cache of reserved values of a sequence: what a caller gets its next ID from without a
/// round trip. Only a sequence with a batch above 1 (and no scope) fills one; the others show
/// an empty cache with `batch: None`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CacheSnapshot {
    /// The counter the cached ranges belong to (for a sequence with periods, the current
    /// period's): `None` before the first ID.
    pub counter: Option<String>,
    /// What is left of the range in use.
    pub current: Option<IdRange>,
    /// How many values are left in the range in use.
    pub values_left: u64,
    /// The next range, already reserved (prefetched) and ready.
    pub next: Option<IdRange>,
    /// Whether a reservation of a range for the cache is in flight now.
    pub refilling: bool,
    /// How many values the cache holds: `values_left` and the next range's.
    pub cached: u64,
    /// How many values the next refill reserves now: the batch, several batches for a busy
    /// cache of a batch of 10 or more, or the size an adaptive batch has reached. `None`
    /// until the cache first refills.
    pub batch: Option<u64>,
}

/// What the per-process state of a sequence reports to a snapshot.
pub(crate) trait Reported: Send + Sync {
    /// The sequence's name and strategy.
    fn labels(&self) -> &Labels;

    /// What the sequence did in this process, and the state of its cache now: one reading.
    fn report(&self) -> (Stats, CacheSnapshot);
}

/// Where a sequence's counters are kept: the deployment's identity (`None` for a store of its
/// own) and `database.collection`, or the store's location. It names a sequence's entry in the
/// snapshot, and with the counter's id it keys the process's state of the sequence.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Place {
    deployment: Option<String>,
    location: String,
}

impl Place {
    /// The counters collection `counters` of the database `db` of `deployment`.
    pub(crate) fn collection(deployment: impl std::fmt::Display, db: &str, counters: &str) -> Self {
        Place {
            deployment: Some(deployment.to_string()),
            location: format!("{db}.{counters}"),
        }
    }

    /// A store of its own, at `location`.
    pub(crate) fn store(location: String) -> Self {
        Place {
            deployment: None,
            location,
        }
    }

    /// Whether the place is the database or the counters collection `name`.
    pub(crate) fn is_in(&self, name: &str) -> bool {
        // A database's name has no dot: the first one ends it.
        self.deployment.is_some()
            && self
                .location
                .split_once('.')
                .is_some_and(|(db, counters)| db == name || counters == name)
    }
}

/// The states watched for the snapshot, held weakly, and how many were kept at the last prune.
#[derive(Default)]
struct Watched {
    states: Vec<(Place, Weak<dyn Reported>)>,
    kept: usize,
}

/// How many entries the list holds before its first prune.
const PRUNE_FROM: usize = 32;

static WATCHED: LazyLock<Mutex<Watched>> = LazyLock::new(Mutex::default);

/// Lists `state`, kept at `place`, in the snapshots of this process, without keeping it alive.
/// Entries whose state is gone are removed each time the list doubles since the last removal:
/// the list holds at most about twice the states alive, and the cost per call stays constant.
pub(crate) fn watch(place: Place, state: &Arc<impl Reported + 'static>) {
    let mut watched = WATCHED.lock().unwrap_or_else(PoisonError::into_inner);
    if watched.states.len() >= (2 * watched.kept).max(PRUNE_FROM) {
        watched.states.retain(|(_, state)| state.strong_count() > 0);
        watched.kept = watched.states.len();
    }
    let state: Arc<dyn Reported> = state.clone();
    watched.states.push((place, Arc::downgrade(&state)));
}

/// How many entries the list of watched states holds, alive or not.
#[cfg(test)]
fn watched_entries() -> usize {
    WATCHED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .states
        .len()
}

/// Every sequence this process uses, each with what it did ([`Stats`]) and the state of its
/// cache now: what [`snapshot`] returns.
///
/// It serializes (with `serde`) as `{ "sequences": [ … ] }`, ready to be served as JSON.
#[derive(Clone, Debug, Default, Serialize)]
#[non_exhaustive]
pub struct Snapshot {
    /// One entry per sequence and place, ordered by `location`, `sequence`, `deployment`.
    pub sequences: Vec<SequenceSnapshot>,
}

impl Snapshot {
    /// The entries of the sequence named `name` (one per place it is used at).
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a SequenceSnapshot> + 'a {
        self.sequences.iter().filter(move |s| s.sequence == name)
    }
}

/// One sequence of this process: where its counters are, what it did and what it holds.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct SequenceSnapshot {
    /// The deployment's identity: 16 hexadecimal digits, a hash of the connection options of
    /// the client (equal for clients built from the same connection string). `None` for a
    /// sequence built on a store of its own ([`Sequence::with_store`](crate::Sequence::with_store),
    /// [`Sequence::in_memory`](crate::Sequence::in_memory)).
    pub deployment: Option<String>,
    /// Where its counters are: `database.collection`, or the location of the store it was
    /// built on (`memory` for a [`MemoryStore`](crate::store::MemoryStore)).
    pub location: String,
    /// The sequence's name.
    pub sequence: String,
    /// Its strategy (`counter`, `ranges`, `random`, ...).
    pub strategy: &'static str,
    /// What it did in this process: the same as [`Sequence::stats`](crate::Sequence::stats)
    /// of any of its handles.
    pub stats: Stats,
    /// Its cache of reserved values now.
    pub cache: CacheSnapshot,
}

/// Every sequence this process uses, per deployment and counters collection: its statistics
/// and the state of its cache now.
///
/// Sequences on a MongoDB database are listed from the first use of any handle on, for the
/// life of the process; a sequence built on a store of its own, as long as one of its handles
/// lives. Taking a snapshot reads each sequence's state once, under its own lock, and keeps none
/// of it: a sequence's state is dropped when it would have been without it.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use sequence_runtime::{observability, Sequence, SequenceOptions};
/// let seq = Sequence::in_memory(SequenceOptions::builder("snapshot-doc").batch(25).build())?;
/// for _ in 0..5 {
///     seq.next().await?;
/// }
/// let snapshot = observability::snapshot();
/// let entry = snapshot.named("snapshot-doc").next().unwrap();
/// assert_eq!(entry.stats.issued, 5);
/// assert_eq!(entry.cache.values_left, 20);
/// assert_eq!(entry.cache.batch, Some(25));
/// println!("{}", serde_json::to_string(&snapshot).unwrap());
/// # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
/// ```
pub fn snapshot() -> Snapshot {
    // The states are upgraded under the list's lock and read after it is released, so that
    // reading them never blocks a sequence being made.
    let alive: Vec<(Place, Arc<dyn Reported>)> = WATCHED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .states
        .iter()
        .filter_map(|(place, state)| Some((place.clone(), state.upgrade()?)))
        .collect();
    let mut sequences: Vec<SequenceSnapshot> = alive
        .into_iter()
        .map(|(place, state)| {
            let (stats, cache) = state.report();
            let labels = state.labels();
            SequenceSnapshot {
                deployment: place.deployment,
                location: place.location,
                sequence: labels.sequence.to_string(),
                strategy: labels.strategy,
                stats,
                cache,
            }
        })
        .collect();
    sequences.sort_by(|a, b| {
        (&a.location, &a.sequence, &a.deployment).cmp(&(&b.location, &b.sequence, &b.deployment))
    });
    Snapshot { sequences }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{AdaptiveBatch, SequenceOptions};
    use crate::Sequence;

    /// The one entry of the sequence `name` (names are unique per test: the tests of this
    /// crate share the process, and so its snapshot).
    fn entry(name: &str) -> SequenceSnapshot {
        let snapshot = snapshot();
        let mut found = snapshot.named(name).cloned();
        let entry = found.next().unwrap_or_else(|| panic!("{name} is listed"));
        assert!(found.next().is_none(), "{name} is listed once");
        entry
    }

    async fn take(seq: &Sequence, n: usize) {
        for _ in 0..n {
            seq.next().await.unwrap();
        }
    }

    /// Waits until the cache of `name` has no refill in flight.
    async fn settled(name: &str) -> SequenceSnapshot {
        for _ in 0..1000 {
            let entry = entry(name);
            if !entry.cache.refilling {
                return entry;
            }
            tokio::task::yield_now().await;
        }
        panic!("the refill of {name} never landed");
    }

    #[tokio::test]
    async fn a_cached_sequence_shows_its_stats_and_its_ranges() {
        // A batch below `Batch::AHEAD_FROM`: one batch per refill.
        let options = SequenceOptions::builder("snap-cached").batch(9).build();
        let seq = Sequence::in_memory(options).unwrap();
        take(&seq, 12).await;
        let entry = settled("snap-cached").await;
        assert_eq!(entry.deployment, None);
        assert_eq!(entry.location, "memory");
        assert_eq!(entry.strategy, "counter");
        assert_eq!(entry.stats, seq.stats());
        let stats = entry.stats;
        // 1..=9, 10..=18, and 19..=27 prefetched once 10% of 10..=18 was used.
        assert_eq!(
            (stats.issued, stats.reserved, stats.reservations),
            (12, 27, 3)
        );
        let cache = entry.cache;
        assert_eq!(cache.counter.as_deref(), Some("snap-cached"));
        assert_eq!(cache.current, IdRange::new(13, 18));
        assert_eq!(cache.values_left, 6);
        assert_eq!(cache.next, IdRange::new(19, 27));
        assert_eq!(cache.cached, 15);
        assert_eq!(cache.batch, Some(9));
    }

    #[tokio::test]
    async fn a_sequence_without_a_cache_shows_an_empty_one() {
        let seq = Sequence::in_memory(SequenceOptions::builder("snap-one").build()).unwrap();
        take(&seq, 3).await;
        let entry = entry("snap-one");
        assert_eq!((entry.stats.issued, entry.stats.reservations), (3, 3));
        assert_eq!(entry.cache, CacheSnapshot::default());
    }

    #[tokio::test]
    async fn an_adaptive_batch_shows_the_size_it_reached() {
        let adaptive = AdaptiveBatch::new(4, 32).grow_below(std::time::Duration::from_secs(3600));
        let options = SequenceOptions::builder("snap-auto")
            .batch(adaptive)
            .build();
        let seq = Sequence::in_memory(options).unwrap();
        take(&seq, 100).await;
        let entry = settled("snap-auto").await;
        assert_eq!(entry.cache.batch, Some(32), "{entry:?}");
    }

    #[tokio::test]
    async fn the_snapshot_serializes_as_json() {
        let seq =
            Sequence::in_memory(SequenceOptions::builder("snap-json").batch(10).build()).unwrap();
        take(&seq, 1).await;
        let entry = settled("snap-json").await;
        let json = serde_json::to_value(&entry).unwrap();
        assert_eq!(json["sequence"], "snap-json");
        assert_eq!(json["deployment"], serde_json::Value::Null);
        assert_eq!(json["stats"]["issued"], 1);
        assert_eq!(json["stats"]["transaction_retries"], 0);
        assert_eq!(
            json["cache"]["current"],
            serde_json::json!({ "first": 2, "last": 10 })
        );
        assert_eq!(json["cache"]["values_left"], 9);
        assert_eq!(json["cache"]["batch"], 10);
        let all = serde_json::to_value(snapshot()).unwrap();
        assert!(all["sequences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sequence"] == "snap-json"));
    }

    /// The snapshot holds no state: a sequence whose handles are dropped leaves it, even while
    /// a snapshot taken before is held, and the list of sequences on stores of their own
    /// stays bounded by those alive.
    /// Every ID a scoped sequence hands out counts, those of its scope values' caches included,
    /// in the snapshot as in `Sequence::stats`.
    #[tokio::test]
    async fn the_snapshot_counts_the_ids_of_scope_caches() {
        use crate::Scope;
        let seq = Sequence::in_memory(
            SequenceOptions::builder("snap-scoped")
                .scope(["shop"])
                .batch(25)
                .build(),
        )
        .unwrap();
        for shop in ["a", "b", "c"] {
            let scoped = seq.in_scope(Scope::new().with("shop", shop)).unwrap();
            take(&scoped, 40).await;
        }
        assert_eq!(seq.stats().issued, 120);
        assert_eq!(entry("snap-scoped").stats.issued, 120);
    }

    #[tokio::test]
    async fn dropped_sequences_leave_the_snapshot_and_the_registry() {
        let seq =
            Sequence::in_memory(SequenceOptions::builder("snap-gone").batch(5).build()).unwrap();
        take(&seq, 2).await;
        let held = snapshot();
        assert_eq!(held.named("snap-gone").count(), 1);
        drop(seq);
        assert_eq!(snapshot().named("snap-gone").count(), 0);
        for _ in 0..1000 {
            let seq = Sequence::in_memory(SequenceOptions::builder("snap-churn").build()).unwrap();
            seq.next().await.unwrap();
        }
        assert!(watched_entries() < 500, "{} entries", watched_entries());
        assert_eq!(held.named("snap-gone").count(), 1, "a snapshot is a copy");
    }
}
