//! What a deployment knows of a sequence without its code, and the one way every command finds
//! a sequence: its record first (the `<counters>.sequences` of any counters collection of the
//! database), then its counter documents (in the collections that hold counters: those with
//! records, and the known layouts' own), then the flags. A flag that contradicts the record is
//! refused, naming both; the refusals built on what is found keep the library's promises when
//! an operator types a command.

use std::collections::BTreeSet;
use std::sync::Arc;

use mongodb::bson::{doc, Bson, Document};
use mongodb::error::ErrorKind;
use mongodb::options::WriteConcern;
use mongodb::{Client, Database};
use sequence_runtime::claims::Claims;
use sequence_runtime::id::CounterKey;
use sequence_runtime::options::{filter, FilterValue, Layout, SequenceOptionsBuilder};
use sequence_runtime::store::{MongoStore, SequenceRecord, StoredCounter};
use sequence_runtime::{Error, Sequence, SequenceOptions};

use crate::args::{ClaimsArgs, CounterArgs, Given, Shape};
use crate::counters::{find, scope, shard_alone};
use crate::failure::Failure;
use crate::output::Output;
use crate::server;

/// The server's code of a command refused for a missing privilege.
const UNAUTHORIZED: i32 = 13;

/// How many values of periods, scopes or shards a message lists.
const LISTED: usize = 8;

/// The collections where the libraries whose layouts this crate speaks keep their counters
/// by default: this crate's and mongoose-sequence's, typegoose's and mongoose-auto-increment's,
/// MongoEngine's.
pub(crate) const KNOWN_COUNTERS: [&str; 3] =
    ["counters", "identitycounters", "mongoengine.counters"];

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

/// What a command on the documents of a collection (`sync`, `ensure-indexes`) needs of the
/// sequence `name` of `db`, found as `given` says: a handle on its counters, with the scope
/// fields `scope` where given, and the field the documents store the ID in (given, else
/// recorded, else `_id`). Refuses a sequence found nowhere unless `create`, and a write outside
/// `counters` that does not name its collection unless `dry_run`.
pub(crate) async fn for_documents(
    db: &Database,
    name: &str,
    given: Given<'_>,
    scope: &[String],
    (create, dry_run): (bool, bool),
    out: &Output,
) -> Result<(Sequence, String), Failure> {
    let known = Known::find(db, name, given, out).await?;
    known.exists(create)?;
    known.confirm_write(given.counters, dry_run)?;
    let mut options = known.options(given)?;
    if !scope.is_empty() {
        options = options.scope(scope.iter().cloned());
    }
    let field = given
        .id_field
        .map(str::to_owned)
        .or_else(|| known.record.as_ref().map(|r| r.id_field.clone()))
        .unwrap_or_else(|| "_id".to_owned());
    let options = options.id_field(&field).build();
    // A store without a record: the record is the application's.
    let store = MongoStore::new(db, &options)?;
    Ok((Sequence::with_store(Arc::new(store), options)?, field))
}

/// The claims of the collection and proxy collection `args` names: the ID field and scope
/// fields given, else those the record of `--name` (found where `counters` says, if
/// given) holds.
pub(crate) async fn claims_of(
    client: &Client,
    args: &ClaimsArgs,
    counters: Option<&str>,
    out: &Output,
) -> Result<Claims, Failure> {
    let (db, target) = server::collection(client, &args.target)?;
    let record = match &args.name {
        Some(name) => {
            let given = Given {
                counters,
                ..Given::default()
            };
            let known = Known::find(&db, name, given, out).await?;
            known.exists(false)?;
            known.record
        }
        None => None,
    };
    let field = match (&args.field, &record) {
        (Some(field), Some(record)) if *field != record.id_field => {
            return Err(Failure::usage(format!(
                "`--field {field}` contradicts the record of sequence `{}` (recorded: `{}`); \
                 nothing was done",
                record.name, record.id_field
            ))
            .hint("leave the flag out: the record says where the documents store the ID"))
        }
        (Some(field), _) => field.clone(),
        (None, Some(record)) => record.id_field.clone(),
        (None, None) => {
            return Err(Failure::usage(
                "give the ID field with `--field`, or the sequence with `--name` (its record \
                 says where the documents store the ID)",
            ))
        }
    };
    let scope = match (args.scope.is_empty(), &record) {
        (true, Some(record)) => record.scope.clone(),
        _ => args.scope.clone(),
    };
    let claims = match &args.proxy {
        Some(proxy) => Claims::new(&target, &field, &db.collection(proxy)),
        None => Claims::with_default_proxy(&target, &field),
    };
    Ok(claims.scope(scope))
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

/// The collections of `db` that hold counters: `given` (whether or not it exists), those with
/// a record collection beside them, and the known layouts' own that exist, in that order
/// without repeats. A user who may not list the collections gets a warning and `given`, else
/// `counters`.
pub(crate) async fn counters_collections(
    db: &Database,
    given: Option<&str>,
    out: &Output,
) -> Result<Vec<String>, Failure> {
    let names: Vec<String> = match db.list_collection_names().await {
        Ok(names) => names,
        Err(e) if matches!(&*e.kind, ErrorKind::Command(c) if c.code == UNAUTHORIZED) => {
            let only = given.unwrap_or(KNOWN_COUNTERS[0]);
            out.warn(&format!(
                "cannot list the collections of `{}` (the `listCollections` action is \
                 missing): looking in `{only}` alone; `--counters` names another",
                db.name()
            ));
            return Ok(vec![only.to_owned()]);
        }
        Err(e) => return Err(e.into()),
    };
    let mut places: Vec<String> = Vec::new();
    let mut add = |place: &str| {
        if !places.iter().any(|p| p == place) {
            places.push(place.to_owned());
        }
    };
    if let Some(given) = given {
        add(given);
    }
    let mut recorded: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_suffix(".sequences"))
        .collect();
    recorded.sort_unstable();
    for place in recorded {
        add(place);
    }
    for place in KNOWN_COUNTERS {
        if names.iter().any(|n| n == place) {
            add(place);
        }
    }
    Ok(places)
}

