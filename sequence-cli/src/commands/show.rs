//! `show`: one counter, with the room it has left.

use mongodb::Database;

use crate::args::{CounterArgs, Limits};
use crate::counters::{find_counter, key};
use crate::failure::Failure;
use crate::known::Known;
use crate::output::{counters_table, row, Output};

/// Shows the counter `args` names in `counters` of `db`.
pub(crate) async fn run(
    db: &Database,
    counters: &str,
    args: &CounterArgs,
    limits: &Limits,
    out: &Output,
) -> Result<(), Failure> {
    let known = Known::of(db, counters, &args.name, &args.shape, out).await?;
    let bounds = limits.bounds(&args.name, known.record.as_ref())?;
    let (key, store) = key(db, counters, args)?;
    let doc = match find_counter(db, counters, &key, &store).await {
        Ok(doc) => doc,
        Err(failure) => return Err(known.elsewhere(&key.to_string()).unwrap_or(failure)),
    };
    let Some(counter) = args.shape.decode(&doc) else {
        return Err(Failure::error(format!(
            "the document of `{key}` in `{}.{counters}` is not a counter: {doc}",
            db.name()
        )));
    };
    let (json, cells) = row(&doc, &counter, args.shape.field(), bounds);
    out.print(json, || counters_table(vec![cells]));
    Ok(())
}
