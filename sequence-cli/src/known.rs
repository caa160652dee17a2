//! What a deployment knows of a sequence without its code: the record its processes wrote
//! beside its counters (see `SequenceRecord`) and its counter documents; and the refusals built
//! on them, which keep the library's promises when an operator types a command.

use std::collections::BTreeSet;

use mongodb::bson::{doc, Bson, Document};
use mongodb::Database;
use sequence_runtime::store::{SequenceRecord, StoredCounter};
use sequence_runtime::Error;

use crate::args::Shape;
use crate::counters::find;
use crate::failure::Failure;
use crate::output::Output;

/// How many values of periods, scopes or shards a message lists.
const LISTED: usize = 8;

/// A sequence as the deployment knows it.
pub(crate) struct Known {
    name: String,
    /// The database's name.
    db: String,
    /// `database.counters`, for messages.
    place: String,
    /// The record its processes wrote, if any.
    pub(crate) record: Option<SequenceRecord>,
    /// Its counter documents, decoded.
    pub(crate) counters: Vec<(Document, StoredCounter)>,
}

impl Known {
    /// The sequence `name` with counters in `counters` of `db`, of the documents `shape` reads.
    pub(crate) async fn of(
        db: &Database,
        counters: &str,
        name: &str,
        shape: &Shape,
        out: &Output,
    ) -> Result<Known, Failure> {
        let record = records(db, counters, Some(name), out).await?.pop();
        let mut found = find(&db.collection(counters), doc! {}, shape).await?;
        found.retain(|(_, c)| c.name == name);
        Ok(Known {
            name: name.to_owned(),
            db: db.name().to_owned(),
            place: format!("{}.{counters}", db.name()),
            record,
            counters: found,
        })
    }

    /// Whether the sequence recorded that it is gapless.
    pub(crate) fn gapless(&self) -> bool {
        self.record.as_ref().is_some_and(|r| r.gapless)
    }

    /// Refuses a sequence with neither counters nor a record (a mistyped name), unless
    /// `create`.
    pub(crate) fn exists(&self, create: bool) -> Result<(), Failure> {
        if create || self.record.is_some() || !self.counters.is_empty() {
            return Ok(());
        }
        Err(Failure::error(format!(
            "sequence `{}` has no counter and no record in `{}`; nothing was written",
            self.name, self.place
        ))
        .hint(format!(
            "check the name with `mongo-sequence list {}`; `--create` starts a new counter",
            self.db
        )))
    }

    /// Whether one of the sequence's counters is its plain one: no period, scope or shard.
    pub(crate) fn has_plain_counter(&self) -> bool {
        self.counters
            .iter()
            .any(|(_, c)| c.period.is_none() && c.scope.is_none() && c.shard.is_none())
    }

    /// The failure of a command that found no counter `key` while the sequence has counters
    /// of periods, scope values or shards: it lists the flags that name them. `None` when the
    /// sequence has no such counters.
    pub(crate) fn elsewhere(&self, key: &str) -> Option<Failure> {
        let mut flags = Vec::new();
        let periods: BTreeSet<&str> = self
            .counters
            .iter()
            .filter_map(|(_, c)| c.period.as_deref())
            .collect();
        let scopes: BTreeSet<String> = self
            .counters
            .iter()
            .filter_map(|(_, c)| c.scope.as_ref().map(scope_flags))
            .collect();
        let shards: BTreeSet<i64> = self.counters.iter().filter_map(|(_, c)| c.shard).collect();
        flags.extend(listed(periods.iter().map(|p| format!("--period {p}"))));
        flags.extend(listed(scopes.into_iter()));
        flags.extend(listed(shards.iter().map(|s| format!("--shard {s}"))));
        if flags.is_empty() {
            return None;
        }
        Some(
            Failure::error(format!(
                "sequence `{}` has no counter `{key}` in `{}`: its counters are per period, \
                 scope value or shard",
                self.name, self.place
            ))
            .hint(format!("name one: {}", flags.join(", "))),
        )
    }
}

/// The records beside `counters` in `db` (of `name` only, where given). A user who may not
/// read them gets a warning and none: the limits are then unknown, and a gapless sequence is
/// not recognised.
pub(crate) async fn records(
    db: &Database,
    counters: &str,
    name: Option<&str>,
    out: &Output,
) -> Result<Vec<SequenceRecord>, Failure> {
    let read = match name {
        Some(name) => SequenceRecord::read(db, counters, name)
            .await
            .map(|r| r.into_iter().collect()),
        None => SequenceRecord::read_all(db, counters).await,
    };
    match read {
        Ok(records) => Ok(records),
        Err(Error::Unauthorized { namespace, .. }) => {
            out.warn(&format!(
                "cannot read the sequences' settings in `{namespace}` (the `find` action on it \
                 is missing): limits are unknown and a gapless sequence is not recognised"
            ));
            Ok(Vec::new())
        }
        Err(e) => Err(e.into()),
    }
}

/// `--scope field=value` for each field of a counter's scope.
fn scope_flags(scope: &Document) -> String {
    let flags: Vec<String> = scope
        .iter()
        .map(|(field, value)| match value {
            Bson::String(s) => format!("--scope {field}={s}"),
            other => format!("--scope {field}={}", other.clone().into_relaxed_extjson()),
        })
        .collect();
    flags.join(" ")
}

/// The first [`LISTED`] of `items`, and how many more there are.
fn listed(items: impl ExactSizeIterator<Item = String>) -> Vec<String> {
    let total = items.len();
    let mut shown: Vec<String> = items.take(LISTED).collect();
    if total > LISTED {
        shown.push(format!("… {} more (`list` shows them all)", total - LISTED));
    }
    shown
}
