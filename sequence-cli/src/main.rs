//! `mongo-sequence`: the operator's command line of mongo-sequence. It lists and shows the
//! counters of a database with the room they have left, takes values from a counter, sets and
//! deletes counters, moves counters past the IDs stored in a collection (after an import or a
//! migration), deletes the counters of old periods, and checks and repairs the claims of a proxy
//! collection (`unique = "proxy"`). Every write has `--dry-run`; `--json` prints for scripts,
//! errors included (`{"error": …, "hint": …}` on stderr). Exit status: 0 ok, 1 error, 2 bad
//! usage, 3 `check` found problems.
//!
//! The arguments are in [`args`], each command in a module of [`commands`], what they print in
//! [`output`]; [`counters`] reads the counter documents, [`server`] reaches the deployment and
//! [`failure`] says what went wrong with which exit status.

mod args;
mod commands;
mod counters;
mod failure;
mod known;
mod output;
mod server;

use std::process::ExitCode;

use clap::Parser;

use crate::args::Cli;
use crate::failure::Failure;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version`, or a usage mistake without `--json`: as clap prints them.
        Err(e) if !e.use_stderr() || !std::env::args_os().any(|a| a == "--json") => e.exit(),
        Err(e) => return Failure::of_parser(&e).report(true),
    };
    let json = cli.json;
    match commands::run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(json),
    }
}
