//! `set-next`: makes a value the next one a counter issues.

use mongodb::bson::Document;
use mongodb::Database;
use sequence_runtime::{id::Bounds, store::CounterStore};
use serde_json::json;

use crate::args::{Change, CounterArgs, Limits};
use crate::counters::slice_of;
use crate::failure::Failure;
use crate::known::Known;
use crate::output::{ranges_held_warning, Output};

/// Makes `value` the next value of the counter `args` names, where its sequence is found in
/// `db` (`counters`: the counters collection given, if any).
pub(crate) async fn run(
    db: &Database,
    counters: Option<&str>,
    args: &CounterArgs,
    limits: &Limits,
    value: i64,
    change: Change,
    out: &Output,
) -> Result<(), Failure> {
    let known = Known::find(db, &args.name, args.given(counters), out).await?;
    known.exists(change.create)?;
    known.confirm_write(counters, change.dry_run)?;
    let (mut key, store) = known.key(db, args, counters)?;
    let mut bounds = match limits.bounds(&args.name, known.record.as_ref())? {
        Some(bounds) => bounds,
        None => Bounds::new(1, i64::MAX)?,
    };
    let mut what = "start..=max";
    if args.shard.is_some() {
        // The shard's slice is what its document holds: the ranges strategy checks it.
        let doc = known.find_counter(db, &key, &store).await?;
        bounds = slice_of(&doc).ok_or_else(|| {
            Failure::error(format!(
                "the counter document of `{key}` holds no slice `lo..=hi`: {doc}"
            ))
        })?;
        let fixed: Document = ["lo", "hi"]
            .into_iter()
            .filter_map(|f| doc.get(f).map(|v| (f.to_owned(), v.clone())))
            .collect();
        key = key.with_fields(fixed);
        what = "the shard's slice lo..=hi";
    }
    if value < bounds.start || value > bounds.max {
        let hint = if args.shard.is_some() {
            "give a value in the shard's slice".to_owned()
        } else {
            "give a value in that range, or the counter's own --start and --max".to_owned()
        };
        return Err(Failure::usage(format!(
            "{value} is outside {what} of `{key}` ({}..={})",
            bounds.start, bounds.max
        ))
        .hint(hint));
    }
    // The stored value is read whatever it is, so that a counter beyond the bounds given can
    // still be moved.
    let any = Bounds::new(i64::MIN + 1, i64::MAX)?;
    let old = store.last_issued(&key, any, None).await?;
    let last = value.checked_sub(1).ok_or_else(|| {
        Failure::usage(format!(
            "{value} has no value before it; give a larger VALUE"
        ))
    })?;
    if old.is_none() && !change.create {
        let place = known.place();
        return Err(known.elsewhere(&key.to_string()).unwrap_or_else(|| {
            Failure::error(format!(
                "counter `{key}` does not exist in `{place}`; nothing was written"
            ))
            .hint(format!(
                "`mongo-sequence list {} --name '{}'` shows the sequence's counters; \
                 `--create` creates this one",
                db.name(),
                args.name
            ))
        }));
    }
    if let Some(current) = old.filter(|&current| current > last && !change.force) {
        let dry_run = if change.dry_run {
            ""
        } else {
            "; `--dry-run` shows the move"
        };
        return Err(Failure::error(format!(
            "refusing to move `{key}` backwards from last issued {current} to next {value}: \
             {} would be issued again; nothing was written",
            numbers(last + 1, current)
        ))
        .hint(format!(
            "`--force` moves it anyway, if no document holds these values{dry_run}"
        )));
    }
    if let Some(current) = old.filter(|&c| known.gapless() && c >= bounds.start) {
        gapless_refusal(&args.name, current, last, change)?;
    }
    if !change.dry_run {
        store
            .set_last_issued(&key, last, change.force, any, None)
            .await?;
    }
    let warning = ranges_held_warning(&args.name);
    let verb = if change.dry_run {
        "would move"
    } else {
        "moved"
    };
    out.print(
        json!({
            "counter": key.to_string(),
            "old": old,
            "new": last,
            "next": value,
            "dry_run": change.dry_run,
            "warning": warning,
        }),
        || {
            let old = old.map_or_else(|| "nothing (new counter)".to_owned(), |o| o.to_string());
            format!("{verb} `{key}` from last issued {old} to {last}: the next value is {value}")
        },
    );
    out.warn(&warning);
    Ok(())
}

/// Refuses to move the counter of a gapless sequence in use from `current` to `last` (last
/// issued) without the override that names the consequence.
fn gapless_refusal(name: &str, current: i64, last: i64, change: Change) -> Result<(), Failure> {
    if last > current && !change.leave_gap {
        return Err(Failure::usage(format!(
            "sequence `{name}` is gapless: moving its counter from last issued {current} to \
             {last} leaves {} permanently unused; nothing was written",
            numbers(current + 1, last)
        ))
        .hint("`--leave-gap` moves it anyway"));
    }
    if last < current && !change.reissue {
        return Err(Failure::usage(format!(
            "sequence `{name}` is gapless: moving its counter back from last issued {current} \
             to {last} issues {} again, which its documents may hold; nothing was written",
            numbers(last + 1, current)
        ))
        .hint(
            "`--force --reissue` moves it anyway; inserts that meet a stored number skip ahead",
        ));
    }
    Ok(())
}

/// "the number 5" or "the numbers 5 to 9".
fn numbers(first: i64, last: i64) -> String {
    if first == last {
        format!("the number {first}")
    } else {
        format!("the numbers {first} to {last}")
    }
}
