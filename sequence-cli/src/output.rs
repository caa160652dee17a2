//! What the commands print: JSON with `--json`, else text and tables; the tables of counters,
//! of a sync and of the claims checked and repaired; the warnings on stderr.

use std::time::{Duration, Instant};

use comfy_table::{presets, Table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mongodb::bson::{Bson, Document};
use sequence_runtime::action::IndexReport;
use sequence_runtime::claims::{ClaimsReport, RepairReport};
use sequence_runtime::{id::Bounds, store::StoredCounter, sync::SyncReport};
use serde_json::{json, Value};

use crate::counters::{bounds_of, integer, room};

/// How results are printed.
pub(crate) struct Output {
    /// Whether to print JSON (`--json`) instead of text.
    pub(crate) json: bool,
}

impl Output {
    /// Prints `json` with `--json`, else the text `text` gives.
    pub(crate) fn print(&self, json: Value, text: impl FnOnce() -> String) {
        if self.json {
            println!("{json}");
        } else {
            println!("{}", text());
        }
    }

    /// A warning on stderr; with `--json` it is a field of the printed object instead.
    pub(crate) fn warn(&self, warning: &str) {
        if !self.json {
            eprintln!("warning: {warning}");
        }
    }
}

/// A spinner on stderr while a long command works, saying what it does, how many documents it
/// reads (the collection's estimated count) and the time so far; its last line gives the count
/// and the rate. Drawn on a terminal only, never with `--json`: piped, nothing extra is
/// printed.
pub(crate) struct Working {
    bar: ProgressBar,
    started: Instant,
    /// What it did, for the last line (`checked`, `read`).
    done: &'static str,
    /// The documents it reads (an estimate), if known.
    total: Option<u64>,
}

impl Working {
    /// Starts the spinner: `doing` (`checking `shop.orders``), of about `total` documents.
    pub(crate) fn start(out: &Output, doing: &str, done: &'static str, total: Option<u64>) -> Self {
        let target = if out.json {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let style =
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template");
        let bar = ProgressBar::with_draw_target(None, target).with_style(style);
        bar.set_message(match total {
            Some(n) => format!("{doing}: about {}", plural(n, "document")),
            None => doing.to_owned(),
        });
        bar.enable_steady_tick(Duration::from_millis(100));
        Working {
            bar,
            started: Instant::now(),
            done,
            total,
        }
    }

    /// Clears the spinner and, where it was drawn, says how many documents were read how fast.
    pub(crate) fn finish(self) {
        let drawn = !self.bar.is_hidden();
        self.bar.finish_and_clear();
        if !drawn {
            return;
        }
        let seconds = self.started.elapsed().as_secs_f64();
        match self.total {
            Some(n) if seconds > 0.0 => eprintln!(
                "{} about {} in {seconds:.1} s ({:.0} documents/s)",
                self.done,
                plural(n, "document"),
                n as f64 / seconds
            ),
            _ => eprintln!("{} in {seconds:.1} s", self.done),
        }
    }
}

/// `1 counter`, `2 counters`, `2 indexes`: a count and its noun, singular or plural.
pub(crate) fn plural(n: u64, noun: &str) -> String {
    match (n, noun.ends_with('x') || noun.ends_with('s')) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{n} {noun}es"),
        (_, false) => format!("{n} {noun}s"),
    }
}

/// What a process that holds ranges of a changed counter does.
pub(crate) fn ranges_held_warning(name: &str) -> String {
    format!(
        "running processes keep the ranges of `{name}` they already hold and issue them until \
         they run out; restart them (or call `Sequence::release`) for the change to apply \
         everywhere"
    )
}

/// A table of `rows` under `header`.
fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut table = Table::new();
    table.load_style(presets::ASCII_BORDERS_ONLY_CONDENSED);
    table.set_header(header.to_vec());
    for row in rows {
        table.add_row(row);
    }
    table.to_string()
}

