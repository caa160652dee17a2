//! Everything this crate reports of what it does: the [`Stats`] of a sequence in this process
//! ([`Sequence::stats`](crate::Sequence::stats)), the [`snapshot`] of every sequence of the
//! process with the state of its cache, the `tracing` span of each reservation and the events
//! an operator may want to see (a refill, a retry, a skip ahead, a counter near its end), and,
//! with the cargo feature `metrics`, the series of the `metrics` facade. Each quantity is
//! counted in one place (`stats.rs`), which records the same to the metric series
//! (`metrics.rs`); the span is `span.rs`'s.
//!
//! ## Statistics and the snapshot
//!
//! Both serialize with `serde`, for an endpoint of a service:
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use sequence_runtime::{observability, Sequence, SequenceOptions};
//! let seq = Sequence::in_memory(SequenceOptions::builder("order").build())?;
//! seq.next().await?;
//! seq.reserve(5).await?;
//! let stats = seq.stats();
//! assert_eq!((stats.issued, stats.reserved, stats.reservations), (6, 6, 2));
//! let snapshot = observability::snapshot();
//! let order = snapshot.named("order").next().unwrap();
//! assert_eq!(order.stats, stats);
//! # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
//! ```
//!
//! ## Tracing
//!
//! The conventions are the MongoDB driver's own: each component emits under a target of its
//! own (`mongo_sequence::<component>`, as the driver's `mongodb::command`), an event's
//! message is a fixed phrase that names it (`"Skipped ahead"`, as the driver's
//! `"Command started"`), and fields of more than one word are in camel case
//! (`storedUpTo`, as the driver's `commandName`). Names and fields listed here are stable:
//! filter on them, build alerts on them (`RUST_LOG=mongo_sequence=debug` shows them all).
//!
//! Common fields: `sequence` is the sequence's name; `counter` the counter document's key
//! (name, period and scope values, or shard); `values` a number of values; `error` the
//! error's message; `collection` a namespace (`db.collection`).
//!
//! With `tracing-subscriber`, this crate's events at `debug` and everything else at `info`:
//!
//! ```
//! use tracing_subscriber::filter::{LevelFilter, Targets};
//! use tracing_subscriber::prelude::*;
//!
//! use sequence_runtime::{Sequence, SequenceOptions};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let filter = Targets::new()
//!     .with_target("mongo_sequence", LevelFilter::DEBUG)
//!     .with_default(LevelFilter::INFO);
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
//!     .with(filter)
//!     .init();
//!
//! let seq = Sequence::in_memory(SequenceOptions::builder("order").batch(10).build())?;
//! seq.next().await?; // logs `Refill started`, inside a `reserve` span
//! # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
//! ```
//!
//! ## The reservation span
//!
//! Every round trip that takes values from a counter runs inside one span, at `debug`, target
//! `mongo_sequence::reserve`, named `reserve`:
//!
//! | field | meaning |
//! | --- | --- |
//! | `sequence` | the sequence's name |
//! | `counter` | the counter's key (of a `ranges` sequence: its name; the shard shows in `first`) |
//! | `values` | how many values were asked for |
//! | `mode` | why: `coalesced` (one value per waiting caller, `batch = 1` or a scope), `refill` (a range for the cache), `bulk` (`reserve`, `insert_many_with_ids`), `session` (in the caller's session or transaction, gapless inserts), `above` (above stored IDs) |
//! | `first`, `last` | the range taken, recorded once it is known |
//! | `retries` | reservations sent again after a concurrent first upsert of the counter |
//!
//! The driver's own events (`mongodb::command`) of the round trip are inside the span.
//!
//! ## Events
//!
//! | target | message | level | fields | when |
//! | --- | --- | --- | --- | --- |
//! | `mongo_sequence::reserve` | `Reservation failed` | debug | `sequence`, `counter`, `error` | a reservation failed (inside its span) |
//! | `mongo_sequence::reserve` | `Reservation retried` | debug | `counter`, `attempt` | a concurrent first upsert of the counter won the race; sent again |
//! | `mongo_sequence::reserve` | `Counter nearly exhausted` | warn | `sequence`, `counter`, `last`, `max`, `valuesLeft`, `shareLeft` | a reservation left 10% or less of the counter's values `start..=max` (`shareLeft` from 0 to 1); once per counter and process |
//! | `mongo_sequence::cache` | `Refill started` | debug | `counter`, `values`, `prefetch` | the cache reserves its next range: in the background (`prefetch = true`) or while callers wait |
//! | `mongo_sequence::cache` | `Prefetch failed` | warn | `counter`, `error` | a background refill failed; the next caller that finds the cache empty tries again |
//! | `mongo_sequence::cache` | `Period changed` | debug | `counter`, `dropped` | a new period began; the values cached for the previous one were dropped |
//! | `mongo_sequence::cache` | `Batches ahead changed` | debug | `counter`, `batch`, `ahead` | a busy cache (batch of 10 or more) changed how many batches one refill takes |
//! | `mongo_sequence::skip_ahead` | `Skipped ahead` | debug | `sequence`, `counter`, `taken`, `storedUpTo`, `values` | an ID was already stored; the insert goes on above `storedUpTo` |
//! | `mongo_sequence::insert` | `Insert resent` | debug | `attempt`, `error` | an insert's outcome was unknown; the same document is sent again |
//! | `mongo_sequence::gapless` | `Gapless transaction retried` | debug | `sequence`, `counter`, `attempt`, `error` | a gapless insert's (or group's) transaction met a transient error and runs again |
//! | `mongo_sequence::gapless` | `Gapless commit retried` | debug | `collection`, `error` | a commit's outcome was unknown; the commit is sent again |
//! | `mongo_sequence::gapless` | `Gapless group committing` | debug | `sequence`, `counter`, `inserts` | a group of queued gapless inserts goes into one transaction |
//! | `mongo_sequence::random` | `Random ID collided` | debug | `collection`, `collisions`, `id` (one insert only) | random IDs met stored ones and are drawn again |
//! | `mongo_sequence::proxy` | `ID already claimed` | debug | `collection`, `proxy`, `draws` | with `unique = "proxy"`, a drawn or generated ID met a claim and is drawn again (a counter skips ahead instead: `Skipped ahead`) |
//! | `mongo_sequence::ranges` | `Shard full` | debug | `counter`, `storedUpTo` (when full past stored IDs) | a shard of a `ranges` sequence has no values left; the others are used |
//! | `mongo_sequence::period` | `Period counter selected` | debug | `sequence`, `counter` | the counter of a new period is used |
//! | `mongo_sequence::store` | `Counter index ensured` | debug | `collection`, `index` | the unique index a layout or a filter needs was created or found |
//! | `mongo_sequence::insert` | `Unique index missing` | warn | `collection`, `index` | the first insert of a model in this process found no unique index on its ID field (with its scope fields first) that inserts detect a stored ID by: create it with `ensure_indexes` |
//! | `mongo_sequence::insert` | `Indexes not checked` | debug | `collection`, `error` | that check could not list the collection's indexes |
//! | `mongo_sequence::store` | `Sequence recorded` | debug | `sequence`, `collection` | the sequence's settings were recorded beside its counters (see `store::SequenceRecord`), once per process |
//! | `mongo_sequence::store` | `Sequence record not written` | warn | `sequence`, `collection`, `error` | the record could not be written (a missing privilege): numbering goes on, and the command line cannot tell the sequence's settings |
//! | `mongo_sequence::store` | `Counter raised` | info | `counter`, `from` (absent if the counter was created), `to` | a counter was moved up to the IDs stored for it |
//! | `mongo_sequence::store` | `Client options unreadable` | warn | `consequence` | a client's deployment cannot be told apart from others (once per process) |
//! | `mongo_sequence::admin` | `Counters synced` | info | `sequence`, `counters`, `moved`, `skipped`, `dryRun` | `sync_counters` finished |
//! | `mongo_sequence::admin` | `Old period counters deleted` | info | `sequence`, `before`, `deleted` | `purge_before` deleted the counters of old periods |
//!
//! ## Metrics (cargo feature `metrics`, off by default)
//!
//! With the feature, each sequence records through the [`metrics`](https://docs.rs/metrics)
//! facade (0.24); the application installs the recorder (Prometheus, OpenTelemetry, StatsD
//! exporters). Every series has the labels `sequence` (the sequence's name) and `strategy`
//! only, never a scope value or a period, so their number is bounded by the sequences a
//! process uses. A sequence's handles are registered when the process first uses it: install
//! the recorder before. Without a recorder a record is a branch on an empty handle; without the
//! feature, nothing is compiled in. Each quantity that [`Stats`] counts is
//! recorded at the same point, so the counters of a process match the sum of its `stats()`.
//!
//! | metric | kind | meaning |
//! | --- | --- | --- |
//! | `mongo_sequence_ids_issued_total` | counter | IDs handed out (`Stats::issued`) |
//! | `mongo_sequence_reservations_total` | counter, label `outcome` (`ok`, `exhausted`, `error`) | round trips that reserved values from a counter (`ok`: `Stats::reservations`) |
//! | `mongo_sequence_reservation_duration_seconds` | histogram | how long each reservation took, whatever its outcome |
//! | `mongo_sequence_reservation_retries_total` | counter | reservations sent again after a concurrent first upsert (`Stats::retries`) |
//! | `mongo_sequence_waits_total` | counter | calls for an ID that waited for a round trip (`Stats::waits`) |
//! | `mongo_sequence_wait_duration_seconds` | histogram | how long each of those calls waited |
//! | `mongo_sequence_ids_per_reservation` | histogram | values taken by each reservation: what coalescing and batches achieve |
//! | `mongo_sequence_skipped_ahead_total` | counter | inserts that met a stored ID and skipped ahead (`Stats::skipped_ahead`) |
//! | `mongo_sequence_collisions_total` | counter | random IDs drawn again after a collision (`Stats::collisions`) |
//! | `mongo_sequence_transaction_retries_total` | counter | gapless transactions run again after a transient error (`Stats::transaction_retries`) |
//! | `mongo_sequence_group_size` | histogram | gapless inserts committed in one transaction |
//! | `mongo_sequence_ids_released_total` | counter | cached values given back to the counter by `release` (`Stats::released`) |
//! | `mongo_sequence_ids_abandoned_total` | counter | reserved values dropped unused, gaps (`Stats::wasted`) |
//! | `mongo_sequence_cached_ids` | gauge | values reserved and held in this process's caches now |

mod metrics;
mod snapshot;
mod span;
mod stats;
mod targets;
#[cfg(test)]
mod tests;

pub(crate) use metrics::{Labels, Timer};
pub use snapshot::{snapshot, CacheSnapshot, SequenceSnapshot, Snapshot};
pub(crate) use snapshot::{watch, Place, Reported};
pub(crate) use span::{near_end, reserving, Mode, Reserved};
pub use stats::Stats;
pub(crate) use stats::StatsCell;
pub(crate) use targets::{
    ADMIN, CACHE, GAPLESS, INSERT, PERIOD, PROXY, RANDOM, RANGES, RESERVE, SKIP_AHEAD, STORE,
};
