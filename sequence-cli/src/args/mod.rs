//! The arguments of the command line: the commands, their flags and what the flags are read
//! as.

use clap::{Args, Parser, Subcommand};
use mongodb::bson::{Bson, Document};
use sequence_rules::Key;
use sequence_runtime::options::{CheckDigit, Encoding, Layout, SequenceOptionsBuilder, Stores};
use sequence_runtime::store::{SequenceRecord, StoredCounter};
use sequence_runtime::{id::Bounds, SequenceOptions};

mod command_args;
#[cfg(test)]
mod tests;
mod values;

pub(crate) use command_args::{
    Change, ClaimsArgs, DeleteArgs, EnsureIndexesArgs, NextArgs, PurgeBeforeArgs, SetNextArgs,
    SyncArgs,
};

pub(crate) use values::Filter;
use values::{check_digit, encoding, filter_fields, layout, scope_value, stores};

use crate::failure::Failure;

/// The command line.
#[derive(Parser)]
#[command(
    name = "mongo-sequence",
    version,
    about = "List, show, take, set, delete, sync and purge the counters of mongo-sequence, and \
             check and repair the claims of a proxy collection"
)]
pub(crate) struct Cli {
    /// The MongoDB connection string.
    #[arg(long, env = "MONGODB_URI", global = true, hide_env_values = true)]
    pub(crate) uri: Option<String>,
    /// The collection that holds the counters (default: where the sequence's record or
    /// counters are, found in every counters collection of the database; else the layout's,
    /// `counters`, or `identitycounters` for typegoose and mongoose-auto-increment).
    #[arg(long, global = true)]
    pub(crate) counters: Option<String>,
    /// Prints JSON for scripts instead of a table; errors too, as `{"error": …, "hint": …}` on
    /// stderr.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// The command to run.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The flags of a command that say where a sequence's counters are and how they look, as
/// given (`None`: not given).
#[derive(Clone, Copy, Default)]
pub(crate) struct Given<'a> {
    /// `--counters`.
    pub(crate) counters: Option<&'a str>,
    /// `--layout`.
    pub(crate) layout: Option<Layout>,
    /// The counter field, what it holds and the filter (`--field` or `--counter-field`,
    /// `--stores`, `--filter`).
    pub(crate) shape: Option<&'a Shape>,
    /// The name the documents store the ID under (`--id-field`, or `sync`'s `--field`).
    pub(crate) id_field: Option<&'a str>,
    /// The period prefix pattern of a command that takes no other option of the IDs
    /// (`--prefix` of `show`, `set-next`, `delete`, `purge-before`).
    pub(crate) prefix: Option<&'a str>,
    /// The options of the IDs (`--prefix`, `--format`, `--width`, …).
    pub(crate) sequence: Option<&'a SequenceArgs>,
}