/// The counter documents of sequence `name` in `counters` of `db`, as `shape` reads them: a
/// filter without a `name` field finds the counters of one sequence, whatever its name.
async fn named(
    db: &Database,
    counters: &str,
    name: &str,
    shape: &Shape,
) -> Result<Vec<(Document, StoredCounter)>, Failure> {
    let mut found = find(&db.collection(counters), doc! {}, shape).await?;
    let unnamed = shape
        .filter
        .as_ref()
        .is_some_and(|f| !f.0.iter().any(|f| f.value == FilterValue::Name));
    found.retain(|(_, c)| unnamed || c.name == name);
    Ok(found)
}

/// How the counters of a recorded sequence are read.
pub(crate) fn record_shape(record: &SequenceRecord) -> Shape {
    Shape {
        field: Some(record.field.clone()),
        stores: Some(record.stores),
        filter: record
            .filter_fields()
            .ok()
            .filter(|f| !f.is_empty())
            .map(crate::args::Filter),
    }
}

/// Refuses every flag of `given` that contradicts `record` (in `place`), naming both.
fn contradictions(record: &SequenceRecord, place: &str, given: Given<'_>) -> Result<(), Failure> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut differs = |flag: &str, given: String, recorded: String| {
        if given != recorded {
            found.push((format!("`{flag} {given}`"), recorded));
        }
    };
    if let Some(layout) = given.layout {
        differs(
            "--layout",
            layout.name().to_owned(),
            record.layout.name().to_owned(),
        );
    }
    // The ID field is part of the counters' key in the layouts that hold it.
    let holds_id_field = matches!(
        record.layout,
        Layout::Typegoose | Layout::MongooseAutoIncrement
    ) || record
        .filter_fields()
        .is_ok_and(|f| f.iter().any(|f| f.value == FilterValue::IdField));
    if let Some(id_field) = given.id_field.filter(|_| holds_id_field) {
        differs("--id-field", id_field.to_owned(), record.id_field.clone());
    }
    if let Some(prefix) = given.prefix {
        let recorded = record.prefix.clone().unwrap_or_else(|| "none".to_owned());
        differs("--prefix", prefix.to_owned(), recorded);
    }
    if let Some(shape) = given.shape {
        if let Some(field) = &shape.field {
            differs("--field", field.clone(), record.field.clone());
        }
        if let Some(stores) = shape.stores {
            differs(
                "--stores",
                stores.name().to_owned(),
                record.stores.name().to_owned(),
            );
        }
        if let Some(f) = &shape.filter {
            let written = filter::display(&f.0);
            let recorded = record
                .filter_fields()
                .map(|f| filter::display(&f))
                .unwrap_or_else(|_| record.filter.clone());
            differs("--filter", written, recorded);
        }
    }
    if let Some(sequence) = given.sequence {
        for (flag, value, recorded) in sequence.against(record) {
            differs(flag, value, recorded);
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = found
        .iter()
        .map(|(flag, recorded)| format!("{flag} (recorded: `{recorded}`)"))
        .collect();
    Err(Failure::usage(format!(
        "{} contradict{} the record of sequence `{}` in `{}`; nothing was done",
        list.join(", "),
        if found.len() == 1 { "s" } else { "" },
        record.name,
        SequenceRecord::collection_name(place)
    ))
    .hint("leave the flag out: the record says how the sequence's counters and IDs look"))
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
