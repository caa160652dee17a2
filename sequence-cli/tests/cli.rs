//! The `mongo-sequence` command line, run as a process against a real server: each command,
//! its `--json` output parsed, its exit status. One module per command, named like its file
//! in `src/commands/` (a test of several commands is with the one it is mostly about), `usage`
//! for the arguments and errors of no one command, and the suites that cross commands:
//! `adoption`, `injection` and `progress`. `cargo test -p sequence-cli --test cli sync::` runs
//! one of them.

#[path = "cli/support.rs"]
mod support;

#[path = "cli/check.rs"]
mod check;
#[path = "cli/delete.rs"]
mod delete;
#[path = "cli/ensure_indexes.rs"]
mod ensure_indexes;
#[path = "cli/list.rs"]
mod list;
#[path = "cli/next.rs"]
mod next;
#[path = "cli/repair.rs"]
mod repair;
#[path = "cli/set_next.rs"]
mod set_next;
#[path = "cli/show.rs"]
mod show;
#[path = "cli/sync.rs"]
mod sync;
#[path = "cli/usage.rs"]
mod usage;

#[path = "cli/adoption.rs"]
mod adoption;
#[path = "cli/injection.rs"]
mod injection;
#[path = "cli/progress.rs"]
mod progress;
