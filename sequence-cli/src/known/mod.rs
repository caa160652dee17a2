//! What a deployment knows of a sequence without its code, and the one way every command finds
//! a sequence: its record first (the `<counters>.sequences` of any counters collection of the
//! database), then its counter documents (in the collections that hold counters: those with
//! records, and the known layouts' own), then the flags. A flag that contradicts the record is
//! refused, naming both; the refusals built on what is found keep the library's promises when
//! an operator types a command.

use std::collections::BTreeSet;

use mongodb::bson::{doc, Bson, Document};
use mongodb::options::WriteConcern;
use mongodb::Database;
use sequence_runtime::id::CounterKey;
use sequence_runtime::options::{Layout, SequenceOptionsBuilder};
use sequence_runtime::store::{MongoStore, SequenceRecord, StoredCounter};
use sequence_runtime::SequenceOptions;

use crate::args::{CounterArgs, Given, Shape};
use crate::counters::{scope, shard_alone};
use crate::failure::Failure;
use crate::output::Output;

mod documents;
mod places;
mod record;

pub(crate) use documents::{claims_of, for_documents};
pub(crate) use places::{counters_collections, records};
pub(crate) use record::record_shape;

use places::{named, KNOWN_COUNTERS};
use record::contradictions;

/// How many values of periods, scopes or shards a message lists.
const LISTED: usize = 8;

/// A sequence as the deployment knows it.
pub(crate) struct Known {
    name: String,
    /// The database's name.
    db: String,
    /// The collection of its counters: where its record or counters are, else the one given,
    /// else the layout's.
    pub(crate) counters: String,
    /// The record its processes wrote, if any.
    pub(crate) record: Option<SequenceRecord>,
    /// Its counter documents, decoded.
    pub(crate) found: Vec<(Document, StoredCounter)>,
    /// The layout its counter documents are in, where they say it.
    layout: Option<Layout>,
}

impl Known {
    /// The sequence `name` of `db`, as its record, its counters and the flags `given` say.
    pub(crate) async fn find(
        db: &Database,
        name: &str,
        given: Given<'_>,
        out: &Output,
    ) -> Result<Known, Failure> {
        let places = counters_collections(db, given.counters, out).await?;
        let mut recorded = Vec::new();
        for place in &places {
            if let Some(record) = records(db, place, Some(name), out).await?.pop() {
                recorded.push((place.clone(), record));
            }
        }
        let record_place = match (given.counters, recorded.as_slice()) {
            (Some(counters), _) if recorded.iter().any(|(p, _)| p == counters) => {
                recorded.retain(|(p, _)| p == counters);
                Some(counters.to_owned())
            }
            (Some(counters), [(place, _), ..]) => {
                return Err(Failure::usage(format!(
                    "`--counters {counters}` contradicts the record of sequence `{name}`, which \
                     is in `{}.{}`: its counters are in `{}.{place}`; nothing was done",
                    db.name(),
                    SequenceRecord::collection_name(place),
                    db.name()
                ))
                .hint(format!(
                    "give `--counters {place}`, or leave `--counters` out"
                )));
            }
            (None, [(place, _)]) => Some(place.clone()),
            (None, [_, _, ..]) => {
                let places: Vec<String> = recorded.iter().map(|(p, _)| format!("`{p}`")).collect();
                return Err(Failure::usage(format!(
                    "sequence `{name}` has records in several counters collections of `{}`: {}",
                    db.name(),
                    places.join(", ")
                ))
                .hint("name one with `--counters`"));
            }
            (_, []) => None,
        };
        if let (Some(place), Some((_, record))) = (record_place, recorded.pop()) {
            contradictions(&record, &place, given)?;
            let shape = record_shape(&record);
            let found = named(db, &place, name, &shape).await?;
            return Ok(Known {
                name: name.to_owned(),
                db: db.name().to_owned(),
                counters: place,
                layout: Some(record.layout),
                record: Some(record),
                found,
            });
        }
        // No record: the counters of that name, where they are.
        let default_shape = Shape::default();
        let shape = given.shape.unwrap_or(&default_shape);
        let mut holding = Vec::new();
        for place in &places {
            let found = named(db, place, name, shape).await?;
            if !found.is_empty() {
                holding.push((place.clone(), found));
            }
        }
        let (counters, found) = match (given.counters, holding.as_slice()) {
            (Some(counters), _) => {
                let found = holding
                    .iter()
                    .position(|(p, _)| p == counters)
                    .map(|i| holding.swap_remove(i).1)
                    .unwrap_or_default();
                if found.is_empty() {
                    if let Some((place, _)) = holding.first() {
                        return Err(elsewhere_failure(db, name, counters, place));
                    }
                }
                (counters.to_owned(), found)
            }
            (None, [_]) => holding.pop().expect("one place holds them"),
            (None, [_, _, ..]) => {
                let places: Vec<String> = holding.iter().map(|(p, _)| format!("`{p}`")).collect();
                return Err(Failure::usage(format!(
                    "sequence `{name}` has counters in several collections of `{}`: {}",
                    db.name(),
                    places.join(", ")
                ))
                .hint("name one with `--counters`"));
            }
            (None, []) => {
                let layout = given.layout.unwrap_or_default();
                (layout.counters().to_owned(), Vec::new())
            }
        };
        let layout = given
            .layout
            .or_else(|| found.first().map(|(_, c)| c.layout));
        Ok(Known {
            name: name.to_owned(),
            db: db.name().to_owned(),
            counters,
            record: None,
            found,
            layout,
        })
    }

