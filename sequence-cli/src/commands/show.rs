//! `show`: one counter, with the room it has left.

use mongodb::Database;
use sequence_runtime::Sequence;

use crate::args::{CounterArgs, Limits};
use crate::failure::Failure;
use crate::known::Known;
use crate::output::{counters_table, row, Output, Row};

/// Shows the counter `args` names, where its sequence is found in `db` (`counters`: the
/// counters collection given, if any).
pub(crate) async fn run(
    db: &Database,
    counters: Option<&str>,
    args: &CounterArgs,
    limits: &Limits,
    out: &Output,
) -> Result<(), Failure> {
    let known = Known::find(db, &args.name, args.given(counters), out).await?;
    known.exists(false)?;
    let bounds = limits.bounds(&args.name, known.record.as_ref())?;
    let (key, store) = known.key(db, args, counters)?;
    let doc = match known.find_counter(db, &key, &store).await {
        Ok(doc) => doc,
        Err(failure) => return Err(known.elsewhere(&key.to_string()).unwrap_or(failure)),
    };
    let Some(counter) = known.shape(&args.shape).decode(&doc) else {
        return Err(Failure::error(format!(
            "the document of `{key}` in `{}` is not a counter: {doc}",
            known.place()
        )));
    };
    let field = known.shape(&args.shape).field().to_owned();
    let (mut json, cells) = row(&Row {
        doc: &doc,
        counter: &counter,
        collection: &known.counters,
        field: &field,
        limits: bounds,
        gapless: known.gapless(),
    });
    // The last ID as the documents hold it, where the sequence's record says how IDs look.
    let last_id = match (&known.record, &counter.last) {
        (Some(record), Ok(last)) => {
            let options = record.options(&known.counters)?.build();
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
