//! The strategies by name, and what a [`Sequence`](crate::Sequence) holds for each.

use std::fmt;
use std::sync::Arc;

use crate::bounds::Bounds;
use crate::config::Strategy;
use crate::error::{Error, Result};
use crate::key::CounterKey;
use crate::options::{Batch, SequenceOptions};
use crate::registry;
use crate::sharded::{FullShards, Shards, BOUND_FIELDS};
use crate::store::CounterStore;

impl Strategy {
    /// The name, as written in `#[seq(strategy = "...")]`.
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Counter => "counter",
            Strategy::Sharded => "sharded",
            Strategy::Random => "random",
            Strategy::Uuid => "uuid",
            Strategy::UuidV7 => "uuid_v7",
            Strategy::ObjectId => "object_id",
        }
    }

    /// Whether IDs come from counter documents (`counter`, `sharded`).
    pub const fn uses_counters(self) -> bool {
        matches!(self, Strategy::Counter | Strategy::Sharded)
    }

    /// Whether IDs are numbers (`counter`, `sharded`, `random`).
    pub const fn is_numeric(self) -> bool {
        matches!(
            self,
            Strategy::Counter | Strategy::Sharded | Strategy::Random
        )
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a sequence makes its values.
#[derive(Debug)]
pub(crate) enum Kind {
    /// One counter document.
    Counter,
    /// Several counter documents with disjoint slices.
    Sharded(Arc<Shards>),
    /// Random draws.
    Random,
    /// UUIDs or ObjectIds: no number at all.
    Generated(Strategy),
}

impl Kind {
    pub(crate) fn strategy(&self) -> Strategy {
        match self {
            Kind::Counter => Strategy::Counter,
            Kind::Sharded(_) => Strategy::Sharded,
            Kind::Random => Strategy::Random,
            Kind::Generated(s) => *s,
        }
    }

    /// The error of `operation` on a strategy that does not have it.
    pub(crate) fn unsupported(&self, operation: &'static str) -> Error {
        let strategy = self.strategy();
        let hint = match strategy {
            Strategy::Sharded => {
                "; it needs a single counter, and a sharded sequence has one per shard"
            }
            Strategy::Random => "; random IDs use no counter",
            _ => "; this strategy makes no numbers",
        };
        Error::Unsupported {
            operation,
            strategy: strategy.name(),
            hint,
        }
    }
}

impl Kind {
    /// The kind of `options`, whose space of values is `space`. `registry` (database, counters
    /// collection) shares the per-process state with the other handles of the sequence; `None`
    /// gives the handle a state of its own.
    pub(crate) fn new(
        options: &SequenceOptions,
        store: &Arc<dyn CounterStore>,
        key: &CounterKey,
        space: Bounds,
        registry: Option<(&str, &str)>,
    ) -> Self {
        match options.strategy {
            Strategy::Counter => Kind::Counter,
            Strategy::Sharded => {
                let count = options.shards;
                let full = registry.map(|(db, counters)| {
                    let id = format!(
                        "full-shards\0{db}\0{counters}\0{}\0{}",
                        key.canonical(),
                        Shards::identity(space, count)
                    );
                    registry::entry(id, || FullShards::new(count))
                });
                let shards = Shards::new(store.clone(), &options.name, space, count, full);
                Kind::Sharded(Arc::new(shards))
            }
            Strategy::Random => Kind::Random,
            other => Kind::Generated(other),
        }
    }

    /// The id, in the registry, of the cache and statistics of the sequence with `key`.
    pub(crate) fn cache_id(&self, key: &CounterKey, space: Bounds) -> String {
        match self {
            Kind::Counter => key.canonical().to_owned(),
            Kind::Sharded(s) => format!(
                "{}\0{}",
                key.canonical(),
                Shards::identity(space, s.count())
            ),
            Kind::Random => format!("{}\0random", key.canonical()),
            Kind::Generated(s) => format!("{}\0{}", key.canonical(), s.name()),
        }
    }
}

/// Checks the options that depend on the strategy, given the space of values they describe.
pub(crate) fn validate(options: &SequenceOptions, space: Bounds) -> Result<()> {
    let strategy = options.strategy;
    if strategy != Strategy::Counter {
        let counter_only = [
            ("prefix", options.prefix.is_some()),
            ("tz", options.tz.is_some()),
            ("width", options.width.is_some()),
            ("scope", !options.scope.is_empty()),
        ];
        if let Some((key, _)) = counter_only.iter().find(|(_, set)| *set) {
            return Err(Error::InvalidOptions(format!(
                "`{key}` applies to the counter strategy only, not to \"{strategy}\""
            )));
        }
    }
    if !strategy.uses_counters() && options.batch != Batch::Fixed(1) {
        return Err(Error::InvalidOptions(format!(
            "`batch` applies to the counter and sharded strategies only, not to \"{strategy}\""
        )));
    }
    if strategy == Strategy::Sharded {
        Shards::validate(space, options.shards)?;
        let field = options.layout.field_name();
        if BOUND_FIELDS.contains(&field) {
            return Err(Error::InvalidOptions(format!(
                "the counter field `{field}` of a sharded sequence would clash with the bounds \
                 fields `lo` and `hi` of its counter documents; choose another field"
            )));
        }
    }
    Ok(())
}
