//! The `ranges` strategy: several counter documents, each owning a disjoint slice of the ID
//! space (the "multiple range allocator counter documents" of MongoDB's guide to unique
//! identifiers), so that concurrent writers rarely update the same document.
//!
//! Shard `i` of `K` over the space `start..=max` (`N` values) owns the values
//! `start + floor(i·N/K) ..= start + floor((i+1)·N/K) - 1`: the slices are computed from the
//! configuration alone, so every process, at any time, agrees on them. The counter document of
//! shard `i` is `{ _id: { seq: <name>, shard: i }, lo: <first of the slice>, hi: <last of the
//! slice>, seq: <last issued> }`, created by the upsert of its first reservation. Every
//! reservation is the one conditional `findAndModify` of [`CounterStore::reserve`] with the
//! shard's bounds and its `lo`/`hi` as fixed fields, so it never passes `hi`, and a document
//! left by another configuration is reported ([`Error::CounterMismatch`]) instead of used.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mongodb::bson::doc;
use mongodb::ClientSession;

use sequence_rules::SHARD_BOUND_FIELDS;

use super::draw;
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey, IdRange};
use crate::observability::RANGES;
use crate::store::{CounterStore, Reservation};

/// The shards of one sequence, as one handle sees them.
#[derive(Debug)]
pub(crate) struct Shards {
    store: Arc<dyn CounterStore>,
    name: String,
    space: Bounds,
    count: u32,
    full: Arc<FullShards>,
}

/// Which shards this process found full (shared by the handles of a sequence in a process).
#[derive(Debug)]
pub(crate) struct FullShards(Vec<AtomicBool>);

impl FullShards {
    pub(crate) fn new(count: u32) -> Self {
        FullShards((0..count).map(|_| AtomicBool::new(false)).collect())
    }

    fn is_full(&self, i: u32) -> bool {
        self.0[i as usize].load(Ordering::Relaxed)
    }

    fn set(&self, i: u32, full: bool) {
        self.0[i as usize].store(full, Ordering::Relaxed);
    }

    fn clear(&self) {
        for f in &self.0 {
            f.store(false, Ordering::Relaxed);
        }
    }
}

/// What one shard gave.
enum Outcome {
    Got(Reservation),
    /// Not enough: this many values are left in the shard.
    Short(u64),
}

/// The slice of shard `i` of `count` over `space` (`count` must not exceed the space's size).
pub(crate) fn slice(space: Bounds, count: u32, i: u32) -> Bounds {
    let (n, k) = (u128::from(space.size()), u128::from(count));
    let from = n * u128::from(i) / k;
    let to = n * (u128::from(i) + 1) / k;
    // from < to <= n <= u64::MAX, and start + (n - 1) = max, so both stay in range.
    Bounds {
        start: space.start.wrapping_add_unsigned(from as u64),
        max: space.start.wrapping_add_unsigned((to - 1) as u64),
        ..space
    }
}

/// The shard whose slice holds `value`, if `value` is in the space.
pub(crate) fn shard_of(space: Bounds, count: u32, value: i64) -> Option<u32> {
    if value < space.start || value > space.max {
        return None;
    }
    let (n, k) = (u128::from(space.size()), u128::from(count));
    let offset = u128::from(value.abs_diff(space.start));
    // The largest i with floor(i·N/K) <= offset.
    let i = (((offset + 1) * k - 1) / n) as u32;
    debug_assert!({
        let s = slice(space, count, i);
        s.start <= value && value <= s.max
    });
    Some(i)
}

impl Shards {
    /// The `count` shards of the sequence `name` over `space`, with counters in `store`; `full`
    /// is the process-wide record of full shards (`None`: a record of this handle's own).
    pub(crate) fn new(
        store: Arc<dyn CounterStore>,
        name: &str,
        space: Bounds,
        count: u32,
        full: Option<Arc<FullShards>>,
    ) -> Self {
        Shards {
            store,
            name: name.to_owned(),
            space,
            count,
            full: full.unwrap_or_else(|| Arc::new(FullShards::new(count))),
        }
    }