/// The commands.
#[derive(Subcommand)]
pub(crate) enum Command {
    /// Lists the counters of a database, with the room each has left.
    ///
    /// Each counter decoded: name, period, scope, shard, layout, last issued, and the room left
    /// before `max` (of a shard: its `hi`) with the share used. The limits are the ones given
    /// (`--start`, `--max`), else the ones the sequence recorded, else unknown.
    List {
        /// The database.
        db: String,
        /// Lists only the counters whose name matches PATTERN: a name, or a pattern where `*`
        /// stands for any text and `?` for one character (`inv*`).
        #[arg(long, value_name = "PATTERN")]
        name: Option<String>,
        #[command(flatten)]
        limits: Limits,
        #[command(flatten)]
        shape: Shape,
    },
    /// Shows one counter, with the room it has left.
    Show {
        /// The database.
        db: String,
        #[command(flatten)]
        counter: CounterArgs,
        #[command(flatten)]
        limits: Limits,
    },
    /// Takes N values from a counter (default 1), as `nextval` does.
    ///
    /// The values are issued: no other caller gets them. The sequence's options are the ones
    /// it recorded, changed by the ones given. Refuses a gapless sequence (the values would be
    /// a permanent gap) without `--leave-gap`, and a sequence without counters or record
    /// without `--create`.
    Next(NextArgs),
    /// Makes VALUE the next value a counter issues.
    ///
    /// Refuses a VALUE outside `start..=max` (of a shard: its slice `lo..=hi`), moving the
    /// counter backwards without `--force`, a counter that does not exist without `--create`,
    /// and moving the counter of a gapless sequence in use: forward without `--leave-gap`,
    /// backwards without `--reissue`. Running processes keep the ranges they already hold.
    SetNext(SetNextArgs),
    /// Deletes the counters of a sequence (with `--force`).
    ///
    /// Every counter document of the sequence (its periods, scope values and shards), or the
    /// one `--period`, `--scope` or `--shard` name. Needs `--force`; `--dry-run` lists them and
    /// deletes nothing. A deleted counter starts again at `start`; deleting the counter of a
    /// gapless sequence in use also needs `--restart-numbering`.
    Delete(DeleteArgs),
    /// Moves the counters of a sequence up to the highest ID stored in a collection.
    ///
    /// As `sync_counters` does: one counter per period, scope value or shard; never down.
    Sync(SyncArgs),
    /// Creates the indexes a sequence's documents need, as a model's `ensure_indexes` does.
    ///
    /// The unique index of the ID field with the scope fields first (when it is not `_id`),
    /// the index of a scoped proxy collection's claims, the unique index of the counters of a
    /// layout or a filter; each reported as created or present. The sequence's scope, layout
    /// and uniqueness come from its record, changed by the flags given.
    EnsureIndexes(EnsureIndexesArgs),
    /// Checks the claims of a proxy collection (`unique = "proxy"`) against a collection.
    ///
    /// Lists the documents without a claim of their ID, the claims no document holds (their
    /// document is gone, or holds another ID), and the IDs held by more than one document.
    /// Writes nothing. Exit status 3 when it finds any of these.
    Check(ClaimsArgs),
    /// Claims the documents of a collection that have no claim in its proxy collection.
    ///
    /// Refuses (exit 1, listing them) when two documents hold one ID. With `--prune` it also
    /// deletes the claims no document holds, whose IDs may then be given again.
    Repair {
        #[command(flatten)]
        claims: ClaimsArgs,
        /// Also deletes the claims whose document is gone (or holds another ID now).
        #[arg(long)]
        prune: bool,
        /// Says what would be claimed and deleted, and writes nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Deletes the counters of a sequence's periods before the one DATE falls in.
    PurgeBefore(PurgeBeforeArgs),
}

/// Which counter: a name, and the period, scope values or shard of a counter of a period,
/// scope or shard.
#[derive(Args)]
pub(crate) struct CounterArgs {
    /// The sequence name.
    pub(crate) name: String,
    /// The canonical period, such as `20251122` (for a prefix with date tokens).
    #[arg(long)]
    pub(crate) period: Option<String>,
    /// A scope value, as `field=value` (repeat for several fields). The value is read as JSON
    /// where it is JSON (`year=2025` is a number), else as text (`tenant=acme`).
    #[arg(long = "scope", value_parser = scope_value)]
    pub(crate) scope: Vec<(String, Bson)>,
    /// The shard, for a sequence of the `ranges` strategy (`{ _id: { seq: NAME, shard: K } }`).
    #[arg(long, value_name = "K")]
    pub(crate) shard: Option<u32>,
    /// The convention of the counter documents: `default`, `mongoose_sequence`, `typegoose` or
    /// `mongoose_auto_increment` (the last two by the model's name, NAME); default: the
    /// recorded one, else the one the counters are in, else `default`.
    #[arg(long, value_parser = layout)]
    pub(crate) layout: Option<Layout>,
    /// The name the documents store the ID under, for the typegoose and
    /// mongoose-auto-increment layouts and `id_field` in a filter (default: the recorded one,
    /// else `_id`).
    #[arg(long, value_name = "FIELD")]
    pub(crate) id_field: Option<String>,
    /// The period prefix pattern, for a filter that holds the period (`--filter 'prefix = period
    /// as number' --prefix YYMMDD`).
    #[arg(long)]
    pub(crate) prefix: Option<String>,
    /// What the counter field is called and holds.
    #[command(flatten)]
    pub(crate) shape: Shape,
}

impl CounterArgs {
    /// The flags that say where the counter is and how it looks, with `--counters`.
    pub(crate) fn given<'a>(&'a self, counters: Option<&'a str>) -> Given<'a> {
        Given {
            counters,
            layout: self.layout,
            shape: Some(&self.shape),
            id_field: self.id_field.as_deref(),
            prefix: self.prefix.as_deref(),
            sequence: None,
        }
    }
}

/// What the counter field is called and what it holds, and how the counter documents are
/// found, for counters written by other code.
#[derive(Args, Clone, Default)]
pub(crate) struct Shape {
    /// The name of the counter field (default: the layout's, `seq` or `count`), such as
    /// `sequence` or `COUNT`.
    #[arg(long, value_name = "NAME")]
    pub(crate) field: Option<String>,
    /// What the counter field holds: `last_issued` (default) or `next_free`.
    #[arg(long, value_parser = stores)]
    pub(crate) stores: Option<Stores>,
    /// The filter that finds the counter documents, for a convention of one's own, such as
    /// `'prefix = period as number'` or `'m = "Ticket", f = id_field'`.
    #[arg(long, value_parser = filter_fields)]
    pub(crate) filter: Option<Filter>,
}

impl Shape {
    /// The name of the counter field as given, else the layout's or `seq`, for messages.
    pub(crate) fn field(&self) -> &str {
        self.field.as_deref().unwrap_or(DEFAULT_FIELD)
    }

