//! `purge-before`: deletes the counters of a sequence's periods before a date.

use mongodb::Client;
use sequence_runtime::{Sequence, SequenceOptions};
use serde_json::json;

use crate::args::PurgeBeforeArgs;
use crate::failure::Failure;
use crate::output::Output;

/// Deletes the counters in `counters` of the periods `args` names.
pub(crate) async fn run(
    client: &Client,
    counters: &str,
    args: &PurgeBeforeArgs,
    out: &Output,
) -> Result<(), Failure> {
    let PurgeBeforeArgs {
        db,
        name,
        date,
        prefix,
        tz,
        dry_run,
    } = args;
    let mut options = SequenceOptions::builder(name)
        .counters(counters)
        .prefix(prefix);
    if let Some(tz) = tz {
        options = options.tz(tz);
    }
    let seq = Sequence::new(&client.database(db), options.build())?;
    let n = if *dry_run {
        seq.count_periods_before(*date).await?
    } else {
        seq.purge_periods_before(*date).await?
    };
    let verb = if *dry_run { "would delete" } else { "deleted" };
    out.print(
        json!({ "name": name, "before": date.to_string(), "counters": n, "dry_run": dry_run }),
        || format!("{verb} {n} counter(s) of `{name}` before the period of {date}"),
    );
    Ok(())
}