    /// A string that identifies the configuration of `count` shards over `space`, for the
    /// registry.
    pub(crate) fn identity(space: Bounds, count: u32) -> String {
        format!("sharded\0{count}\0{}\0{}", space.start, space.max)
    }

    /// The name of the sequence these shards belong to.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// How many shards there are.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// The identity of these shards' configuration (see [`identity`](Self::identity)).
    pub(crate) fn configuration(&self) -> String {
        Self::identity(self.space, self.count)
    }

    /// The identity of these shards in their store: equal for the same shards of the same
    /// sequence in the same store.
    pub(crate) fn identity_in_store(&self) -> String {
        format!(
            "{}\0{}\0{}",
            self.store.identity(),
            self.name,
            self.configuration()
        )
    }

    /// The slice of shard `i`.
    pub(crate) fn slice(&self, i: u32) -> Bounds {
        slice(self.space, self.count, i)
    }

    /// The key of shard `i`'s counter document, with its bounds as fixed fields.
    pub(crate) fn key(&self, i: u32) -> CounterKey {
        let slice = self.slice(i);
        let [lo, hi] = SHARD_BOUND_FIELDS;
        CounterKey::composite(doc! { "seq": &self.name, "shard": i as i32 })
            .with_fields(doc! { lo: slice.start, hi: slice.max })
    }

    /// The shard whose slice holds `value`.
    pub(crate) fn shard_of(&self, value: i64) -> Option<u32> {
        shard_of(self.space, self.count, value)
    }

    /// Reserves `n` contiguous values from one shard, picked at random among those not known to
    /// be full; a shard that cannot give them is skipped for the next one. With `up_to`, a shard
    /// near its end gives what it has left instead (at least one value).
    pub(crate) async fn reserve(&self, n: u64, up_to: bool) -> Result<Reservation> {
        let open: Vec<u32> = (0..self.count).filter(|&i| !self.full.is_full(i)).collect();
        let mut most_left = 0;
        if !open.is_empty() {
            let first = draw::below(open.len() as u64)? as usize;
            for j in 0..open.len() {
                let i = open[(first + j) % open.len()];
                match self.reserve_in(i, n, up_to).await? {
                    Outcome::Got(r) => return Ok(r),
                    Outcome::Short(left) => most_left = most_left.max(left),
                }
            }
        }
        Err(Error::Exhausted {
            counter: self.name.clone(),
            requested: n,
            last: self.space.max.saturating_sub_unsigned(most_left),
            max: self.space.max,
            limit: self.space.limit().key(),
        })
    }

    /// The slice of the shard that holds `value`.
    pub(crate) fn slice_of(&self, value: i64) -> Option<Bounds> {
        self.shard_of(value).map(|i| self.slice(i))
    }

    /// Reserves `n` contiguous values above `floor` from the shard that holds `value` (after
    /// the stored documents of that shard); from another shard, as [`reserve`](Self::reserve)
    /// does, if that one has fewer left.
    pub(crate) async fn reserve_above(
        &self,
        value: i64,
        n: u64,
        floor: i64,
    ) -> Result<Reservation> {
        let Some(i) = self.shard_of(value) else {
            return self.reserve(n, true).await;
        };
        match self
            .store
            .reserve_above(&self.key(i), n, self.slice(i), floor, None)
            .await
        {
            Err(Error::Exhausted { .. }) => {
                tracing::debug!(
                    target: RANGES,
                    counter = %self.key(i),
                    storedUpTo = floor,
                    "Shard full"
                );
                self.full.set(i, true);
                self.reserve(n, true).await
            }
            other => other,
        }
    }

    /// Moves the counter of the shard that holds `value` up to `last` (never down).
    pub(crate) async fn raise(&self, value: i64, last: i64) -> Result<()> {
        if let Some(i) = self.shard_of(value) {
            self.store
                .raise(&self.key(i), last, self.slice(i), None)
                .await?;
        }
        Ok(())
    }

