//! Models: the same fields everywhere, only the ID differs.

use mongo_sequence::SequentialId;
use mongodb::bson::{oid::ObjectId, DateTime};
use serde::Serialize;

/// Fills a document's fields for the `n`-th document of a run.
pub trait Sample {
    fn sample(n: u64) -> Self;
}

/// Models of a document of realistic size (about 250 bytes of BSON): a few strings, a list,
/// numbers, a date. Each is `Name: Id`, `Id` the type of `_id`, and for a sequence's model
/// `, seq(...)` with the keys of its `#[seq(...)]`. `None` leaves `_id` to the driver (an
/// ObjectId) or to the sequence.
macro_rules! bench_models {
    ($($name:ident: $id:ty $(, seq($($seq:tt)*))?;)*) => {$(
        #[derive(Debug, Serialize)]
        $(#[derive(SequentialId)] #[seq($($seq)*)])?
        pub struct $name {
            #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
            pub id: Option<$id>,
            name: String,
            email: String,
            address: String,
            tags: Vec<String>,
            score: f64,
            visits: i32,
            active: bool,
            created_at: DateTime,
        }

        impl Sample for $name {
            fn sample(n: u64) -> Self {
                const CITIES: [&str; 4] = ["Lyon", "Porto", "Leipzig", "Gdansk"];
                $name {
                    id: None,
                    name: format!("Customer {n:08}"),
                    email: format!("customer.{n:08}@example.com"),
                    address: format!("{} Harbour Street, {}", n % 997, CITIES[(n % 4) as usize]),
                    tags: vec!["retail".into(), "newsletter".into(), format!("cohort-{}", n % 12)],
                    score: (n % 1000) as f64 / 7.0,
                    visits: (n % 50) as i32,
                    active: n % 3 != 0,
                    created_at: DateTime::from_millis(1_700_000_000_000 + n as i64),
                }
            }
        }
    )*};
}

bench_models! {
    Plain: ObjectId;
    Naive: i64;
    B1: i64, seq(name = "bench_b1");
    B25: i64, seq(name = "bench_b25", batch = 25);
    B1000: i64, seq(name = "bench_b1000", batch = 1000);
    BProxy: i64, seq(name = "bench_proxy", batch = 25, unique = "proxy");
    BAuto: i64, seq(name = "bench_auto", batch = 10..=10_000);
    Gapless: i64, seq(name = "bench_gapless", gapless);
    BProxyGapless: i64, seq(name = "bench_proxy_gapless", gapless, unique = "proxy");
    Sharded: i64, seq(name = "bench_sharded", strategy = "ranges", shards = 16);
    BLuhn: String, seq(name = "bench_luhn", batch = 25, format = "ACC-{n:08}-{check}", check_digit = "luhn");
    BCrockford: String, seq(name = "bench_crockford", batch = 25, prefix = "'ORD-'", width = 6, encoding = "crockford32", check_digit = "crockford");
    BSqids: String, seq(name = "bench_sqids", batch = 25, encoding = "sqids", min_length = 8);
}

/// A model numbered per tenant (`scope = "tenant"`, `batch = 25`: a tenant's first insert
/// reserves its value, its next ones take theirs from a cache of that tenant's own): the fields
/// of the others, the tenant, and the ID in a field of its own (it repeats across tenants;
/// `_id` is an ObjectId).
#[derive(Debug, Serialize, SequentialId)]
#[seq(name = "bench_scoped", scope = "tenant", batch = 25)]
pub struct Scoped {
    #[seq(id)]
    pub number: i64,
    pub tenant: i64,
    #[serde(flatten)]
    pub fields: Plain,
}

/// [`Scoped`] without a batch: every insert takes its tenant's next value where it inserts.
#[derive(Debug, Serialize, SequentialId)]
#[seq(name = "bench_scoped_one", scope = "tenant")]
pub struct ScopedOne {
    #[seq(id)]
    pub number: i64,
    pub tenant: i64,
    #[serde(flatten)]
    pub fields: Plain,
}

/// A model numbered per tenant, sampled over a number of tenants.
pub trait TenantSample {
    /// The `n`-th document of a run over `tenants` tenants.
    fn sample(n: u64, tenants: u64) -> Self;
}

/// The tenant of the `n`-th document of a run over `tenants`: drawn uniformly by a hash of `n`.
fn tenant_of(n: u64, tenants: u64) -> i64 {
    let spread = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16;
    (spread % tenants) as i64
}

impl TenantSample for Scoped {
    fn sample(n: u64, tenants: u64) -> Self {
        Scoped {
            number: 0,
            tenant: tenant_of(n, tenants),
            fields: Plain::sample(n),
        }
    }
}

impl TenantSample for ScopedOne {
    fn sample(n: u64, tenants: u64) -> Self {
        ScopedOne {
            number: 0,
            tenant: tenant_of(n, tenants),
            fields: Plain::sample(n),
        }
    }
}