    /// What the counter field holds, `last_issued` when not given.
    fn stores(&self) -> Stores {
        self.stores.unwrap_or_default()
    }

    /// The counter `doc` holds, if it is a counter document (of a named layout, or one the
    /// filter finds).
    pub(crate) fn decode(&self, doc: &Document) -> Option<StoredCounter> {
        match &self.filter {
            Some(filter) => {
                StoredCounter::decode_filter(doc, &filter.0, self.field(), self.stores())
            }
            None => StoredCounter::decode_with(doc, self.field.as_deref(), self.stores()),
        }
    }

    /// `options` with the counter field, what it holds and the filter, as given.
    pub(crate) fn apply(&self, mut options: SequenceOptionsBuilder) -> SequenceOptionsBuilder {
        // Every flag, so that a new one is a compile error here until it is applied.
        let Shape {
            field,
            stores,
            filter,
        } = self;
        if let Some(v) = field {
            options = options.field(v);
        }
        if let Some(v) = *stores {
            options = options.stores(v);
        }
        if let Some(v) = filter {
            options = options.filter(v.0.iter().cloned());
        }
        options
    }
}

/// The counter field of the default options.
const DEFAULT_FIELD: &str = "seq";

/// The values of the counters read: `start..=max`, for the room they have left.
#[derive(Args)]
pub(crate) struct Limits {
    /// The first value of the counters (default: the sequence's recorded `start`, else 1); of
    /// a shard, its `lo` is used.
    #[arg(long)]
    pub(crate) start: Option<i64>,
    /// The largest value of the counters (default: the sequence's recorded limit, which
    /// `width` and `digits` count in, else unknown); of a shard, its `hi` is used.
    #[arg(long)]
    pub(crate) max: Option<i64>,
}

impl Limits {
    /// `start..=max`: as given, else as `record` says, else the defaults of the options
    /// (`start` 1, `max` i64::MAX) where only one of the two is given; `None` when neither is
    /// given nor recorded.
    pub(crate) fn bounds(
        &self,
        name: &str,
        record: Option<&SequenceRecord>,
    ) -> Result<Option<Bounds>, Failure> {
        if self.start.is_none() && self.max.is_none() && record.is_none() {
            return Ok(None);
        }
        let mut options = SequenceOptions::builder(name);
        if let Some(v) = self.start.or(record.map(|r| r.start)) {
            options = options.start(v);
        }
        if let Some(v) = self.max.or(record.map(|r| r.max)) {
            options = options.max(v);
        }
        Ok(Some(options.build().validate()?))
    }
}

/// The options of a sequence, as its counters were configured.
#[derive(Args)]
pub(crate) struct SequenceArgs {
    /// The period prefix pattern of the IDs, such as `INV-YYMMDD-`.
    #[arg(long)]
    pub(crate) prefix: Option<String>,
    /// The digits of the zero-padded counter part.
    #[arg(long)]
    pub(crate) width: Option<u8>,
    /// The IANA time zone of the periods.
    #[arg(long)]
    tz: Option<String>,
    /// The exact number of digits of every ID.
    #[arg(long)]
    digits: Option<u8>,
    /// The template of the IDs, such as `ACC-{n:08}-{check}` (instead of `--prefix` and
    /// `--width`).
    #[arg(long)]
    format: Option<String>,
    /// The check digits after the number: `luhn`, `damm`, `mod97` or `crockford`.
    #[arg(long, value_parser = check_digit)]
    check_digit: Option<CheckDigit>,
    /// How the number is written: `decimal`, `crockford32` or `sqids`.
    #[arg(long, value_parser = encoding)]
    encoding: Option<Encoding>,
    /// The alphabet of `--encoding sqids`.
    #[arg(long)]
    alphabet: Option<String>,
    /// The shortest ID of `--encoding sqids`.
    #[arg(long)]
    min_length: Option<u32>,
    /// The first value of the sequence.
    #[arg(long)]
    start: Option<i64>,
    /// The largest value of the sequence.
    #[arg(long)]
    max: Option<i64>,
    /// The number of shards of a ranges sequence.
    #[arg(long)]
    shards: Option<u32>,
    /// The convention of the counter documents: `default`, `mongoose_sequence`, `typegoose` or
    /// `mongoose_auto_increment`. The counters stay in the collection `--counters` names
    /// (`counters` unless given; `identitycounters` for those libraries' own).
    #[arg(long, value_parser = layout)]
    layout: Option<Layout>,
}

/// The flag that gives `key` to the commands that take a sequence's options, or `None` for a
/// key no flag gives. Every key is listed, so that a new key is a compile error here until it
/// is given a flag (then a field of [`SequenceArgs`] or [`Shape`], which `against` and `apply`
/// destructure whole) or none.
pub(crate) const fn flag(key: Key) -> Option<&'static str> {
    match key {
        Key::Prefix => Some("--prefix"),
        Key::Tz => Some("--tz"),
        Key::Width => Some("--width"),
        Key::Digits => Some("--digits"),
        Key::Format => Some("--format"),
        Key::CheckDigit => Some("--check-digit"),
        Key::Encoding => Some("--encoding"),
        Key::Alphabet => Some("--alphabet"),
        Key::MinLength => Some("--min-length"),
        Key::Start => Some("--start"),
        Key::Max => Some("--max"),
        Key::Shards => Some("--shards"),
        Key::Counters => Some("--counters"),
        Key::Layout => Some("--layout"),
        Key::Field => Some("--field"),
        Key::Stores => Some("--stores"),
        Key::Filter => Some("--filter"),
        Key::Proxy => Some("--proxy"),
        // The name is each command's argument (or `--name`, a name or a pattern of names);
        // `--scope` gives a scope's values, not its
        // fields (the record has those); the others change how IDs are taken or inserted,
        // which no command does (`check` and `repair` read claims where `--proxy` says).
        Key::Name
        | Key::Batch
        | Key::Strategy
        | Key::Retries
        | Key::Scope
        | Key::Unique
        | Key::Gapless
        | Key::TransactionTimeout
        | Key::Crate => None,
    }
}