    /// One reservation attempt in shard `i`.
    async fn reserve_in(&self, i: u32, n: u64, up_to: bool) -> Result<Outcome> {
        let (key, bounds) = (self.key(i), self.slice(i));
        let mut want = n;
        loop {
            match self.store.reserve(&key, want, bounds, None).await {
                Ok(r) => return Ok(Outcome::Got(r)),
                Err(Error::Exhausted { last, max, .. }) => {
                    let left = if last < max { max.abs_diff(last) } else { 0 };
                    if left == 0 {
                        tracing::debug!(target: RANGES, counter = %key, "Shard full");
                        self.full.set(i, true);
                    } else if up_to && left < want {
                        want = left;
                        continue;
                    }
                    return Ok(Outcome::Short(left));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The key of the shard that issued `range`, for giving it back.
    pub(crate) fn key_of(&self, range: IdRange) -> Option<CounterKey> {
        self.shard_of(range.first()).map(|i| self.key(i))
    }

    /// Records that values were given back to the shard holding `value`.
    pub(crate) fn gave_back(&self, value: i64) {
        if let Some(i) = self.shard_of(value) {
            self.full.set(i, false);
        }
    }

    /// Puts every shard back at the start of its slice (one round trip per shard), in
    /// `session` if given.
    pub(crate) async fn reset(&self, mut session: Option<&mut ClientSession>) -> Result<()> {
        for i in 0..self.count {
            let bounds = self.slice(i);
            let last = bounds.before_start();
            let session = session.as_deref_mut();
            self.store
                .set_last_issued(&self.key(i), last, true, bounds, session)
                .await?;
        }
        self.full.clear();
        Ok(())
    }

    /// Deletes every shard's counter document (one round trip per shard). Returns whether any
    /// existed.
    pub(crate) async fn delete(&self, mut session: Option<&mut ClientSession>) -> Result<bool> {
        let mut existed = false;
        for i in 0..self.count {
            existed |= self
                .store
                .delete(&self.key(i), session.as_deref_mut())
                .await?;
        }
        self.full.clear();
        Ok(existed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_disjoint_and_cover_the_space() {
        for start in [-3_i64, 0, 1, 100] {
            for size in 1..=40_i64 {
                let space = Bounds::new(start, start + size - 1).unwrap();
                for count in 1..=size as u32 {
                    let mut next = space.start;
                    for i in 0..count {
                        let s = slice(space, count, i);
                        assert_eq!(s.start, next, "{space:?} {count} {i}");
                        assert!(s.start <= s.max);
                        for v in s.start..=s.max {
                            assert_eq!(shard_of(space, count, v), Some(i));
                        }
                        next = s.max + 1;
                    }
                    assert_eq!(next - 1, space.max);
                    assert_eq!(shard_of(space, count, space.start - 1), None);
                    assert_eq!(shard_of(space, count, space.max + 1), None);
                }
            }
        }
    }

    #[test]
    fn the_guide_example_and_extreme_spaces() {
        // 1000 shards of 12-digit IDs: 900,000,000 values each.
        let space = Bounds::digits(12).unwrap();
        let s = slice(space, 1000, 499);
        assert_eq!((s.start, s.max), (549_100_000_000, 549_999_999_999));
        assert_eq!(shard_of(space, 1000, 549_100_000_000), Some(499));
        assert_eq!(shard_of(space, 1000, 549_099_999_999), Some(498));
        let all = Bounds::new(i64::MIN + 1, i64::MAX).unwrap();
        let most = sequence_rules::limits::MAX_SHARDS;
        let last = slice(all, most, most - 1);
        assert_eq!(last.max, i64::MAX);
        assert_eq!(shard_of(all, most, i64::MAX), Some(most - 1));
        assert_eq!(shard_of(all, most, i64::MIN + 1), Some(0));
        assert_eq!(slice(all, 1, 0), all);
    }
}
