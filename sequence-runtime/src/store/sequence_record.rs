//! What a sequence records of itself beside its counters, for the tools that read counters
//! without the model's code: its strategy, whether it is gapless, its limits and the shape of
//! its IDs.

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::{Collection, Database};

use crate::error::driver::Access;
use crate::error::{Error, Result};
use crate::id::Bounds;
use crate::options::{
    filter, FilterField, Layout, SequenceOptions, SequenceOptionsBuilder, Stores,
};
use crate::store::literal;
use sequence_rules::encoding::{CheckDigit, Encoding};
use sequence_rules::Strategy;

/// The settings a sequence was last used with, as a process that used it recorded them in the
/// collection `<counters>.sequences` (one document per sequence name, `_id` the name), once per
/// process, after its first write to a counter.
///
/// The command line reads them: to refuse what would break a gapless sequence, to show each
/// counter's real limits, and to take a sequence's options from them. A sequence built on a
/// store of its own ([`Sequence::with_store`](crate::Sequence::with_store)) records nothing.
///
/// A record is a reading aid, not a lock: a process that cannot write it (no privilege on the
/// collection) logs a warning under `mongo_sequence::store` and numbers as usual, and two
/// configurations of one name in one counters collection overwrite each other's record.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SequenceRecord {
    /// The sequence's name.
    pub name: String,
    /// Its strategy.
    pub strategy: Strategy,
    /// Whether its numbers are gapless (taken inside the insert's transaction).
    pub gapless: bool,
    /// The first counter value.
    pub start: i64,
    /// The largest counter value: `max`, or what `width` or `digits` leave room for.
    pub max: i64,
    /// The period prefix pattern.
    pub prefix: Option<String>,
    /// The digits of the zero-padded counter part.
    pub width: Option<u8>,
    /// The exact number of digits of every ID.
    pub digits: Option<u8>,
    /// The template of the IDs.
    pub format: Option<String>,
    /// The check digits after the number.
    pub check_digit: Option<CheckDigit>,
    /// How the number is written.
    pub encoding: Encoding,
    /// The Sqids alphabet, if not Sqids' default.
    pub alphabet: Option<String>,
    /// The shortest Sqids ID.
    pub min_length: u32,
    /// The time zone of the periods.
    pub tz: Option<String>,
    /// The scope fields: one counter per scope value.
    pub scope: Vec<String>,
    /// The number of shards of a ranges sequence (0 otherwise).
    pub shards: u32,
    /// The convention of the counter documents.
    pub layout: Layout,
    /// The counter field.
    pub field: String,
    /// What the counter field holds.
    pub stores: Stores,
    /// The filter that finds the counter documents, as text (empty: the layout's).
    pub filter: String,
    /// The name the documents store the ID under.
    pub id_field: String,
    /// The version of this crate that wrote the record.
    pub version: String,
    /// When a process last recorded it.
    pub seen: Option<DateTime>,
}

/// The suffix of the collection of records beside a counters collection.
const SUFFIX: &str = ".sequences";

