//! The commands, one module each, and the dispatch of the command line to them.

mod check;
mod delete;
mod ensure_indexes;
mod list;
mod next;
mod purge_before;
mod repair;
mod set_next;
mod show;
mod sync;

use crate::args::{Cli, Command};
use crate::failure::Failure;
use crate::output::Output;
use crate::server;

/// Runs the command `cli` names against the deployment it names.
pub(crate) async fn run(cli: Cli) -> Result<(), Failure> {
    let client = server::connect(cli.uri.as_deref()).await?;
    let out = Output { json: cli.json };
    let counters = cli.counters.as_deref();
    let result = match cli.command {
        Command::List {
            db,
            name,
            limits,
            shape,
        } => {
            let db = client.database(&db);
            list::run(&db, counters, name.as_deref(), &limits, &shape, &out).await
        }
        Command::Show {
            db,
            counter,
            limits,
        } => show::run(&client.database(&db), counters, &counter, &limits, &out).await,
        Command::Next(args) => next::run(&client, counters, &args, &out).await,
        Command::SetNext(args) => {
            let db = client.database(&args.db);
            let (counter, limits) = (&args.counter, &args.limits);
            set_next::run(
                &db,
                counters,
                counter,
                limits,
                args.value,
                args.change(),
                &out,
            )
            .await
        }
        Command::Delete(args) => {
            let db = client.database(&args.db);
            delete::run(&db, counters, &args.counter, args.change(), &out).await
        }
        Command::Sync(args) => sync::run(&client, counters, &args, &out).await,
        Command::EnsureIndexes(args) => ensure_indexes::run(&client, counters, &args, &out).await,
        Command::Check(args) => check::run(&client, counters, &args, &out).await,
        Command::Repair {
            claims,
            prune,
            dry_run,
        } => repair::run(&client, counters, &claims, prune, dry_run, &out).await,
        Command::PurgeBefore(args) => purge_before::run(&client, counters, &args, &out).await,
    };
    // The client's pools and monitors end here, before the runtime does: a connection request
    // still in flight when the runtime shuts down would otherwise make the driver panic on
    // the way out, after the command's output.
    client.shutdown().immediate(true).await;
    result
}
