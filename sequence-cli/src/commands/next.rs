//! `next`: takes values from a counter, as `nextval` does.

use std::sync::Arc;

use mongodb::Client;
use sequence_runtime::options::Encoding;
use sequence_runtime::store::MongoStore;
use sequence_runtime::{Scope, Sequence, Strategy};
use serde_json::{json, Value};

use crate::args::NextArgs;
use crate::failure::Failure;
use crate::known::Known;
use crate::output::Output;

/// Takes the values `args` asks for from the sequence it names, where it is found (`counters`:
/// the counters collection given, if any): with the options the sequence recorded (a flag
/// that contradicts them is refused), else the ones given.
pub(crate) async fn run(
    client: &Client,
    counters: Option<&str>,
    args: &NextArgs,
    out: &Output,
) -> Result<(), Failure> {
    let db = client.database(&args.db);
    let name = &args.name;
    let given = args.given(counters);
    let known = Known::find(&db, name, given, out).await?;
    known.exists(args.create)?;
    known.confirm_write(counters, args.dry_run)?;
    if known.gapless() && !args.leave_gap && !args.dry_run {
        return Err(Failure::usage(format!(
            "sequence `{name}` is gapless: values that `next` takes are never stored, a \
             permanent gap in its numbering; nothing was taken"
        ))
        .hint(
            "number its documents by inserting them (`insert_with_id`); `--leave-gap` takes \
             the values anyway",
        ));
    }
    let mut options = known.options(given)?;
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
    if needs_scope || (plain && !known.found.is_empty() && !known.has_plain_counter()) {
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
    let ids: Vec<Value> = if args.dry_run {
        would_take(&seq, args.n, text).await?
    } else if text {
        let ids: Vec<String> = seq.reserve_ids(args.n).await?;
        ids.into_iter().map(Value::from).collect()
    } else {
        let range = seq.reserve(args.n).await?;
        (range.first()..=range.last()).map(Value::from).collect()
    };
    out.print(
        json!({ "name": name, "ids": ids, "dry_run": args.dry_run }),
        || {
            let lines: Vec<String> = ids
                .iter()
                .map(|id| match id {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            match args.dry_run {
                true => format!(
                    "would take (nothing was taken; another caller may take them first):\n{}",
                    lines.join("\n")
                ),
                false => lines.join("\n"),
            }
        },
    );
    Ok(())
}

/// The `n` IDs the counter of `seq` would give next, read from it without taking them.
async fn would_take(seq: &Sequence, n: u64, text: bool) -> Result<Vec<Value>, Failure> {
    if seq.options().strategy == Strategy::Ranges {
        return Err(Failure::usage(
            "a ranges sequence picks its shard when it takes values: `--dry-run` cannot say \
             which; `show --shard K` shows each shard",
        ));
    }
    let key = seq.current_key()?;
    let start = seq.options().start;
    let last = seq.current().await?.unwrap_or(start - 1);
    let mut ids = Vec::new();
    for value in (1..=n as i64).map(|i| last.saturating_add(i)) {
        ids.push(match text {
            true => Value::from(seq.id_text(value, key.period())?),
            false => Value::from(value),
        });
    }
    Ok(ids)
}