/// A BSON value as the tables show it.
fn cell(value: &Bson) -> String {
    match value {
        Bson::String(s) => s.clone(),
        Bson::ObjectId(oid) => oid.to_hex(),
        other => other.to_string(),
    }
}

/// A share as a percentage that is 0% or 100% only when it is exactly that.
fn percent(share: f64) -> String {
    let text = format!("{:.2}%", share * 100.0);
    match text.as_str() {
        "0.00%" if share > 0.0 => "<0.01%".to_owned(),
        "100.00%" if share < 1.0 => ">99.99%".to_owned(),
        _ => text,
    }
}

/// Why a counter cannot be read, with the field that may hold it when `field` is missing.
fn unreadable(doc: &Document, field: &str, why: &str) -> (String, Option<String>) {
    let candidate = doc
        .iter()
        .filter(|(k, _)| !["_id", "id", "reference_value", "lo", "hi"].contains(&k.as_str()))
        .find(|(_, v)| integer(Some(v)).is_some())
        .map(|(k, _)| k);
    let hint = match candidate {
        Some(k) if !doc.contains_key(field) => Some(format!(
            "the counter may be in `{k}`: give --field {k} (and --stores next_free if it holds \
             the next value)"
        )),
        _ => None,
    };
    (why.to_owned(), hint)
}

/// The columns of the table of counters.
const COLUMNS: [&str; 11] = [
    "name",
    "counters",
    "period",
    "scope",
    "shard",
    "layout",
    "mode",
    "last issued",
    "max",
    "left",
    "used",
];

/// What the table shows where a counter's limits are not known.
const UNKNOWN: &str = "unknown";

/// A counter of a sequence, as the tables show it: its document decoded, the collection it is
/// in, the name of its counter field (for the hint of a counter that cannot be read), the
/// limits of its values (`None`: not known; of a shard, its `hi`), and whether the sequence
/// recorded that it is gapless.
pub(crate) struct Row<'a> {
    pub(crate) doc: &'a Document,
    pub(crate) counter: &'a StoredCounter,
    pub(crate) collection: &'a str,
    pub(crate) field: &'a str,
    pub(crate) limits: Option<Bounds>,
    pub(crate) gapless: bool,
}

/// A counter as a row: name, counters collection, period, scope, shard, layout, mode (gapless
/// or not), last issued, and the room left before its max.
pub(crate) fn row(r: &Row<'_>) -> (Value, Vec<String>) {
    let (doc, c, field, limits) = (r.doc, r.counter, r.field, r.limits);
    let scope = c.scope.as_ref().map(|s| Bson::Document(s.clone()));
    let bounds = bounds_of(doc, c, limits);
    let layout = c.layout.name();
    let (last, room_left, used, cells) = match (&c.last, bounds) {
        (Ok(v), Some(bounds)) => {
            let (left, used) = room(*v, bounds);
            let cells = [v.to_string(), left.to_string(), percent(used)];
            (json!(v), json!(left), json!(used), cells)
        }
        (Ok(v), None) => {
            let cells = [v.to_string(), UNKNOWN.into(), UNKNOWN.into()];
            (json!(v), Value::Null, Value::Null, cells)
        }
        (Err(why), _) => {
            let (why, hint) = unreadable(doc, field, why);
            let text = match &hint {
                Some(hint) => format!("corrupt: {why} ({hint})"),
                None => format!("corrupt: {why}"),
            };
            let last = json!({ "error": why, "hint": hint });
            (
                last,
                Value::Null,
                Value::Null,
                [text, "-".into(), "-".into()],
            )
        }
    };
    let mode = if r.gapless { "gapless" } else { "-" };
    let json = json!({
        "name": c.name,
        "counters": r.collection,
        "gapless": r.gapless,
        "period": c.period,
        "scope": scope.clone().map(Bson::into_relaxed_extjson),
        "shard": c.shard,
        "layout": layout,
        "last_issued": last,
        "start": bounds.map(|b| b.start),
        "max": bounds.map(|b| b.max),
        "room_left": room_left,
        "used": used,
    });
    let [last, left, used] = cells;
    let cells = vec![
        c.name.clone(),
        r.collection.to_owned(),
        c.period.clone().unwrap_or_default(),
        scope.map(|s| s.to_string()).unwrap_or_default(),
        c.shard.map(|s| s.to_string()).unwrap_or_default(),
        layout.to_owned(),
        mode.to_owned(),
        last,
        bounds.map_or_else(|| UNKNOWN.to_owned(), |b| b.max.to_string()),
        left,
        used,
    ];
    (json, cells)
}

