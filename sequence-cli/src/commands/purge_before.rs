//! `purge-before`: deletes the counters of a sequence's periods before a date.

use std::sync::Arc;

use mongodb::Client;
use sequence_runtime::store::MongoStore;
use sequence_runtime::Sequence;
use serde_json::json;

use crate::args::Given;
use crate::args::PurgeBeforeArgs;
use crate::failure::Failure;
use crate::known::Known;
use crate::output::{plural, Output, Working};

/// Deletes the counters of the periods `args` names, of the sequence where it is found in its
/// database (`counters`: the counters collection given, if any).
pub(crate) async fn run(
    client: &Client,
    counters: Option<&str>,
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
    let db = client.database(db);
    let given = Given {
        counters,
        prefix: prefix.as_deref(),
        ..Given::default()
    };
    let known = Known::find(&db, name, given, out).await?;
    known.exists(false)?;
    known.confirm_write(counters, *dry_run)?;
    let mut options = known.options(given)?;
    match (tz, &known.record) {
        (Some(tz), Some(record)) if record.tz.as_deref() != Some(tz.as_str()) => {
            return Err(Failure::usage(format!(
                "`--tz {tz}` contradicts the record of sequence `{name}` (recorded: `{}`); \
                 nothing was done",
                record.tz.as_deref().unwrap_or("UTC")
            ))
            .hint("leave the flag out: the record says how the sequence's counters and IDs look"));
        }
        (Some(tz), None) => options = options.tz(tz),
        _ => {}
    }
    let options = options.build();
    if options.prefix.is_none() && options.format.is_none() {
        return Err(Failure::usage(format!(
            "sequence `{name}` has no periods that `{}` knows of: give its `--prefix`",
            known.place()
        )));
    }
    // A store without a record: the record is the application's.
    let seq = Sequence::with_store(Arc::new(MongoStore::new(&db, &options)?), options)?;
    let doing = format!("deleting the counters of `{name}` before {date}");
    let working = Working::start(out, &doing, "done", None);
    let n = if *dry_run {
        seq.count_periods_before(*date).await
    } else {
        seq.purge_periods_before(*date).await
    };
    working.finish();
    let n = n?;
    let verb = if *dry_run { "would delete" } else { "deleted" };
    out.print(
        json!({ "name": name, "before": date.to_string(), "counters": n, "dry_run": dry_run }),
        || {
            format!(
                "{verb} {} of `{name}` before the period of {date}",
                plural(n, "counter")
            )
        },
    );
    Ok(())
}