impl SequenceRecord {
    /// The record of a sequence of `options` whose counter values are `bounds`.
    pub(crate) fn new(options: &SequenceOptions, bounds: Bounds) -> Self {
        // Every option, so that a new one is a compile error here until it is recorded or
        // said to be none of the record's business.
        let SequenceOptions {
            name,
            batch: _, // how many values a process reserves at once
            prefix,
            tz,
            width,
            digits,
            format,
            check_digit,
            encoding,
            alphabet,
            min_length,
            start: _, // recorded as `bounds`, with what `width` and `digits` allow
            max: _,
            strategy,
            shards,
            retries: _, // how often a random draw is made again
            scope,
            counters: _, // the record is kept beside them
            layout,
            field,
            stores,
            filter,
            unique: _, // how inserts are kept unique, not how counters are read
            proxy: _,
            gapless,
            transaction_timeout: _,
            prefetch_at: _,
            write_concern: _,
            id_field,
        } = options;
        SequenceRecord {
            name: name.clone(),
            strategy: *strategy,
            gapless: *gapless,
            start: bounds.start,
            max: bounds.max,
            prefix: prefix.clone(),
            width: *width,
            digits: *digits,
            format: format.clone(),
            check_digit: *check_digit,
            encoding: *encoding,
            alphabet: alphabet.clone(),
            min_length: *min_length,
            tz: tz.clone(),
            scope: scope.clone(),
            shards: if *strategy == Strategy::Ranges {
                *shards
            } else {
                0
            },
            layout: *layout,
            field: field.clone(),
            stores: *stores,
            filter: filter::display(filter),
            id_field: id_field.clone(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            seen: None,
        }
    }

    /// The name of the collection of records beside the counters collection `counters`.
    pub fn collection_name(counters: &str) -> String {
        format!("{counters}{SUFFIX}")
    }

    /// The collection of records beside `counters` in `db`.
    fn collection(db: &Database, counters: &str) -> Collection<Document> {
        db.collection(&Self::collection_name(counters))
    }

    /// The record of the sequence `name` whose counters are in `counters` of `db`, if one was
    /// written.
    pub async fn read(db: &Database, counters: &str, name: &str) -> Result<Option<Self>> {
        let records = Self::collection(db, counters);
        let location = records.namespace().to_string();
        let found = records
            .find_one(doc! { "_id": literal::exactly("_id", &Bson::String(name.to_owned()))? })
            .await
            .map_err(|e| Error::from_driver_on(e, &location, Access::ReadRecords))?;
        found
            .map(|d| Self::from_document(&d, &location))
            .transpose()
    }

    /// Every record beside `counters` in `db`, by name.
    pub async fn read_all(db: &Database, counters: &str) -> Result<Vec<Self>> {
        let records = Self::collection(db, counters);
        let location = records.namespace().to_string();
        let unreadable = |e| Error::from_driver_on(e, &location, Access::ReadRecords);
        let docs: Vec<Document> = records
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .map_err(unreadable)?
            .try_collect()
            .await
            .map_err(unreadable)?;
        docs.iter()
            .map(|d| Self::from_document(d, &location))
            .collect()
    }

    /// Writes the record beside the counters collection `counters` (with its write concern).
    pub(crate) async fn write(&self, counters: &Collection<Document>) -> Result<()> {
        let records = counters
            .client()
            .database(&counters.namespace().db)
            .collection_with_options::<Document>(
                &Self::collection_name(counters.name()),
                mongodb::options::CollectionOptions::builder()
                    .write_concern(counters.write_concern().cloned())
                    .build(),
            );
        let mut set = self.to_document();
        set.remove("_id");
        set.remove("seen");
        records
            .update_one(
                doc! { "_id": literal::exactly("_id", &Bson::String(self.name.clone()))? },
                doc! { "$set": set, "$currentDate": { "seen": true } },
            )
            .upsert(true)
            .await?;
        Ok(())
    }

    /// The record as stored.
    pub fn to_document(&self) -> Document {
        let opt = |v: Option<u8>| v.map_or(Bson::Null, |v| Bson::Int32(i32::from(v)));
        let mut d = doc! {
            "_id": &self.name,
            "strategy": self.strategy.name(),
            "gapless": self.gapless,
            "start": self.start,
            "max": self.max,
            "prefix": self.prefix.clone().map_or(Bson::Null, Bson::String),
            "width": opt(self.width),
            "digits": opt(self.digits),
            "format": self.format.clone().map_or(Bson::Null, Bson::String),
            "check_digit": self.check_digit.map_or(Bson::Null, |c| Bson::from(c.name())),
            "encoding": self.encoding.name(),
            "alphabet": self.alphabet.clone().map_or(Bson::Null, Bson::String),
            "min_length": i64::from(self.min_length),
            "tz": self.tz.clone().map_or(Bson::Null, Bson::String),
            "scope": self.scope.clone(),
            "shards": i64::from(self.shards),
            "layout": self.layout.name(),
            "field": &self.field,
            "stores": self.stores.name(),
            "filter": &self.filter,
            "id_field": &self.id_field,
            "version": &self.version,
        };
        if let Some(seen) = self.seen {
            d.insert("seen", seen);
        }
        d
    }

    /// The record a stored document of `location` holds.
    fn from_document(d: &Document, location: &str) -> Result<Self> {
        let unreadable = |field: &'static str| Error::UnreadableRecord {
            sequence: d.get("_id").map_or_else(String::new, ToString::to_string),
            collection: location.to_owned(),
            field,
        };
        let name = d.get_str("_id").map_err(|_| unreadable("_id"))?.to_owned();
        let text = |key: &'static str| {
            d.get_str(key)
                .map(str::to_owned)
                .map_err(|_| unreadable(key))
        };
        let optional_text = |key: &'static str| match d.get(key) {
            None | Some(Bson::Null) => Ok(None),
            Some(Bson::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(unreadable(key)),
        };
        let integer = |key: &'static str| match d.get(key) {
            Some(Bson::Int32(v)) => Ok(i64::from(*v)),
            Some(Bson::Int64(v)) => Ok(*v),
            _ => Err(unreadable(key)),
        };
        let small = |key: &'static str| match d.get(key) {
            None | Some(Bson::Null) => Ok(None),
            _ => integer(key).and_then(|v| u8::try_from(v).map(Some).map_err(|_| unreadable(key))),
        };
        Ok(SequenceRecord {
            strategy: Strategy::from_name(&text("strategy")?)
                .ok_or_else(|| unreadable("strategy"))?,
            gapless: d.get_bool("gapless").map_err(|_| unreadable("gapless"))?,
            start: integer("start")?,
            max: integer("max")?,
            prefix: optional_text("prefix")?,
            width: small("width")?,
            digits: small("digits")?,
            // Records of versions before these keys lack them.
            format: optional_text("format")?,
            check_digit: match optional_text("check_digit")? {
                Some(name) => {
                    Some(CheckDigit::from_name(&name).ok_or_else(|| unreadable("check_digit"))?)
                }
                None => None,
            },
            encoding: match optional_text("encoding")? {
                Some(name) => Encoding::from_name(&name).ok_or_else(|| unreadable("encoding"))?,
                None => Encoding::Decimal,
            },
            alphabet: optional_text("alphabet")?,
            min_length: match d.get("min_length") {
                None => 0,
                Some(_) => {
                    u32::try_from(integer("min_length")?).map_err(|_| unreadable("min_length"))?
                }
            },
            tz: optional_text("tz")?,
            scope: match d.get_array("scope") {
                Ok(fields) => fields
                    .iter()
                    .map(|f| {
                        f.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| unreadable("scope"))
                    })
                    .collect::<Result<_>>()?,
                Err(_) => return Err(unreadable("scope")),
            },
            shards: u32::try_from(integer("shards")?).map_err(|_| unreadable("shards"))?,
            layout: Layout::from_name(&text("layout")?).ok_or_else(|| unreadable("layout"))?,
            field: text("field")?,
            stores: Stores::from_name(&text("stores")?).ok_or_else(|| unreadable("stores"))?,
            filter: text("filter")?,
            id_field: text("id_field")?,
            version: text("version")?,
            seen: d.get_datetime("seen").ok().copied(),
            name,
        })
    }

    /// The filter's fields, as the record holds them.
    pub fn filter_fields(&self) -> Result<Vec<FilterField>> {
        if self.filter.is_empty() {
            return Ok(Vec::new());
        }
        filter::parse(&self.filter).map_err(|e| Error::InvalidConfig {
            key: "filter",
            message: e.to_string(),
        })
    }

    /// The options the record describes, with counters in `counters`, to refine or build.
    pub fn options(&self, counters: &str) -> Result<SequenceOptionsBuilder> {
        // Every field, so that a new one is a compile error here until it is read back.
        let SequenceRecord {
            name,
            strategy,
            gapless,
            start,
            max,
            prefix,
            width,
            digits,
            format,
            check_digit,
            encoding,
            alphabet,
            min_length,
            tz,
            scope,
            shards,
            layout,
            field,
            stores,
            filter: _, // parsed by `filter_fields`
            id_field,
            version: _,
            seen: _,
        } = self;
        let mut options = SequenceOptions::builder(name.clone())
            .counters(counters)
            .strategy(*strategy)
            .gapless(*gapless)
            .start(*start)
            .max(*max)
            .scope(scope.iter().cloned())
            .layout(*layout)
            .field(field)
            .stores(*stores)
            .filter(self.filter_fields()?)
            .id_field(id_field)
            .encoding(*encoding)
            .min_length(*min_length)
            .edit(|o| {
                o.prefix.clone_from(prefix);
                o.width = *width;
                o.digits = *digits;
                o.format.clone_from(format);
                o.check_digit = *check_digit;
                o.alphabet.clone_from(alphabet);
                o.tz.clone_from(tz);
            });
        if *strategy == Strategy::Ranges {
            options = options.ranges(*shards);
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written() {
        let options = SequenceOptions::builder("invoice")
            .prefix("INV-YYMMDD-")
            .width(4)
            .scope(["tenant"])
            .gapless(true)
            .build();
        let bounds = options.validate().unwrap();
        let mut record = SequenceRecord::new(&options, bounds);
        assert_eq!(
            (record.start, record.max),
            (1, 9999),
            "width 4 leaves 9,999"
        );
        record.seen = Some(DateTime::from_millis(1_764_000_000_000));
        let read =
            SequenceRecord::from_document(&record.to_document(), "app.counters.sequences").unwrap();
        assert_eq!(read, record);
        let rebuilt = read.options("counters").unwrap().build();
        assert_eq!(rebuilt.validate().unwrap(), bounds);
        assert!(rebuilt.gapless);
        assert_eq!(rebuilt.prefix.as_deref(), Some("INV-YYMMDD-"));
    }

    #[test]
    fn a_record_of_another_shape_is_an_error_naming_the_field() {
        let mut d = SequenceRecord::new(
            &SequenceOptions::builder("a").build(),
            Bounds::new(1, 10).unwrap(),
        )
        .to_document();
        d.insert("strategy", "teleport");
        let err = SequenceRecord::from_document(&d, "app.counters.sequences").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the record of sequence \"a\" in `app.counters.sequences` has no readable \
             `strategy`: another version of this crate or a hand edit wrote it; delete the \
             record, and the next process that uses the sequence writes it again"
        );
    }
}
