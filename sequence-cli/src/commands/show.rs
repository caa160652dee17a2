//! `show`: one counter, with the room it has left.

use mongodb::Database;
use sequence_runtime::Sequence;

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
    let (mut json, cells) = row(&doc, &counter, args.shape.field(), bounds);
    // The last ID as the documents hold it, where the sequence's record says how IDs look.
    let last_id = match (&known.record, &counter.last) {
        (Some(record), Ok(last)) => {
            let options = record.options(counters)?.build();
            let seq = Sequence::in_memory(options)?;
            Some(seq.id_text(*last, counter.period.as_deref())?)
        }
        _ => None,
    };
    json["last_id"] = last_id.clone().into();
    out.print(json, || {
        let table = counters_table(vec![cells]);
        match &last_id {
            Some(id) => format!("{table}\nlast ID: {id}"),
            None => table,
        }
    });
    Ok(())
}