    /// The layout of its counters: the recorded one, else the one given or that its counter
    /// documents are in, else this crate's.
    pub(crate) fn layout(&self) -> Layout {
        self.layout.unwrap_or_default()
    }

    /// How its counter documents are read: as its record says, else as `given` says.
    pub(crate) fn shape(&self, given: &Shape) -> Shape {
        match &self.record {
            Some(record) => record_shape(record),
            None => given.clone(),
        }
    }

    /// `database.counters`, for messages.
    pub(crate) fn place(&self) -> String {
        format!("{}.{}", self.db, self.counters)
    }

    /// Whether the sequence recorded that it is gapless.
    pub(crate) fn gapless(&self) -> bool {
        self.record.as_ref().is_some_and(|r| r.gapless)
    }

    /// The options of the sequence: the ones it recorded (the flags agree with them), else the
    /// flags of `given` and its counters' layout, in its counters collection.
    pub(crate) fn options(&self, given: Given<'_>) -> Result<SequenceOptionsBuilder, Failure> {
        if let Some(record) = &self.record {
            return Ok(record.options(&self.counters)?);
        }
        let mut options = SequenceOptions::builder(self.name.clone()).counters(&self.counters);
        if let Some(layout) = self.layout {
            options = options.layout(layout);
        }
        if let Some(sequence) = given.sequence {
            options = sequence.apply(options, None, None);
        }
        if let Some(prefix) = given.prefix {
            options = options.prefix(prefix);
        }
        if let Some(shape) = given.shape {
            options = shape.apply(options);
        }
        if let Some(id_field) = given.id_field {
            options = options.id_field(id_field);
        }
        Ok(options)
    }

    /// Refuses a sequence with neither counters nor a record in any counters collection of
    /// the database (a mistyped name), unless `create`; only then is `--create` suggested.
    pub(crate) fn exists(&self, create: bool) -> Result<(), Failure> {
        if create || self.record.is_some() || !self.found.is_empty() {
            return Ok(());
        }
        Err(Failure::error(format!(
            "sequence `{}` has no counter and no record in any counters collection of `{}`; \
             nothing was done",
            self.name, self.db
        ))
        .hint(format!(
            "check the name with `mongo-sequence list {}`; `--create` starts a new counter in \
             `{}`",
            self.db,
            self.place()
        )))
    }

