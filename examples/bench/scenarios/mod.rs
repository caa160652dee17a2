//! The scenarios: the rows of the table, each a function that does one measured run.

mod alternate;
mod gapless;
mod insert_many;
mod inserts;
#[cfg(feature = "metrics")]
mod metrics;
pub mod models;
mod next_id;
mod processes;
mod scoped;

pub use alternate::Slices;
pub use inserts::plain_insert_one;
pub use processes::{worker, Fleet, Model, WORKER};

use crate::measure::{BatchSize, Scenario, Work};
use gapless::insert_gapless;
use insert_many::{insert_many_with_ids, plain_insert_many};
use inserts::{counter_w1_insert, insert_with_id, naive_counter_insert};
use models::{
    BAuto, BCrockford, BLuhn, BProxy, BProxyGapless, BSqids, Scoped, ScopedOne, Sharded, B1, B1000,
    B25,
};
use next_id::{atomic_next, next_id};
use processes::{gapless_2p, gapless_4p, plain_4p, proxy_2p};
use scoped::insert_scoped;

/// The collection every scenario inserts into (in a database of its own).
pub const COLL: &str = "docs";

/// Every scenario, in the order of a round.
///
/// A new scenario is a function returning a [`Measured`](crate::measure::Measured) (usually one
/// of the generic ones of these modules with a model of its own) and an entry here.
pub const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "plain_insert_one",
        BatchSize::None,
        Work::Docs,
        plain_insert_one,
    ),
    Scenario {
        min_tasks: 4,
        ..Scenario::new("plain_insert_one_4p", BatchSize::None, Work::Docs, plain_4p)
    },
    Scenario::new(
        "naive_counter_insert",
        BatchSize::None,
        Work::Docs,
        naive_counter_insert,
    ),
    Scenario::new(
        "insert_with_id",
        BatchSize::Fixed(1),
        Work::Docs,
        insert_with_id::<B1>,
    ),
    Scenario::new(
        "insert_with_id",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_with_id::<B25>,
    ),
    Scenario::new(
        "insert_with_id",
        BatchSize::Fixed(1000),
        Work::Docs,
        insert_with_id::<B1000>,
    ),
    Scenario::new(
        "insert_with_id_luhn",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_with_id::<BLuhn>,
    ),
    Scenario::new(
        "insert_with_id_crockford",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_with_id::<BCrockford>,
    ),
    Scenario::new(
        "insert_with_id_sqids",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_with_id::<BSqids>,
    ),
    Scenario::new(
        "insert_with_id_proxy",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_with_id::<BProxy>,
    ),
    Scenario::new(
        "insert_with_id_auto",
        BatchSize::Adaptive,
        Work::Docs,
        insert_with_id::<BAuto>,
    ),
    Scenario::new(
        "insert_with_id_proxy_gapless",
        BatchSize::Fixed(1),
        Work::FewDocs,
        insert_with_id::<BProxyGapless>,
    ),
    Scenario {
        min_tasks: 2,
        ..Scenario::new(
            "insert_with_id_proxy_2p",
            BatchSize::Fixed(25),
            Work::Docs,
            proxy_2p,
        )
    },
    Scenario::new(
        "insert_with_id_scoped_10",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_scoped::<Scoped, 10>,
    ),
    Scenario::new(
        "insert_with_id_scoped_1000",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_scoped::<Scoped, 1000>,
    ),
    Scenario::new(
        "insert_with_id_scoped_100000",
        BatchSize::Fixed(25),
        Work::Docs,
        insert_scoped::<Scoped, 100_000>,
    ),
    Scenario::new(
        "insert_with_id_scoped_10_batch1",
        BatchSize::Fixed(1),
        Work::Docs,
        insert_scoped::<ScopedOne, 10>,
    ),
    Scenario::new(
        "insert_with_id_scoped_1000_batch1",
        BatchSize::Fixed(1),
        Work::Docs,
        insert_scoped::<ScopedOne, 1000>,
    ),
    Scenario::new(
        "insert_with_id_gapless",
        BatchSize::Fixed(1),
        Work::FewDocs,
        insert_gapless,
    ),
    Scenario {
        min_tasks: 2,
        ..Scenario::new(
            "insert_with_id_gapless_2p",
            BatchSize::Fixed(1),
            Work::FewDocs,
            gapless_2p,
        )
    },
    Scenario {
        min_tasks: 4,
        ..Scenario::new(
            "insert_with_id_gapless_4p",
            BatchSize::Fixed(1),
            Work::FewDocs,
            gapless_4p,
        )
    },
    Scenario::new(
        "ranges_counter",
        BatchSize::Fixed(1),
        Work::Docs,
        insert_with_id::<Sharded>,
    ),
    Scenario::new(
        "counter_w1_insert",
        BatchSize::Fixed(1),
        Work::Docs,
        counter_w1_insert,
    ),
    Scenario::new(
        "plain_insert_many",
        BatchSize::None,
        Work::Many,
        plain_insert_many,
    ),
    Scenario::new(
        "insert_many_with_ids",
        BatchSize::None,
        Work::Many,
        insert_many_with_ids::<B1>,
    ),
    Scenario {
        baseline: None,
        ..Scenario::new("atomic_next", BatchSize::None, Work::Ids(1000), atomic_next)
    },
    Scenario::new("next_id", BatchSize::Fixed(1), Work::Ids(1), next_id::<B1>),
    Scenario::new(
        "next_id",
        BatchSize::Fixed(25),
        Work::Ids(25),
        next_id::<B25>,
    ),
    Scenario::new(
        "next_id",
        BatchSize::Fixed(1000),
        Work::Ids(1000),
        next_id::<B1000>,
    ),
    #[cfg(feature = "metrics")]
    Scenario::new(
        "insert_with_id_metrics",
        BatchSize::Fixed(25),
        Work::Docs,
        |run| metrics::with_recorder::<B25>(run, insert_with_id::<B25>),
    ),
    #[cfg(feature = "metrics")]
    Scenario::new(
        "next_id_metrics",
        BatchSize::Fixed(1000),
        Work::Ids(1000),
        |run| metrics::with_recorder::<B1000>(run, next_id::<B1000>),
    ),
    Scenario::new(
        "next_id_auto",
        BatchSize::Adaptive,
        Work::Ids(1000),
        next_id::<BAuto>,
    ),
];
