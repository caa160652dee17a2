//! Compile-time behaviour of `#[derive(SequentialId)]`: every documented configuration compiles
//! (`tests/ui/pass`), every mistake is one precise error (`tests/ui/fail/<category>/`).
//!
//! After an intended change of a message, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test --test ui` and review the `.stderr` diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*/*.rs");
}