    /// Refuses a write (unless `dry_run`) to counters found outside this crate's default
    /// collection, `counters`, without `--counters` naming theirs (`given`): a command that
    /// changes another library's counters, or a collection of one's own, says where.
    pub(crate) fn confirm_write(&self, given: Option<&str>, dry_run: bool) -> Result<(), Failure> {
        if dry_run || given.is_some() || self.counters == KNOWN_COUNTERS[0] {
            return Ok(());
        }
        if self.record.is_none() && self.found.is_empty() {
            return Ok(());
        }
        let how = match (&self.record, self.layout()) {
            (Some(_), layout) => format!("{}'s layout, recorded", layout.library()),
            (None, layout) => format!("{}'s layout", layout.library()),
        };
        Err(Failure::usage(format!(
            "sequence `{}` is in `{}` ({how}): a command that writes names that collection; \
             nothing was done",
            self.name,
            self.place()
        ))
        .hint(format!("give `--counters {}`", self.counters)))
    }

    /// The key of the counter `args` names, and the store of the counters collection where
    /// `known` found its sequence (its options from its record, else the flags `args` gave).
    pub(crate) fn key(
        &self,
        db: &Database,
        args: &CounterArgs,
        counters: Option<&str>,
    ) -> Result<(CounterKey, MongoStore), Failure> {
        shard_alone(args)?;
        let key = match args.shard {
            Some(shard) => CounterKey::composite(doc! { "seq": &args.name, "shard": shard as i32 }),
            None => CounterKey::of(
                args.name.clone(),
                args.period.as_deref(),
                scope(args)?.as_ref(),
            ),
        };
        let options = self
            .options(args.given(counters))?
            .write_concern(Some(WriteConcern::majority()))
            .build();
        Ok((key, MongoStore::new(db, &options)?))
    }

    /// The counter document of `key`, or the error that it does not exist.
    pub(crate) async fn find_counter(
        &self,
        db: &Database,
        key: &CounterKey,
        store: &MongoStore,
    ) -> Result<Document, Failure> {
        let found = db
            .collection::<Document>(&self.counters)
            .find_one(store.filter(key)?)
            .await?;
        found.ok_or_else(|| {
            Failure::error(format!(
                "counter `{key}` does not exist in `{}`",
                self.place()
            ))
            .hint(format!(
                "`mongo-sequence list {} --counters {}` shows the counters there",
                db.name(),
                self.counters
            ))
        })
    }

    /// Whether one of the sequence's counters is its plain one: no period, scope or shard.
    pub(crate) fn has_plain_counter(&self) -> bool {
        self.found
            .iter()
            .any(|(_, c)| c.period.is_none() && c.scope.is_none() && c.shard.is_none())
    }

    /// The failure of a command that found no counter `key` while the sequence has counters
    /// of periods, scope values or shards: it lists the flags that name them. `None` when the
    /// sequence has no such counters.
    pub(crate) fn elsewhere(&self, key: &str) -> Option<Failure> {
        let mut flags = Vec::new();
        let periods: BTreeSet<&str> = self
            .found
            .iter()
            .filter_map(|(_, c)| c.period.as_deref())
            .collect();
        let scopes: BTreeSet<String> = self
            .found
            .iter()
            .filter_map(|(_, c)| c.scope.as_ref().map(scope_flags))
            .collect();
        let shards: BTreeSet<i64> = self.found.iter().filter_map(|(_, c)| c.shard).collect();
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
                self.name,
                self.place()
            ))
            .hint(format!("name one: {}", flags.join(", "))),
        )
    }
}

/// The refusal of `--counters counters` for a sequence whose counters are in `place`.
fn elsewhere_failure(db: &Database, name: &str, counters: &str, place: &str) -> Failure {
    Failure::error(format!(
        "sequence `{name}` has no counter in `{}.{counters}`; its counters are in `{}.{place}`; \
         nothing was done",
        db.name(),
        db.name()
    ))
    .hint(format!(
        "give `--counters {place}`, or leave `--counters` out"
    ))
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
