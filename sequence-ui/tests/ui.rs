//! Compile-time behaviour of `#[derive(SequentialId)]`: every mistake is one precise error
//! (`tests/ui/fail/<category>/`), and the runtime, which checks `SequenceOptions` with the same
//! rules, refuses the same mistakes with the same messages. (Every documented configuration
//! compiling without a warning, `tests/ui/pass`, is a test binary of its own: see
//! `Cargo.toml`.)
//!
//! After an intended change of a message, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p mongo-sequence-ui --test ui` and review the `.stderr` diff.

use std::time::Duration;

use mongo_sequence::{
    options::AdaptiveBatch, options::CounterLayout, options::Stores, Error, SequenceOptions,
    Strategy,
};

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*/*.rs");
}

fn opts(name: &str) -> mongo_sequence::options::SequenceOptionsBuilder {
    SequenceOptions::builder(name)
}

/// A mistake the derive and the runtime both refuse: the UI case whose `.stderr` holds the
/// derive's error (checked against the compiler by `ui`), and the same configuration as
/// runtime options.
type Case = (&'static str, fn() -> SequenceOptions);

/// Every UI case whose configuration the runtime can express. The others are about the Rust
/// side of a model (its ID field's type, its fields, the syntax of the attribute), or give a
/// key its default value explicitly (`digits = 12, start = 1`), which the runtime cannot tell
/// from leaving it out.
const REFUSED_BY_BOTH: &[Case] = &[
    ("batch/zero", || opts("x").batch(0).build()),
    ("bounds/start_above_max", || {
        opts("x").start(100).max(10).build()
    }),
    ("digits/max_outside", || {
        opts("x").digits(6).max(10_000_000).build()
    }),
    ("digits/too_many", || opts("x").digits(19).build()),
    ("digits/with_prefix", || {
        opts("x").prefix("YYMMDD").digits(12).build()
    }),
    ("digits/with_width", || opts("x").digits(8).width(4).build()),
    ("digits/zero", || opts("x").digits(0).build()),
    ("gapless/timeout_without_gapless", || {
        opts("x")
            .transaction_timeout(Duration::from_millis(5000))
            .build()
    }),
    ("gapless/with_batch", || {
        opts("x").gapless(true).batch(25).build()
    }),
    ("gapless/with_ranges", || {
        opts("x").gapless(true).strategy(Strategy::Ranges).build()
    }),
    ("layout/field_clashes_with_range_bounds", || {
        opts("x")
            .strategy(Strategy::Ranges)
            .layout(CounterLayout::new().field("lo"))
            .build()
    }),
    ("layout/field_with_dollar", || {
        opts("x").layout(CounterLayout::new().field("$seq")).build()
    }),
    ("layout/stores_with_random", || {
        opts("x")
            .strategy(Strategy::Random)
            .layout(CounterLayout::new().stores(Stores::NextFree))
            .build()
    }),
    ("layout/mongoose_with_periods", || {
        opts("x")
            .prefix("YYMMDD")
            .layout(CounterLayout::mongoose())
            .build()
    }),
    ("layout/with_random", || {
        opts("x")
            .strategy(Strategy::Random)
            .layout(CounterLayout::mongoose())
            .build()
    }),
    ("layout/with_uuid", || {
        opts("x")
            .strategy(Strategy::Uuid)
            .layout(CounterLayout::mongoose())
            .build()
    }),
    ("name/counters_collection", || {
        opts("x").counters("system.counters").build()
    }),
    ("name/dollar", || opts("$userid").build()),
    ("name/dollar_inside", || opts("user$id").build()),
    ("name/dot", || opts("user.id").build()),
    ("name/empty", || opts("").build()),
    ("name/nul", || opts("user\0id").build()),
    ("prefix/empty", || opts("x").prefix("").build()),
    ("prefix/repeating_period", || {
        opts("x").prefix("MMDD").build()
    }),
    ("prefix/unclosed_quote", || {
        opts("x").prefix("'INV-YYMMDD").build()
    }),
    ("prefix/unknown_token", || {
        opts("x").prefix("YYYMMDD").build()
    }),
    ("scope/duplicate", || {
        opts("x").scope(["tenant", "tenant"]).build()
    }),
    ("scope/with_batch", || {
        opts("x").scope(["tenant"]).batch(25).build()
    }),
    ("scope/with_random", || {
        opts("x")
            .strategy(Strategy::Random)
            .scope(["tenant"])
            .build()
    }),
    ("scope/with_ranges", || {
        opts("x")
            .strategy(Strategy::Ranges)
            .scope(["tenant"])
            .build()
    }),
    ("strategy/batch_with_uuid", || {
        opts("x").strategy(Strategy::Uuid).batch(100).build()
    }),
    ("strategy/counter_key_with_ranges", || {
        opts("x")
            .strategy(Strategy::Ranges)
            .prefix("YYMMDD")
            .build()
    }),
    ("strategy/digits_with_max", || {
        opts("x").ranges(16).digits(12).max(999_999).build()
    }),
    ("strategy/more_shards_than_ids", || {
        opts("x").ranges(100).digits(1).build()
    }),
    ("strategy/retries_without_random", || {
        opts("x").strategy(Strategy::Ranges).retries(3).build()
    }),
    ("strategy/shards_without_ranges", || {
        let mut o = opts("x").build();
        o.shards = 8;
        o
    }),
    ("strategy/too_many_retries", || {
        opts("x").strategy(Strategy::Random).retries(10_001).build()
    }),
    ("tz/unknown_zone", || {
        opts("x").prefix("YYMMDD").tz("Europe/Berln").build()
    }),
    ("tz/without_date_tokens", || {
        opts("x").prefix("INV-").tz("Europe/Berlin").build()
    }),
    ("width/negative_start", || {
        opts("x").prefix("YYMMDD").start(-1).build()
    }),
    ("width/start_too_wide", || {
        opts("x").prefix("YYMMDD").width(3).start(1000).build()
    }),
    ("width/too_large", || {
        opts("x").prefix("YYMMDD").width(19).build()
    }),
    ("width/zero", || opts("x").prefix("YYMMDD").width(0).build()),
];

/// The runtime's message for a broken rule: the rule's own message, without the variant's
/// preamble.
fn rule_message(e: Error) -> String {
    match e {
        Error::InvalidConfig { message, .. } => message,
        e @ Error::InvalidName { .. } => e.to_string(),
        other => panic!("expected a broken rule, got {other:?}"),
    }
}

#[test]
fn the_runtime_refuses_what_the_derive_refuses_with_the_same_message() {
    for (case, options) in REFUSED_BY_BOTH {
        let path = format!("tests/ui/fail/{case}.stderr");
        let stderr = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let errors: Vec<&str> = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{case}: one error per mistake: {errors:?}");
        let runtime = options()
            .validate()
            .map(|_| "accepted".to_owned())
            .unwrap_or_else(rule_message);
        assert_eq!(runtime, errors[0], "{case}");
    }
}

#[test]
fn the_runtime_accepts_what_the_derive_accepts() {
    // The configurations of `tests/ui/pass`, as runtime options.
    let accepted = [
        opts("account").ranges(1000).digits(12).batch(10).build(),
        opts("ticket")
            .ranges(4)
            .layout(CounterLayout::mongoose())
            .counters("identitycounters")
            .build(),
        opts("member").digits(8).start(50_000_000).build(),
        opts("badge").width(6).build(),
        opts("invoice")
            .prefix("INV-YYMMDD-")
            .width(4)
            .tz("Europe/Berlin")
            .batch(20)
            .build(),
        opts("order").scope(["tenant"]).build(),
        opts("ticket")
            .scope(["tenant", "year"])
            .layout(CounterLayout::mongoose())
            .build(),
        opts("invoice")
            .gapless(true)
            .transaction_timeout(Duration::from_secs(5))
            .build(),
        opts("voucher")
            .strategy(Strategy::Random)
            .digits(12)
            .retries(20)
            .build(),
        opts("event")
            .adaptive_batch(AdaptiveBatch::new(5, 500))
            .build(),
        opts("session").strategy(Strategy::UuidV7).build(),
    ];
    for options in accepted {
        let name = options.name.clone();
        if let Err(e) = options.validate() {
            panic!("{name}: {e}");
        }
    }
}

/// The old name of the `ranges` strategy is refused by the derive and by parsing, both naming
/// the new one.
#[test]
fn the_old_strategy_name_is_refused_with_the_new_one() {
    let stderr = std::fs::read_to_string("tests/ui/fail/strategy/renamed_sharded.stderr").unwrap();
    let derive = stderr.lines().find_map(|l| l.strip_prefix("error: "));
    let parsed = "sharded".parse::<Strategy>().unwrap_err().to_string();
    assert_eq!(derive, Some(parsed.as_str()));
    assert!(parsed.contains("write `strategy = \"ranges\"`"), "{parsed}");
    assert_eq!("ranges".parse::<Strategy>(), Ok(Strategy::Ranges));
}
