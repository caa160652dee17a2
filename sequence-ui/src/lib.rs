//! The compile-time behaviour of `#[derive(SequentialId)]` lives in this package's tests:
//! `tests/ui/pass` (every documented configuration compiles), `tests/ui/fail/<category>/`
//! (every mistake is one precise error), and `tests/ui.rs`, which also checks that the runtime
//! refuses the same mistakes with the same messages. Nothing here is published.
