//! `delete`: deletes the counters of a sequence, or the one of a period, scope or shard.

use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{CollectionOptions, WriteConcern};
use mongodb::Database;
use sequence_runtime::options::Layout;
use sequence_runtime::store::literal::exactly;
use serde_json::json;

use crate::args::{Change, CounterArgs, Limits};
use crate::counters::{find, scope, shard_alone};
use crate::failure::Failure;
use crate::known::Known;
use crate::output::{plural, ranges_held_warning, rows, Output, Row};

/// The filter of the counter documents `delete` deletes: every counter of the sequence, or the
/// one of the period, scope or shard given.
fn filter(
    db: &Database,
    known: &Known,
    args: &CounterArgs,
    counters: Option<&str>,
) -> Result<Document, Failure> {
    shard_alone(args)?;
    let scope = scope(args)?;
    let layout = known.layout();
    if known.shape(&args.shape).filter.is_some()
        || !matches!(layout, Layout::Default | Layout::MongooseSequence)
    {
        // A layout of one counter per model and field (and group), or a filter of one's own:
        // the one counter named.
        let (key, store) = known.key(db, args, counters)?;
        return Ok(store.filter(&key)?);
    }
    if layout == Layout::MongooseSequence {
        if args.period.is_some() {
            return Err(Failure::usage(
                "mongoose-sequence's layout has no periods: `--period` does not apply",
            ));
        }
        let mut filter = doc! { "id": exactly("id", &args.name.as_str().into())? };
        if let Some(scope) = &scope {
            let reference = Bson::Document(scope.document());
            filter.insert("reference_value", exactly("reference_value", &reference)?);
        }
        if let Some(shard) = args.shard {
            filter.insert("reference_value", doc! { "shard": shard as i32 });
        }
        return Ok(filter);
    }
    let name = Bson::String(args.name.clone());
    let mut filter = doc! { "_id.seq": exactly("_id.seq", &name)? };
    if let Some(period) = &args.period {
        filter.insert(
            "_id.period",
            exactly("_id.period", &period.as_str().into())?,
        );
    }
    if let Some(scope) = &scope {
        let key = Bson::Document(scope.key_document());
        filter.insert("_id.scope", exactly("_id.scope", &key)?);
    }
    if let Some(shard) = args.shard {
        filter.insert("_id.shard", shard as i32);
    }
    if args.period.is_none() && scope.is_none() && args.shard.is_none() {
        filter = doc! { "$or": [{ "_id": exactly("_id", &name)? }, filter] };
    }
    Ok(filter)
}

/// Deletes the counters `args` names, where their sequence is found in `db` (`counters`: the
/// counters collection given, if any), with `--force`.
pub(crate) async fn run(
    db: &Database,
    counters: Option<&str>,
    args: &CounterArgs,
    change: Change,
    out: &Output,
) -> Result<(), Failure> {
    let known = Known::find(db, &args.name, args.given(counters), out).await?;
    known.exists(false)?;
    known.confirm_write(counters, change.dry_run)?;
    let filter = filter(db, &known, args, counters)?;
    let options = CollectionOptions::builder()
        .write_concern(WriteConcern::majority())
        .build();
    let coll = db.collection_with_options::<Document>(&known.counters, options);
    let shape = known.shape(&args.shape);
    let found = find(&coll, filter.clone(), &shape).await?;
    let place = known.place();
    let name = &args.name;
    if found.is_empty() {
        return Err(
            Failure::error(format!("no counter of `{name}` to delete in `{place}`")).hint(format!(
                "`mongo-sequence list {} --name '{name}*'` shows the counters there",
                db.name()
            )),
        );
    }
    let start = known.record.as_ref().map_or(1, |r| r.start);
    let in_use = found
        .iter()
        .filter(|(_, c)| c.last.as_ref().is_ok_and(|&last| last >= start))
        .count();
    if known.gapless() && in_use > 0 && !change.restart_numbering && !change.dry_run {
        return Err(Failure::usage(format!(
            "sequence `{name}` is gapless and {} of these counters {} issued numbers: \
             deleted, its numbering starts again at {start} and each insert meets the stored \
             documents before it skips ahead of them; nothing was deleted",
            in_use,
            if in_use == 1 { "has" } else { "have" }
        ))
        .hint("`--force --restart-numbering` deletes them anyway; `--dry-run` lists them"));
    }
    if !change.force && !change.dry_run {
        return Err(Failure::usage(format!(
            "refusing to delete {} of `{name}` in `{place}` without --force",
            plural(found.len() as u64, "counter")
        ))
        .hint(
            "--dry-run lists them; --force deletes them, and their values start again at `start`",
        ));
    }
    let deleted = if change.dry_run {
        found.len() as u64
    } else {
        coll.delete_many(filter).await?.deleted_count
    };
    let bounds = Limits {
        start: None,
        max: None,
    }
    .bounds(name, known.record.as_ref())?;
    let rows_of: Vec<Row<'_>> = found
        .iter()
        .map(|(doc, counter)| Row {
            doc,
            counter,
            collection: &known.counters,
            field: shape.field(),
            limits: bounds,
            gapless: known.gapless(),
        })
        .collect();
    let (json, text) = rows(&rows_of);
    let warning = ranges_held_warning(name);
    let verb = if change.dry_run {
        "would delete"
    } else {
        "deleted"
    };
    out.print(
        json!({
            "name": name,
            "deleted": deleted,
            "dry_run": change.dry_run,
            "counters": json,
            "warning": warning,
        }),
        || {
            let deleted = plural(deleted, "counter");
            format!("{text}\n{verb} {deleted} of `{name}` in `{place}`")
        },
    );
    if !change.dry_run {
        out.warn(&warning);
    }
    Ok(())
}
