//! The operations of an operator: read, move, reset and delete counters, give cached values
//! back, purge old periods, and move counters up to the IDs already stored.

use jiff::civil::DateTime;
use mongodb::bson::Document;
use mongodb::{ClientSession, Collection};

use super::actions::{CountPeriods, Current, Delete, PurgePeriods, Reset, SetNext, SyncCounters};
use super::Sequence;
use crate::error::{Error, Result};

impl Sequence {
    /// The last value issued according to the counter document (`None`: no counter yet).
    /// Values cached by processes are counted as issued. Takes a session
    /// ([`Current::session`]) for a read in the caller's transaction.
    pub fn current(&self) -> Current<'_> {
        Current::new(self)
    }

    pub(super) async fn current_in(
        &self,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<i64>> {
        let engine = self.counter_only("current")?;
        let slot = self.slot()?;
        engine
            .store
            .last_issued(&slot.key, engine.bounds, session)
            .await
    }

    /// Makes `next` the next value issued. Refuses to move the counter backwards unless
    /// [`force`](SetNext::force)d, since that could reissue IDs. Invalidates the values cached
    /// in this process.
    ///
    /// ```no_run
    /// # async fn f(seq: sequence_runtime::Sequence) -> sequence_runtime::Result<()> {
    /// seq.set_next(10_000).await?;            // after importing documents 1..9_999
    /// seq.set_next(1).force(true).await?;     // back to the start, knowingly
    /// # Ok(()) }
    /// ```
    pub fn set_next(&self, next: i64) -> SetNext<'_> {
        SetNext::new(self, next)
    }

    pub(super) async fn set_next_in(
        &self,
        next: i64,
        force: bool,
        session: Option<&mut ClientSession>,
    ) -> Result<()> {
        let engine = self.engine()?;
        let bounds = engine.bounds;
        if next < bounds.start || next > bounds.max {
            return Err(Error::InvalidArgument {
                argument: "next",
                reason: format!(
                    "{next} is outside start..=max ({}..={}); give a value in that range",
                    bounds.start, bounds.max
                ),
            });
        }
        self.counter_only("set_next")?;
        let slot = self.slot()?;
        engine.shared.invalidate().await;
        engine
            .store
            .set_last_issued(&slot.key, next - 1, force, bounds, session)
            .await
    }

    /// Puts the counter back so that the next value is `start` (of a ranges sequence: every
    /// shard back to the start of its slice, one round trip per shard). Invalidates cached
    /// values. Takes a session ([`Reset::session`]).
    pub fn reset(&self) -> Reset<'_> {
        Reset::new(self)
    }

    pub(super) async fn reset_in(&self, session: Option<&mut ClientSession>) -> Result<()> {
        let engine = self.engine()?;
        let counters = engine.kind.counters("reset")?;
        let slot = self.slot()?;
        engine.shared.invalidate().await;
        counters.reset(&slot.key, session).await
    }

    /// Deletes the counter document (of a ranges sequence: those of all its shards, one round
    /// trip per shard); the next use starts again at `start`. Returns whether it existed.
    /// Invalidates cached values. Takes a session ([`Delete::session`]).
    pub fn delete(&self) -> Delete<'_> {
        Delete::new(self)
    }

    pub(super) async fn delete_in(&self, session: Option<&mut ClientSession>) -> Result<bool> {
        let engine = self.engine()?;
        let counters = engine.kind.counters("delete")?;
        let slot = self.slot()?;
        engine.shared.invalidate().await;
        counters.delete(&slot.key, session).await
    }

    /// Gives the unused values cached in this process back to the counter, where nobody has
    /// advanced it since they were reserved (compare-and-set); otherwise they are counted as
    /// wasted. Returns how many values were given back. Call it on graceful shutdown: a process
    /// that stops without it loses at most the ranges it holds (one, plus one prefetched; from
    /// a batch of [`Batch::AHEAD_FROM`](crate::options::Batch::AHEAD_FROM) on, each up to [`Batch::MAX_AHEAD`](crate::options::Batch::MAX_AHEAD) batches).
    ///
    /// It takes no session: it gives back what this process holds, which is no part of a
    /// caller's transaction.
    pub async fn release(&self) -> Result<u64> {
        let engine = self.engine()?;
        let (current, standby, slot) = engine.shared.take_all().await;
        let Some(slot) = slot else {
            return Ok(0);
        };
        let mut given_back = 0;
        // The standby range is the later one: give it back first, then the current one.
        let counters = engine.kind.counters("release")?;
        for range in [standby, current].into_iter().flatten() {
            let Some(key) = counters.key_of(range, &slot) else {
                engine.shared.stats.wasted(range.len());
                continue;
            };
            let back = engine
                .store
                .compare_and_set(&key, range.last(), range.first() - 1)
                .await?;
            if back {
                counters.gave_back(range.first());
                given_back += range.len();
                engine.shared.stats.released(range.len());
            } else {
                engine.shared.stats.wasted(range.len());
            }
        }
        Ok(given_back)
    }

    /// Deletes the counters of the periods before the one that `before` falls in (in every
    /// scope) and returns how many it deleted: housekeeping for sequences with a date prefix,
    /// whose counters accumulate one per period.
    ///
    /// `before` is a civil date or date-time in the sequence's time zone, truncated to the
    /// period's resolution (`2025-11-01` for a monthly prefix means November 2025). Counters of
    /// other sequences and of `before`'s period and later are never touched. A `before` in a
    /// period after the current one is refused with [`Error::InvalidArgument`], since that would
    /// delete the current period's counter and make its IDs start over.
    ///
    /// Purge only periods the clock will not return to: a deleted period's counter would start
    /// again at `start`. Takes a session ([`PurgePeriods::session`]).
    pub fn purge_periods_before(&self, before: impl Into<DateTime>) -> PurgePeriods<'_> {
        PurgePeriods::new(self, before.into())
    }

    pub(super) async fn purge_periods_in(
        &self,
        before: DateTime,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let period = self.period_before(before)?;
        let (store, name) = (&self.engine()?.store, &self.state.options.name);
        store.delete_periods_before(name, &period, session).await
    }

    /// How many counters [`purge_periods_before`](Self::purge_periods_before) would delete;
    /// nothing is deleted. Takes a session ([`CountPeriods::session`]).
    pub fn count_periods_before(&self, before: impl Into<DateTime>) -> CountPeriods<'_> {
        CountPeriods::new(self, before.into())
    }

    pub(super) async fn count_periods_in(
        &self,
        before: DateTime,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let period = self.period_before(before)?;
        let (store, name) = (&self.engine()?.store, &self.state.options.name);
        store.count_periods_before(name, &period, session).await
    }

    /// The canonical period `before` falls in, for purging the periods before it: refused
    /// after the current period, and for a sequence without periods.
    fn period_before(&self, before: DateTime) -> Result<String> {
        let engine = self.engine()?;
        let name = &self.state.options.name;
        let format = &engine.format;
        let (Some(given), Some(current)) = (
            format.period_of(before),
            format.period_at(engine.shared.now(&self.state.options.clock)),
        ) else {
            return Err(Error::InvalidArgument {
                argument: "before",
                reason: format!(
                    "sequence `{name}` has no date tokens in its `prefix`, so it has no periods \
                     to purge"
                ),
            });
        };
        if given > current {
            return Err(Error::InvalidArgument {
                argument: "before",
                reason: format!(
                    "refusing to purge the periods of `{name}` before {}: that is after the \
                     current period {}; give a date in the current period or earlier",
                    format.canonical(given),
                    format.canonical(current)
                ),
            });
        }
        Ok(format.canonical(given))
    }

    /// Moves every counter of this sequence up to the highest ID stored for it in `coll`, whose
    /// documents hold their IDs in `id_field`: after an import, a restore, a migration, or
    /// documents written by another program. One counter per period for prefixed IDs (parsed
    /// back with the pattern and width that render them), one per scope value, one per shard.
    /// A counter never moves down, and a missing one is created. Returns what it found and
    /// did; IDs that belong to no counter (another BSON type, text that does not match the
    /// pattern, values below `start`) are counted as skipped.
    ///
    /// The IDs are read with one aggregation over the documents that have `id_field`. Set the
    /// names the documents store the scope fields under with
    /// [`scope_fields`](SyncCounters::scope_fields) if they differ from the `scope` names,
    /// and say whether the IDs are text with [`text`](SyncCounters::text) (default: numbers).
    /// A derived model has `sync_counters(&coll)`, which sets both.
    ///
    /// A stored value beyond `max` is [`Error::StoredBeyondMax`], and nothing is written.
    /// Counter and ranges strategies only.
    ///
    /// ```no_run
    /// # async fn f(seq: sequence_runtime::Sequence, orders: mongodb::Collection<mongodb::bson::Document>) -> sequence_runtime::Result<()> {
    /// let report = seq.sync_counters(&orders, "number").await?;
    /// for counter in &report.counters {
    ///     println!("{}: {:?} -> {}", counter.key, counter.old, counter.new);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn sync_counters<'a>(
        &'a self,
        coll: &'a Collection<Document>,
        id_field: &'a str,
    ) -> SyncCounters<'a> {
        SyncCounters {
            seq: self,
            coll,
            id_field,
            scope_fields: None,
            text: false,
            dry_run: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Error;
    use crate::options::SequenceOptions;
    use crate::sequence::Sequence;

    fn memory(options: SequenceOptions) -> Sequence {
        Sequence::in_memory(options).unwrap()
    }

    #[tokio::test]
    async fn the_counter_moves_only_forwards_unless_forced() {
        let seq = memory(
            SequenceOptions::builder("a")
                .batch(5)
                .start(1)
                .max(1000)
                .build(),
        );
        assert_eq!(seq.current().await.unwrap(), None);
        assert_eq!(seq.next().await.unwrap(), 1);
        let current = seq.current().await.unwrap();
        assert!(
            matches!(current, Some(5 | 10)),
            "cached (and prefetched) batches count as issued: {current:?}"
        );
        seq.set_next(100).await.unwrap();
        assert_eq!(seq.next().await.unwrap(), 100, "cached values were dropped");
        assert!(matches!(
            seq.set_next(50).await,
            Err(Error::WouldMoveBackwards { .. })
        ));
        seq.set_next(50).force(true).await.unwrap();
        assert_eq!(seq.next().await.unwrap(), 50);
        assert!(matches!(
            seq.set_next(1001).await,
            Err(Error::InvalidArgument {
                argument: "next",
                ..
            })
        ));
    }

    #[tokio::test]
    async fn reset_and_delete_start_over() {
        let seq = memory(SequenceOptions::builder("a").start(10).build());
        assert_eq!(seq.next().await.unwrap(), 10);
        assert_eq!(seq.next().await.unwrap(), 11);
        seq.reset().await.unwrap();
        assert_eq!(seq.next().await.unwrap(), 10);
        assert!(seq.delete().await.unwrap());
        assert!(!seq.delete().await.unwrap(), "gone already");
        assert_eq!(seq.next().await.unwrap(), 10);
    }

    #[tokio::test]
    async fn release_gives_unused_values_back() {
        let seq = memory(SequenceOptions::builder("a").batch(10).build());
        assert_eq!(seq.next().await.unwrap(), 1);
        let given_back = seq.release().await.unwrap();
        assert!(
            given_back >= 9,
            "at least the rest of the range: {given_back}"
        );
        assert_eq!(seq.next().await.unwrap(), 2, "no value was lost");
    }

    #[tokio::test]
    async fn periods_are_refused_without_date_tokens() {
        let seq = memory(SequenceOptions::builder("a").build());
        let before = jiff::civil::date(2025, 1, 1);
        assert!(matches!(
            seq.purge_periods_before(before).await,
            Err(Error::InvalidArgument {
                argument: "before",
                ..
            })
        ));
        assert!(matches!(
            seq.count_periods_before(before).await,
            Err(Error::InvalidArgument {
                argument: "before",
                ..
            })
        ));
    }
}
