//! `next`: takes values from a counter, as `nextval` does.

use std::sync::Arc;

use mongodb::Client;
use sequence_runtime::options::Encoding;
use sequence_runtime::store::MongoStore;
use sequence_runtime::{Scope, Sequence, SequenceOptions, Strategy};
use serde_json::{json, Value};

use crate::args::NextArgs;
use crate::failure::Failure;
use crate::known::Known;
use crate::output::Output;

/// Takes the values `args` asks for from the sequence it names, with counters in `counters`:
/// with the options the sequence recorded, changed by the ones given.
pub(crate) async fn run(
    client: &Client,
    counters: &str,
    args: &NextArgs,
    out: &Output,
) -> Result<(), Failure> {
    let db = client.database(&args.db);
    let name = &args.name;
    let known = Known::of(&db, counters, name, &args.shape, out).await?;
    known.exists(args.create)?;
    if known.gapless() && !args.leave_gap {
        return Err(Failure::usage(format!(
            "sequence `{name}` is gapless: values that `next` takes are never stored, a \
             permanent gap in its numbering; nothing was taken"
        ))
        .hint(
            "number its documents by inserting them (`insert_with_id`); `--leave-gap` takes \
             the values anyway",
        ));
    }
    let base = match &known.record {
        Some(record) => record.options(counters)?,
        None => SequenceOptions::builder(name.clone()).counters(counters),
    };
    let mut options = args.shape.apply(args.sequence.apply(base, None, None));
    if !args.scope.is_empty() {
        options = options.scope(args.scope.iter().map(|(field, _)| field.clone()));
    }
    // Refused above unless `--leave-gap`: the values are taken outside an insert.
    let options = options.gapless(false).build();
    let plain = options.prefix.is_none()
        && options.format.is_none()
        && options.scope.is_empty()
        && options.strategy != Strategy::Ranges;
    let needs_scope = !options.scope.is_empty() && args.scope.is_empty();
    if needs_scope || (plain && !known.counters.is_empty() && !known.has_plain_counter()) {
        if let Some(failure) = known.elsewhere(name) {
            return Err(failure);
        }
    }
    // IDs with a prefix, zero-padding, a template, check digits or another encoding are text,
    // as a `String` ID field holds them (an integer ID holds the same digits).
    let text = options.prefix.is_some()
        || options.width.is_some()
        || options.digits.is_some()
        || options.format.is_some()
        || options.check_digit.is_some()
        || options.encoding != Encoding::Decimal;
    // A store without a record: the options here may be partial, and the record is the
    // application's.
    let store = MongoStore::new(&db, &options)?;
    let mut seq = Sequence::with_store(Arc::new(store), options)?;
    if !args.scope.is_empty() {
        seq = seq.in_scope(Scope::from_values(args.scope.iter().cloned()))?;
    }
    let ids: Vec<Value> = if text {
        let ids: Vec<String> = seq.reserve_ids(args.n).await?;
        ids.into_iter().map(Value::from).collect()
    } else {
        let range = seq.reserve(args.n).await?;
        (range.first()..=range.last()).map(Value::from).collect()
    };
    out.print(json!({ "name": name, "ids": ids }), || {
        let lines: Vec<String> = ids
            .iter()
            .map(|id| match id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        lines.join("\n")
    });
    Ok(())
}