impl SequenceArgs {
    /// Each option given with the value `record` holds instead, as `(flag, given, recorded)`
    /// (for the refusal of a flag that contradicts a record).
    pub(crate) fn against(&self, record: &SequenceRecord) -> Vec<(&'static str, String, String)> {
        fn text<T: ToString>(v: Option<&T>) -> String {
            v.map_or_else(|| "none".to_owned(), ToString::to_string)
        }
        // Every flag, so that a new one is a compile error here until it is compared.
        let SequenceArgs {
            prefix,
            width,
            tz,
            digits,
            format,
            check_digit,
            encoding,
            alphabet,
            min_length,
            start,
            max,
            shards,
            layout: _, // compared with the counters found, by `known`
        } = self;
        let given = [
            (Key::Prefix, prefix.clone(), text(record.prefix.as_ref())),
            (
                Key::Width,
                width.map(|v| v.to_string()),
                text(record.width.as_ref()),
            ),
            (Key::Tz, tz.clone(), text(record.tz.as_ref())),
            (
                Key::Digits,
                digits.map(|v| v.to_string()),
                text(record.digits.as_ref()),
            ),
            (Key::Format, format.clone(), text(record.format.as_ref())),
            (
                Key::CheckDigit,
                check_digit.map(|v| v.name().to_owned()),
                text(record.check_digit.map(CheckDigit::name).as_ref()),
            ),
            (
                Key::Encoding,
                encoding.map(|v| v.name().to_owned()),
                record.encoding.name().to_owned(),
            ),
            (
                Key::Alphabet,
                alphabet.clone(),
                text(record.alphabet.as_ref()),
            ),
            (
                Key::MinLength,
                min_length.map(|v| v.to_string()),
                record.min_length.to_string(),
            ),
            (
                Key::Start,
                start.map(|v| v.to_string()),
                record.start.to_string(),
            ),
            (Key::Max, max.map(|v| v.to_string()), record.max.to_string()),
            (
                Key::Shards,
                shards.map(|v| v.to_string()),
                record.shards.to_string(),
            ),
        ];
        given
            .into_iter()
            .filter_map(|(key, given, recorded)| {
                let given = given.filter(|given| *given != recorded)?;
                Some((flag(key).unwrap_or(key.name()), given, recorded))
            })
            .collect()
    }

