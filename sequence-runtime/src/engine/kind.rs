//! What a [`Sequence`](crate::Sequence) holds for its strategy: how its values are made.

use std::sync::Arc;

use sequence_rules::Strategy;

use super::counters::Counters;
use super::ranges::Shards;
use super::registry;
use crate::error::{Error, Result};
use crate::options::SequenceOptions;
use crate::store::CounterStore;
use crate::values::{Bounds, CounterKey};

/// How a sequence makes its values.
#[derive(Debug)]
pub(crate) enum Kind {
    /// From counters: one per period and scope, or the shards of a ranges sequence.
    Counters(Counters),
    /// Random draws.
    Random,
    /// UUIDs or ObjectIds: no number at all.
    Generated(Strategy),
}

impl Kind {
    /// The kind of `options`, whose space of values is `space`. `place` (where the counters are
    /// kept, see [`registry::place`]) shares the per-process state with the other handles of
    /// the sequence; `None` gives the handle a state of its own.
    pub(crate) fn new(
        options: &SequenceOptions,
        store: &Arc<dyn CounterStore>,
        key: &CounterKey,
        space: Bounds,
        place: Option<&registry::Place>,
    ) -> Self {
        match options.strategy {
            Strategy::Counter => Kind::Counters(Counters::One {
                store: store.clone(),
                bounds: space,
            }),
            Strategy::Ranges => {
                let count = options.shards;
                let full = place.map(|place| {
                    let at = registry::CounterAt {
                        place: place.clone(),
                        counter: format!("{}\0{}", key.canonical(), Shards::identity(space, count)),
                    };
                    registry::full_shards(&at, count)
                });
                let shards = Shards::new(store.clone(), &options.name, space, count, full);
                Kind::Counters(Counters::Ranges(Arc::new(shards)))
            }
            Strategy::Random => Kind::Random,
            other => Kind::Generated(other),
        }
    }

    /// A random draw in `space`, for the random strategy; `None` for the others.
    pub(crate) fn draw(&self, space: Bounds) -> Result<Option<i64>> {
        match self {
            Kind::Random => super::random::draw(space).map(Some),
            _ => Ok(None),
        }
    }

    /// The counters of a sequence that has them; `operation` is refused otherwise.
    pub(crate) fn counters(&self, operation: &'static str) -> Result<&Counters> {
        match self {
            Kind::Counters(counters) => Ok(counters),
            other => Err(other.unsupported(operation)),
        }
    }

    /// The one counter (per period and scope) of a `counter` sequence; `operation`, which
    /// reads or sets a single counter, is refused otherwise.
    pub(crate) fn one_counter(&self, operation: &'static str) -> Result<&Counters> {
        match self {
            Kind::Counters(counters) if counters.is_one() => Ok(counters),
            other => Err(other.unsupported(operation)),
        }
    }

    pub(crate) fn strategy(&self) -> Strategy {
        match self {
            Kind::Counters(Counters::One { .. }) => Strategy::Counter,
            Kind::Counters(Counters::Ranges(_)) => Strategy::Ranges,
            Kind::Random => Strategy::Random,
            Kind::Generated(s) => *s,
        }
    }

    /// The error of `operation` on a strategy that does not have it.
    pub(crate) fn unsupported(&self, operation: &'static str) -> Error {
        let strategy = self.strategy();
        let hint = match strategy {
            Strategy::Ranges => {
                "; it needs a single counter, and a ranges sequence has one per shard"
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

    /// The id, in the registry, of the cache and statistics of the sequence with `key`.
    pub(crate) fn cache_id(&self, key: &CounterKey) -> String {
        match self {
            Kind::Counters(Counters::One { .. }) => counter_cache_id(key),
            Kind::Counters(Counters::Ranges(s)) => {
                format!("{}\0{}", key.canonical(), s.configuration())
            }
            Kind::Random => format!("{}\0random", key.canonical()),
            Kind::Generated(s) => format!("{}\0{}", key.canonical(), s.name()),
        }
    }
}

/// The id, in the registry, of the cache and statistics of the `counter` sequence with `key`.
pub(crate) fn counter_cache_id(key: &CounterKey) -> String {
    key.canonical().to_owned()
}
