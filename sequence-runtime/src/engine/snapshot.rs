//! The snapshot of every sequence this process uses: its statistics and the state of its cache,
//! read from the registry without keeping anything in it alive.

use serde::Serialize;

use super::cache::CacheSnapshot;
use super::registry::{self, Home};
use super::stats::Stats;

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
/// use sequence_runtime::{stats, Sequence, SequenceOptions};
/// let seq = Sequence::in_memory(SequenceOptions::builder("snapshot-doc").batch(25).build())?;
/// for _ in 0..5 {
///     seq.next().await?;
/// }
/// let snapshot = stats::snapshot();
/// let entry = snapshot.named("snapshot-doc").next().unwrap();
/// assert_eq!(entry.stats.issued, 5);
/// assert_eq!(entry.cache.values_left, 20);
/// assert_eq!(entry.cache.batch, Some(25));
/// println!("{}", serde_json::to_string(&snapshot).unwrap());
/// # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
/// ```
pub fn snapshot() -> Snapshot {
    let mut sequences: Vec<SequenceSnapshot> = registry::states()
        .into_iter()
        .map(|(home, state)| {
            let (deployment, location) = match home {
                Home::Shared(at) => (Some(at.place.deployment().to_string()), at.place.location()),
                Home::Own(location) => (None, location),
            };
            let (stats, cache) = state.report();
            let labels = &state.stats.labels;
            SequenceSnapshot {
                deployment,
                location,
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
    use crate::values::IdRange;
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
        let options = SequenceOptions::builder("snap-cached").batch(25).build();
        let seq = Sequence::in_memory(options).unwrap();
        take(&seq, 30).await;
        let entry = settled("snap-cached").await;
        assert_eq!(entry.deployment, None);
        assert_eq!(entry.location, "memory");
        assert_eq!(entry.strategy, "counter");
        assert_eq!(entry.stats, seq.stats());
        let stats = entry.stats;
        // 1..=25, 26..=50, and 51..=75 prefetched once 10% of 26..=50 was used.
        assert_eq!(
            (stats.issued, stats.reserved, stats.reservations),
            (30, 75, 3)
        );
        let cache = entry.cache;
        assert_eq!(cache.counter.as_deref(), Some("snap-cached"));
        assert_eq!(cache.current, IdRange::new(31, 50));
        assert_eq!(cache.values_left, 20);
        assert_eq!(cache.next, IdRange::new(51, 75));
        assert_eq!(cache.cached, 45);
        assert_eq!(cache.batch, Some(25));
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
        assert!(
            registry::own_entries() < 500,
            "{} entries",
            registry::own_entries()
        );
        assert_eq!(held.named("snap-gone").count(), 1, "a snapshot is a copy");
    }
}
