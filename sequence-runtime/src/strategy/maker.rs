//! What a [`Sequence`](crate::Sequence) holds for its strategy: how its values are made.

use std::sync::Arc;

use sequence_rules::Strategy;

use super::counters::Counters;
use super::ranges::{FullShards, Shards};
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey};
use crate::options::SequenceOptions;
use crate::store::CounterStore;

/// How a sequence makes its values.
#[derive(Debug)]
pub(crate) enum Maker {
    /// From counters: one per period and scope, or the shards of a ranges sequence.
    Counters(Counters),
    /// Random draws.
    Random,
    /// UUIDs or ObjectIds: no number at all.
    Generated(Strategy),
}

impl Maker {
    /// The maker of `options`, whose space of values is `space`. For a ranges sequence, `full`
    /// gives the record of which shards are full that the other handles of the sequence in this
    /// process share, given the identity of the shards (their space and count); `None` keeps a
    /// record of its own.
    pub(crate) fn new(
        options: &SequenceOptions,
        store: &Arc<dyn CounterStore>,
        space: Bounds,
        full: impl FnOnce(String) -> Option<Arc<FullShards>>,
    ) -> Self {
        match options.strategy {
            Strategy::Counter => Maker::Counters(Counters::One {
                store: store.clone(),
                bounds: space,
            }),
            Strategy::Ranges => {
                let count = options.shards;
                let full = full(Shards::identity(space, count));
                let shards = Shards::new(store.clone(), &options.name, space, count, full);
                Maker::Counters(Counters::Ranges(Arc::new(shards)))
            }
            Strategy::Random => Maker::Random,
            other => Maker::Generated(other),
        }
    }

    /// A random draw in `space`, for the random strategy; `None` for the others.
    pub(crate) fn draw(&self, space: Bounds) -> Result<Option<i64>> {
        match self {
            Maker::Random => super::draw::draw(space).map(Some),
            _ => Ok(None),
        }
    }

    /// The counters of a sequence that has them; `operation` is refused otherwise.
    pub(crate) fn counters(&self, operation: &'static str) -> Result<&Counters> {
        match self {
            Maker::Counters(counters) => Ok(counters),
            other => Err(other.unsupported(operation)),
        }
    }

    /// The one counter (per period and scope) of a `counter` sequence; `operation`, which
    /// reads or sets a single counter, is refused otherwise.
    pub(crate) fn one_counter(&self, operation: &'static str) -> Result<&Counters> {
        match self {
            Maker::Counters(counters) if counters.is_one() => Ok(counters),
            other => Err(other.unsupported(operation)),
        }
    }

    pub(crate) fn strategy(&self) -> Strategy {
        match self {
            Maker::Counters(Counters::One { .. }) => Strategy::Counter,
            Maker::Counters(Counters::Ranges(_)) => Strategy::Ranges,
            Maker::Random => Strategy::Random,
            Maker::Generated(s) => *s,
        }
    }

    /// The error of `operation` on a strategy that does not have it.
    pub(crate) fn unsupported(&self, operation: &'static str) -> Error {
        let strategy = self.strategy();
        let hint = match strategy {
            Strategy::Ranges => {
                "it needs a single counter, and a ranges sequence has one per shard"
            }
            Strategy::Random => "random IDs use no counter",
            _ => "this strategy makes no numbers",
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
            Maker::Counters(Counters::One { .. }) => key.canonical().to_owned(),
            Maker::Counters(Counters::Ranges(s)) => {
                format!("{}\0{}", key.canonical(), s.configuration())
            }
            Maker::Random => format!("{}\0random", key.canonical()),
            Maker::Generated(s) => format!("{}\0{}", key.canonical(), s.name()),
        }
    }
}