/// The table of counters with `rows`, each as [`row`] gives it.
pub(crate) fn counters_table(rows: Vec<Vec<String>>) -> String {
    table(&COLUMNS, rows)
}

/// The counters `rows` as a JSON array and as a table, as [`row`] gives each.
pub(crate) fn rows(rows: &[Row<'_>]) -> (Value, String) {
    let (json, rows): (Vec<Value>, Vec<Vec<String>>) = rows.iter().map(row).unzip();
    (Value::Array(json), counters_table(rows))
}

/// What a sync moved, as JSON.
pub(crate) fn sync_json(report: &SyncReport) -> Value {
    let counters: Vec<Value> = report
        .counters
        .iter()
        .map(|c| {
            json!({
                "counter": c.key.to_string(),
                "old": c.old,
                "new": c.new,
                "stored": c.stored,
                "ids": c.ids,
                "moved": c.moved(),
            })
        })
        .collect();
    json!({ "counters": counters, "skipped": report.skipped, "dry_run": report.dry_run })
}

/// What a sync moved: a table of its counters, and a line of what it counted.
pub(crate) fn sync_text(report: &SyncReport) -> String {
    let rows = report
        .counters
        .iter()
        .map(|c| {
            vec![
                c.key.to_string(),
                c.old.map(|o| o.to_string()).unwrap_or_else(|| "-".into()),
                c.new.to_string(),
                c.stored.to_string(),
                c.ids.to_string(),
                if c.moved() { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    let moved = if report.dry_run {
        "would move"
    } else {
        "moved"
    };
    format!(
        "{}\n{}, {} {moved}; {} skipped (another type, or not of this sequence's pattern)",
        table(&["counter", "old", "new", "stored max", "IDs", moved], rows),
        plural(report.counters.len() as u64, "counter"),
        report.counters.iter().filter(|c| c.moved()).count(),
        plural(report.skipped, "stored ID")
    )
}

/// What `check` found: the tables of the problems, and a line of what it counted.
pub(crate) fn check_text(report: &ClaimsReport, limit: usize) -> String {
    let mut text = problems_text(report);
    text.push_str(&summary(report, limit));
    text
}

/// The tables of the problems `report` lists, each under its heading with the count of its
/// kind.
fn problems_text(report: &ClaimsReport) -> String {
    let unclaimed = report
        .unclaimed
        .iter()
        .map(|u| {
            vec![
                cell(&u.id),
                cell(&u.doc),
                u.claimed_for.as_ref().map(cell).unwrap_or_default(),
            ]
        })
        .collect();
    let orphans = report
        .orphans
        .iter()
        .map(|o| {
            let holds = match &o.holds {
                None => "gone".to_owned(),
                Some(id) => format!("holds {}", cell(id)),
            };
            vec![cell(&o.id), cell(&o.doc), holds]
        })
        .collect();
    let shared = report
        .shared
        .iter()
        .map(|s| {
            let docs: Vec<String> = s.docs.iter().map(cell).collect();
            vec![cell(&s.id), s.count.to_string(), docs.join(", ")]
        })
        .collect();
    [
        section(
            "documents without a claim",
            report.unclaimed_count,
            &["ID", "document", "the claim names"],
            unclaimed,
        ),
        section(
            "claims without a document",
            report.orphan_count,
            &["ID", "document", "the document"],
            orphans,
        ),
        section(
            "IDs held by more than one document",
            report.shared_count,
            &["ID", "documents", "their _id"],
            shared,
        ),
    ]
    .concat()
}

/// The table of `rows` under `heading` with `count`, the number of its kind; nothing when
/// `count` is 0.
fn section(heading: &str, count: u64, header: &[&str], rows: Vec<Vec<String>>) -> String {
    if count == 0 {
        return String::new();
    }
    format!("{heading} ({count}):\n{}\n", table(header, rows))
}

/// One line: what `report` counted, and how many of each it lists.
fn summary(report: &ClaimsReport, limit: usize) -> String {
    let listed = if [
        report.unclaimed_count,
        report.orphan_count,
        report.shared_count,
    ]
    .iter()
    .any(|&n| n > limit as u64)
    {
        format!(" (at most {limit} of each listed: --limit lists more)")
    } else {
        String::new()
    };
    format!(
        "`{}` against `{}`: {} without a claim, {} without a document, {} held by more than \
         one document, {} without the ID field{listed}",
        report.collection,
        report.proxy,
        plural(report.unclaimed_count, "document"),
        plural(report.orphan_count, "claim"),
        plural(report.shared_count, "ID"),
        plural(report.without_id, "document"),
    )
}

/// What `repair` found and did: the tables of the problems, and a line of what it claimed and
/// deleted.
pub(crate) fn repair_text(report: &RepairReport, limit: usize) -> String {
    let found = &report.found;
    let (claim, prune) = if report.dry_run {
        ("would claim", "would delete")
    } else {
        ("claimed", "deleted")
    };
    let mut text = problems_text(found);
    text.push_str(&format!(
        "{claim} {} in `{}`",
        plural(report.claimed, "document"),
        found.proxy
    ));
    if report.prune {
        text.push_str(&format!(
            "; {prune} {} without a document",
            plural(report.pruned, "claim")
        ));
    } else if found.orphan_count > 0 {
        text.push_str(&format!(
            "; {} without a document left (--prune deletes them)",
            plural(found.orphan_count, "claim")
        ));
    }
    if report.raced > 0 {
        text.push_str(&format!(
            "; {} left unclaimed: another writer claimed their ID meanwhile (check again)",
            plural(report.raced, "document")
        ));
    }
    if found.orphans.len() < found.orphan_count as usize
        || found.unclaimed.len() < found.unclaimed_count as usize
    {
        text.push_str(&format!(" (at most {limit} of each listed)"));
    }
    text
}

/// What `ensure-indexes` found and created: as JSON, and as a table with a line of counts.
pub(crate) fn index_report(report: &IndexReport) -> (Value, String) {
    let json: Vec<Value> = report
        .indexes
        .iter()
        .map(|i| {
            json!({
                "namespace": i.namespace,
                "keys": Bson::Document(i.keys.clone()).into_relaxed_extjson(),
                "unique": i.unique,
                "created": i.created,
                "present": i.present,
                "purpose": i.purpose,
            })
        })
        .collect();
    let rows = report
        .indexes
        .iter()
        .map(|i| {
            vec![
                i.namespace.clone(),
                i.keys.to_string(),
                if i.unique { "yes" } else { "no" }.to_owned(),
                match (i.created, i.present) {
                    (true, _) => "created",
                    (false, true) => "present",
                    (false, false) => "missing",
                }
                .to_owned(),
                i.purpose.to_owned(),
            ]
        })
        .collect();
    let missing = report
        .indexes
        .iter()
        .filter(|i| !i.created && !i.present)
        .count();
    let done = if missing > 0 {
        format!("{missing} missing (a dry run creates none)")
    } else {
        format!("{} created", report.created().count())
    };
    let text = format!(
        "{}\n{} needed, {done}",
        table(&["collection", "keys", "unique", "state", "for"], rows),
        plural(report.indexes.len() as u64, "index"),
    );
    (Value::Array(json), text)
}