    /// The layout given, if any.
    pub(crate) fn layout(&self) -> Option<Layout> {
        self.layout
    }

    /// `options` with the options given, of the counter field `field` holding `stores`.
    pub(crate) fn apply(
        &self,
        mut options: SequenceOptionsBuilder,
        field: Option<&str>,
        stores: Option<Stores>,
    ) -> SequenceOptionsBuilder {
        // Every flag, so that a new one is a compile error here until it is applied.
        let SequenceArgs {
            prefix,
            width,
            tz,
            digits,
            format,
            check_digit,
            encoding,
            alphabet,
            min_length,
            start,
            max,
            shards,
            layout,
        } = self;
        if let Some(v) = prefix {
            options = options.prefix(v);
        }
        if let Some(v) = *width {
            options = options.width(v);
        }
        if let Some(v) = tz {
            options = options.tz(v);
        }
        if let Some(v) = *digits {
            options = options.digits(v);
        }
        if let Some(v) = format {
            options = options.format(v);
        }
        if let Some(v) = *check_digit {
            options = options.check_digit(v);
        }
        if let Some(v) = *encoding {
            options = options.encoding(v);
        }
        if let Some(v) = alphabet {
            options = options.alphabet(v);
        }
        if let Some(v) = *min_length {
            options = options.min_length(v);
        }
        if let Some(v) = *start {
            options = options.start(v);
        }
        if let Some(v) = *max {
            options = options.max(v);
        }
        if let Some(v) = *shards {
            options = options.ranges(v);
        }
        if let Some(v) = *layout {
            options = options.layout(v);
        }
        if let Some(v) = field {
            options = options.field(v);
        }
        if let Some(v) = stores {
            options = options.stores(v);
        }
        options
    }
}
