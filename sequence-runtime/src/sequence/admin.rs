//! The operations of an operator: read, move, reset and delete counters, give cached values
//! back, purge old periods, and move counters up to the IDs already stored. Each but `release`
//! is awaited through its action (`crate::action`), which adds the public method.

use std::sync::Arc;

use jiff::civil::DateTime;
use mongodb::bson::Document;
use mongodb::{ClientSession, Collection};

use super::Sequence;
use crate::error::{Error, Result};
use crate::id::{IdRange, Slot};
use crate::observability::ADMIN;
use crate::process::ProcessState;
use crate::store::{CounterStore, PastPeriods};
use crate::sync::{self, Source, SyncReport, SyncedCounter, Target};

impl Sequence {
    /// The last value issued according to the counter document, read in `session` if given
    /// ([`current`](Self::current)).
    pub(crate) async fn current_in(
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

    /// Makes `next` the next value issued, in `session` if given ([`set_next`](Self::set_next)).
    pub(crate) async fn set_next_in(
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

    /// Puts the counter back to `start`, in `session` if given ([`reset`](Self::reset)).
    pub(crate) async fn reset_in(&self, session: Option<&mut ClientSession>) -> Result<()> {
        let engine = self.engine()?;
        let counters = engine.maker.counters("reset")?;
        let slot = self.slot()?;
        engine.shared.invalidate().await;
        counters.reset(&slot.key, session).await
    }

    /// Deletes the counter document, in `session` if given ([`delete`](Self::delete)).
    pub(crate) async fn delete_in(&self, session: Option<&mut ClientSession>) -> Result<bool> {
        let engine = self.engine()?;
        let counters = engine.maker.counters("delete")?;
        let slot = self.slot()?;
        engine.shared.invalidate().await;
        counters.delete(&slot.key, session).await
    }

    /// Gives the unused values cached in this process back to the counter, where nobody has
    /// advanced it since they were reserved (compare-and-set); otherwise they are counted as
    /// wasted. Returns how many values were given back. Call it on graceful shutdown: a process
    /// that stops without it loses at most the ranges it holds (one, plus one prefetched; from
    /// a batch of [`Batch::AHEAD_FROM`](crate::options::Batch::AHEAD_FROM) on, each up to [`Batch::MAX_AHEAD`](crate::options::Batch::MAX_AHEAD) batches),
    /// and the values reserved ahead for the next `insert_many_with_ids` of a model that
    /// inserts in bulk again and again (one call's worth). It also frees what the process
    /// remembers of the sequence's scope values and of which of its counters exist.
    ///
    /// It takes no session: it gives back what this process holds, which is no part of a
    /// caller's transaction.
    pub async fn release(&self) -> Result<u64> {
        let engine = self.engine()?;
        // The values reserved ahead for the next bulk insert, then the caches' ranges (the
        // sequence's, and those of its scope values).
        let mut held: Vec<(IdRange, Arc<Slot>)> = Vec::new();
        if let Some((range, slot)) = engine.shared.bulk.take_all().await {
            engine.shared.stats.reserved(range.len(), 0);
            held.push((range, slot));
        }
        held.extend(cached_ranges(&engine.shared).await);
        for cache in engine.shared.scopes.take_all() {
            held.extend(cached_ranges(&cache).await);
        }
        // Which counters exist: a hint of the rounds of several counters, rebuilt as they go.
        crate::store::forget_known_counters(&engine.store.identity());
        self.give_back(held).await
    }

    /// Gives the values cached by `caches` (of scope values forgotten) back, as
    /// [`release`](Self::release) does.
    pub(crate) async fn give_back_caches(&self, caches: Vec<Arc<ProcessState>>) -> Result<u64> {
        let mut held = Vec::new();
        for cache in caches {
            held.extend(cached_ranges(&cache).await);
        }
        self.give_back(held).await
    }

    /// Gives `held` back to their counters where they are still the counters' last values;
    /// counts the others as wasted. Returns how many values went back.
    async fn give_back(&self, mut held: Vec<(IdRange, Arc<Slot>)>) -> Result<u64> {
        let engine = self.engine()?;
        if held.is_empty() {
            return Ok(0);
        }
        // The later ranges first: a range goes back only while it is the counter's last.
        held.sort_by_key(|(range, _)| std::cmp::Reverse(range.last()));
        let mut given_back = 0;
        let counters = engine.maker.counters("release")?;
        for (range, slot) in held {
            let Some(key) = counters.key_of(range, &slot) else {
                engine.shared.stats.wasted(range.len());
                continue;
            };
            let back = engine
                .store
                .compare_and_set(&key, range.last(), range.first() - 1, None)
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

    /// Deletes or counts the counters of the periods before `before`'s, in `session` if given
    /// ([`purge_periods_before`](Self::purge_periods_before),
    /// [`count_periods_before`](Self::count_periods_before)).
    pub(crate) async fn past_periods_in(
        &self,
        before: DateTime,
        what: PastPeriods,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let (store, name, period) = self.periods_before(before)?;
        match what {
            PastPeriods::Delete => store.delete_periods_before(name, &period, session),
            PastPeriods::Count => store.count_periods_before(name, &period, session),
        }
        .await
    }

    /// The store, the name and the canonical period `before` falls in, for purging (or
    /// counting) the counters of the periods before it: refused after the current period, and
    /// for a sequence without periods.
    fn periods_before(&self, before: DateTime) -> Result<(&Arc<dyn CounterStore>, &str, String)> {
        let engine = self.engine()?;
        let name = &self.state.options.name;
        let format = &engine.format;
        let (Some(given), Some(current)) = (
            format.period_of(before),
            format.period_at(engine.shared.now()),
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
        Ok((&engine.store, name, format.canonical(given)))
    }

    /// Moves every counter up to the highest ID stored for it in `coll` (see
    /// [`sync_counters`](Self::sync_counters)), in `session` if given.
    pub(crate) async fn sync_counters_in(
        &self,
        coll: &Collection<Document>,
        id_field: &str,
        stored_scope: Option<&[String]>,
        text: bool,
        dry_run: bool,
        session: Option<&mut ClientSession>,
    ) -> Result<SyncReport> {
        let engine = self.engine()?;
        let options = &self.state.options;
        let counters = engine.maker.counters("sync_counters")?;
        let shards = counters.shards().map(|shards| &**shards);
        let scope_names: Vec<&str> = options.scope.iter().map(String::as_str).collect();
        let stored: Vec<&str> = match stored_scope {
            Some(fields) => fields.iter().map(String::as_str).collect(),
            None => scope_names.clone(),
        };
        if stored.len() != scope_names.len() {
            return Err(Error::InvalidArgument {
                argument: "scope_fields",
                reason: format!(
                    "sequence `{}` is scoped by {} field(s), but {} stored name(s) were given",
                    options.name,
                    scope_names.len(),
                    stored.len()
                ),
            });
        }
        let source = Source {
            coll,
            field: id_field,
            scope: scope_names
                .iter()
                .copied()
                .zip(stored.iter().copied())
                .collect(),
            text,
        };
        let target = Target {
            options,
            store: &engine.store,
            bounds: engine.bounds,
            format: &engine.format,
            pattern: engine.format.pattern(),
            width: engine.format.width(),
            shards,
            now: engine.shared.now(),
        };
        let report = sync::sync(&source, &target, dry_run, session).await?;
        if report.counters.iter().any(SyncedCounter::moved) && !dry_run {
            // Values cached below a counter's new value are taken by stored documents.
            engine.shared.invalidate().await;
        }
        tracing::info!(
            target: ADMIN,
            sequence = %options.name,
            counters = report.counters.len(),
            moved = report.counters.iter().filter(|c| c.moved()).count(),
            skipped = report.skipped,
            dryRun = dry_run,
            "Counters synced"
        );
        Ok(report)
    }
}

/// The ranges `cache` holds, taken out of it, with the slot they belong to.
async fn cached_ranges(cache: &ProcessState) -> Vec<(IdRange, Arc<Slot>)> {
    let (current, standby, slot) = cache.take_all().await;
    let Some(slot) = slot else {
        return Vec::new();
    };
    [standby, current]
        .into_iter()
        .flatten()
        .map(|r| (r, slot.clone()))
        .collect()
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
