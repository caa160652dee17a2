//! How many cases the property tests run.

use proptest::test_runner::Config;

/// `cases` cases, or as many as `PROPTEST_CASES` says (a longer search:
/// `PROPTEST_CASES=200000 cargo test -p sequence-runtime --lib`).
pub(crate) fn config(cases: u32) -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}
