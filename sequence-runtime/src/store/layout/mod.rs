//! How the stores address and read the counter documents of a sequence (its `layout` or
//! `filter`, `field` and `stores`). How a counter document of any named layout is decoded
//! ([`StoredCounter`]) is in `stored_counter.rs`.

use mongodb::bson::{doc, Bson, Document};
use sequence_rules::filter::{self, FilterField, FilterValue};
use sequence_rules::pattern::Pattern;
use sequence_rules::Unique;

use super::literal;
use crate::error::{Error, Result};
use crate::id::{bson_integer, canonical_start, Bounds, CounterKey, Scope};
use crate::options::{Layout, SequenceOptions, Stores};

mod stored_counter;

pub use stored_counter::StoredCounter;

/// The shape of a sequence's counter documents, as the stores use it: how they are found
/// (`layout` or `filter`), the counter field's name (`field`) and what it holds (`stores`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CounterLayout {
    pub(crate) field: String,
    pub(crate) stores: Stores,
    finder: Finder,
}

/// How the counter document of a key is found.
#[derive(Clone, Debug, PartialEq)]
enum Finder {
    /// By `_id`: the key's value.
    Id,
    /// mongoose-sequence's `{ id, reference_value }`.
    MongooseSequence,
    /// typegoose's `{ field: <ID field>, modelName: <name> }`.
    Typegoose { id_field: String },
    /// mongoose-auto-increment's `{ model: <name>, field: <ID field>, groupingField }`.
    AutoIncrement { id_field: String },
    /// A filter of one's own, the period rendered with `pattern`.
    Filter {
        fields: Vec<FilterField>,
        id_field: String,
        pattern: Option<Pattern>,
    },
}

/// The unique index a layout's counters need, so that two concurrent first upserts cannot
/// create two counter documents (and the foreign library's own declaration finds it built).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KeyIndex {
    /// The keys, in the library's order.
    pub(crate) keys: Document,
    /// The index's name where the library names it (else the server's default).
    pub(crate) name: Option<&'static str>,
    /// Whose convention needs it, for messages.
    pub(crate) needed_by: String,
    /// The filter of the documents of this layout in a collection (those that have the fields
    /// that find a counter), for telling duplicates from documents of another layout.
    pub(crate) members: Document,
}

impl KeyIndex {
    /// The keys as written, for messages: `{ field: 1, modelName: 1 } (unique)`.
    pub(crate) fn describe(&self) -> String {
        format!("{} (unique)", self.keys)
    }
}

impl CounterLayout {
    /// The layout of the default options: `{ _id: <key>, seq: <last issued> }`.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        CounterLayout {
            field: sequence_rules::defaults::COUNTER_FIELD.to_owned(),
            stores: Stores::LastIssued,
            finder: Finder::Id,
        }
    }

    /// mongoose-sequence's layout, field `seq`.
    #[cfg(test)]
    pub(crate) fn mongoose() -> Self {
        CounterLayout {
            finder: Finder::MongooseSequence,
            ..Self::new()
        }
    }

    /// The layout `options` describe.
    pub(crate) fn of(options: &SequenceOptions) -> Self {
        let id_field = options.id_field.clone();
        let finder = if !options.filter.is_empty() {
            Finder::Filter {
                fields: options.filter.clone(),
                id_field,
                pattern: options
                    .prefix
                    .as_deref()
                    .and_then(|p| Pattern::parse(p).ok()),
            }
        } else {
            match options.layout {
                Layout::MongooseSequence => Finder::MongooseSequence,
                Layout::Typegoose => Finder::Typegoose { id_field },
                Layout::MongooseAutoIncrement => Finder::AutoIncrement { id_field },
                _ => Finder::Id,
            }
        };
        CounterLayout {
            field: options.field.clone(),
            stores: options.stores,
            finder,
        }
    }

    #[cfg(test)]
    pub(crate) fn field(mut self, field: &str) -> Self {
        self.field = field.to_owned();
        self
    }

    #[cfg(test)]
    pub(crate) fn stores(mut self, stores: Stores) -> Self {
        self.stores = stores;
        self
    }

    /// Checks that every value of `scope` can be matched as data where the counters and
    /// claims of a sequence of `options` hold it (the checks [`id_filter`](Self::id_filter)
    /// and the claims make, made before anything is reserved): a filter's `scope(...)` field
    /// holds neither an array nor null, mongoose-auto-increment's group is a value with a
    /// text of its own, and a claim's key (`unique = "proxy"`) holds no `$`-prefixed field
    /// name. Allocates nothing for the layouts that check nothing.
    pub(crate) fn check_scope(options: &SequenceOptions, scope: &Scope) -> Result<()> {
        for f in &options.filter {
            if let FilterValue::Scope(name) = &f.value {
                if let Some(value) = scope.get(name) {
                    literal::exactly(name, value)?;
                }
            }
        }
        if options.filter.is_empty() && options.layout == Layout::MongooseAutoIncrement {
            for (field, value) in scope.fields() {
                group_text(field, value)?;
            }
        }
        if options.unique == Unique::Proxy {
            for (field, value) in scope.fields() {
                literal::key(field, value)?;
            }
        }
        Ok(())
    }

    /// The library whose counters start at -1 and number from 0 (typegoose's and
    /// mongoose-auto-increment's layouts), if this layout is one of theirs.
    pub(crate) fn numbers_from_zero(&self) -> Option<&'static str> {
        match self.finder {
            Finder::Typegoose { .. } => Some(Layout::Typegoose.library()),
            Finder::AutoIncrement { .. } => Some(Layout::MongooseAutoIncrement.library()),
            _ => None,
        }
    }

    /// Stored value minus last issued value.
    pub(crate) fn offset(&self) -> i64 {
        self.stores.offset()
    }

    /// The value a counter of `bounds` stores before it has issued any: `start - 1`, plus the
    /// offset.
    pub(crate) fn stored_before_start(&self, bounds: Bounds) -> i64 {
        bounds.before_start() + self.offset()
    }

    /// Whether a counter document is found by its `_id` alone (the key), as in this crate's
    /// layout.
    pub(crate) fn finds_by_id(&self) -> bool {
        matches!(self.finder, Finder::Id)
    }

    /// The unique index the counters need, for the layouts that find them by other fields than
    /// `_id`.
    pub(crate) fn key_index(&self) -> Option<KeyIndex> {
        let (keys, name, needed_by) = match &self.finder {
            Finder::Id => return None,
            Finder::MongooseSequence => (
                doc! { "id": 1, "reference_value": 1 },
                None,
                "mongoose-sequence's layout".to_owned(),
            ),
            Finder::Typegoose { .. } => (
                doc! { "field": 1, "modelName": 1 },
                Some("field_1_modelName_1"),
                "typegoose's layout".to_owned(),
            ),
            Finder::AutoIncrement { .. } => (
                doc! { "field": 1, "groupingField": 1, "model": 1 },
                Some("field_1_groupingField_1_model_1"),
                "mongoose-auto-increment's layout".to_owned(),
            ),
            Finder::Filter { fields, .. } => (
                fields
                    .iter()
                    .map(|f| (f.field.clone(), Bson::Int32(1)))
                    .collect(),
                None,
                format!("the filter `{}`", filter::display(fields)),
            ),
        };
        let exists = |fields: &[&str]| -> Document {
            fields
                .iter()
                .map(|f| ((*f).to_owned(), Bson::Document(doc! { "$exists": true })))
                .collect()
        };
        let members = match &self.finder {
            Finder::Id => return None,
            Finder::MongooseSequence => exists(&["id", "reference_value"]),
            Finder::Typegoose { .. } => exists(&["field", "modelName"]),
            // The original plugin's counters have no `groupingField`.
            Finder::AutoIncrement { .. } => exists(&["field", "model"]),
            Finder::Filter { fields, .. } => {
                exists(&fields.iter().map(|f| f.field.as_str()).collect::<Vec<_>>())
            }
        };
        Some(KeyIndex {
            keys,
            name,
            needed_by,
            members,
        })
    }

    /// Whether two documents can match the filter of one key despite the unique index (the
    /// counters of mongoose-auto-increment without a group match `groupingField` missing or
    /// `""`): the store then checks a counter once before it first uses it.
    pub(crate) fn may_match_twice(&self, key: &CounterKey) -> bool {
        matches!(self.finder, Finder::AutoIncrement { .. }) && key.scope().is_none()
    }

    /// The filter that selects the counter document of `key`, with its fixed fields (so that
    /// an upsert writes them, and a document holding other values does not match).
    pub(crate) fn key_filter(&self, key: &CounterKey) -> Result<Document> {
        let mut filter = self.id_filter(key)?;
        filter.extend(key.fields().clone());
        Ok(filter)
    }

    /// The filter that selects the document of `key`, whatever its other fields: every value
    /// of the key passes [`literal`], so that it matches as data, or is refused.
    pub(crate) fn id_filter(&self, key: &CounterKey) -> Result<Document> {
        Ok(match &self.finder {
            Finder::Id => doc! { "_id": literal::key("_id", key.value())? },
            Finder::MongooseSequence => mongoose_filter(key)?,
            Finder::Typegoose { id_field } => doc! {
                "field": literal::exactly("field", &Bson::String(id_field.clone()))?,
                "modelName": literal::exactly("modelName", &Bson::String(key_name(key)))?,
            },
            Finder::AutoIncrement { id_field } => {
                let group = match key.scope().and_then(|s| s.fields().next()) {
                    Some((field, value)) => {
                        literal::exactly(field, &Bson::String(group_text(field, value)?))?
                    }
                    // The original plugin's documents have no `groupingField`; the fork's
                    // (and this crate's) have `""`.
                    None => Bson::Document(doc! { "$in": ["", Bson::Null] }),
                };
                doc! {
                    "model": literal::exactly("model", &Bson::String(key_name(key)))?,
                    "field": literal::exactly("field", &Bson::String(id_field.clone()))?,
                    "groupingField": group,
                }
            }
            Finder::Filter {
                fields,
                id_field,
                pattern,
            } => {
                let mut filter = Document::new();
                for f in fields {
                    let value = match &f.value {
                        FilterValue::Scope(name) => {
                            let value = key.scope().and_then(|s| s.get(name)).ok_or_else(|| {
                                Error::InvalidArgument {
                                    argument: "scope",
                                    reason: format!(
                                        "counter `{key}` has no value for the scope field \
                                         `{name}`, which the filter's field `{}` holds",
                                        f.field
                                    ),
                                }
                            })?;
                            literal::exactly(name, value)?
                        }
                        other => literal::exactly(
                            &f.field,
                            &filter_value(other, key, id_field, pattern.as_ref()),
                        )?,
                    };
                    filter.insert(f.field.clone(), value);
                }
                filter
            }
        })
    }

    /// The fields a counter document of this layout gets when it is created by an update
    /// whose filter does not say their value: mongoose-auto-increment's `groupingField: ""`.
    /// As the stages of a pipeline update (`{ $ifNull: [<field>, <value>] }`, which keeps a
    /// value already stored), and as plain values for `$setOnInsert`.
    pub(crate) fn on_insert(&self, key: &CounterKey) -> Document {
        match &self.finder {
            Finder::AutoIncrement { .. } if key.scope().is_none() => doc! { "groupingField": "" },
            _ => Document::new(),
        }
    }

    /// The filter that selects every counter document of sequence `name` whose period is
    /// before `period` (canonical), in every scope; `Err` with why, for a layout whose
    /// documents cannot be told apart by period in one query.
    pub(crate) fn periods_before_filter(&self, name: &str, period: &str) -> Result<Document> {
        let Finder::Filter {
            fields,
            id_field,
            pattern,
        } = &self.finder
        else {
            return Ok(doc! {
                "_id.seq": literal::exactly("_id.seq", &Bson::String(name.to_owned()))?,
                "_id.period": { "$lt": period },
            });
        };
        if !pattern.as_ref().is_some_and(Pattern::is_chronological) {
            return Err(Error::InvalidArgument {
                argument: "before",
                reason: format!(
                    "the periods of `{name}`'s filter do not sort by time (its `prefix` is not \
                     written from years to hours), so no query finds the periods before another"
                ),
            });
        }
        let key = CounterKey::of(name.to_owned(), Some(period), None);
        let mut filter = Document::new();
        for f in fields {
            let value = match &f.value {
                FilterValue::Scope(_) => continue,
                FilterValue::Period | FilterValue::PeriodNumber => {
                    let before = filter_value(&f.value, &key, id_field, pattern.as_ref());
                    Bson::Document(doc! { "$lt": before })
                }
                other => literal::exactly(
                    &f.field,
                    &filter_value(other, &key, id_field, pattern.as_ref()),
                )?,
            };
            filter.insert(f.field.clone(), value);
        }
        Ok(filter)
    }

    /// Reads the stored counter as a last-issued value, or says why it cannot.
    pub(crate) fn read_last(&self, doc: &Document) -> std::result::Result<i64, String> {
        let stored = match doc.get(&self.field) {
            None => return Err(format!("the field `{}` is missing", self.field)),
            Some(value) => bson_integer(value).ok_or_else(|| {
                format!(
                    "the field `{}` holds {:?} ({:?}) instead of an integer",
                    self.field,
                    value,
                    value.element_type()
                )
            })?,
        };
        stored
            .checked_sub(self.offset())
            .ok_or_else(|| format!("the field `{}` holds {stored}", self.field))
    }
}

/// What a field of a filter that is not a scope value holds for `key`.
fn filter_value(
    value: &FilterValue,
    key: &CounterKey,
    id_field: &str,
    pattern: Option<&Pattern>,
) -> Bson {
    match value {
        FilterValue::Text(t) => Bson::String(t.clone()),
        FilterValue::Integer(n) => integer(*n),
        FilterValue::Bool(b) => Bson::Boolean(*b),
        FilterValue::Name => Bson::String(key_name(key)),
        FilterValue::IdField => Bson::String(id_field.to_owned()),
        FilterValue::Period => Bson::String(rendered(key, pattern)),
        FilterValue::PeriodNumber => {
            let text = rendered(key, pattern);
            text.parse().map_or(Bson::String(text), integer)
        }
        // Taken from the key's scope by the caller.
        FilterValue::Scope(_) => Bson::Null,
    }
}

/// mongoose-sequence's filter of `key`: `{ id: <name>, reference_value: <scope or null> }`.
fn mongoose_filter(key: &CounterKey) -> Result<Document> {
    let (id, reference) = match (key.name(), key.value()) {
        (Some(name), _) => (
            name.to_owned(),
            key.scope()
                .map_or(Bson::Null, |s| Bson::Document(s.document())),
        ),
        // A composite key of other parts: `seq` names the counter, the rest is the reference
        // value.
        (None, Bson::Document(d)) => {
            let mut rest = d.clone();
            let id = match rest.remove("seq") {
                Some(Bson::String(s)) => s,
                _ => key.to_string(),
            };
            let reference = if rest.is_empty() {
                Bson::Null
            } else {
                Bson::Document(rest)
            };
            (id, reference)
        }
        (None, _) => (key.to_string(), Bson::Null),
    };
    let reference = match reference {
        // mongoose-sequence's own value for a counter without a scope.
        Bson::Null => Bson::Null,
        scope => literal::exactly("reference_value", &scope)?,
    };
    Ok(doc! { "id": literal::exactly("id", &Bson::String(id))?, "reference_value": reference })
}

/// The counter's name, as the layouts that store it as a value hold it.
fn key_name(key: &CounterKey) -> String {
    key.name().map_or_else(|| key.to_string(), str::to_owned)
}

/// An integer as a JavaScript or Python driver writes it: 32 bits where it fits.
fn integer(n: i64) -> Bson {
    i32::try_from(n).map_or(Bson::Int64(n), Bson::Int32)
}

/// mongoose-plugin-autoinc's `groupingField`: the group's value as text (`String(value)`), or
/// [`Error::UnmatchableValue`] for a value of `field` whose text is not its own: null (`""`,
/// the counter without a group), a document, an array or a pattern.
pub(crate) fn group_text(field: &str, value: &Bson) -> Result<String> {
    Ok(match value {
        Bson::String(s) => s.clone(),
        Bson::ObjectId(id) => id.to_hex(),
        Bson::Int32(n) => n.to_string(),
        Bson::Int64(n) => n.to_string(),
        Bson::Boolean(b) => b.to_string(),
        Bson::Double(d) if d.is_finite() => Bson::Double(*d).to_string(),
        other => {
            let reason = if matches!(other, Bson::Null | Bson::Undefined) {
                "mongoose-auto-increment's layout stores the group as text, and null is `\"\"`, \
                 the counter without a group"
            } else {
                "mongoose-auto-increment's layout stores the group as text (`String(value)` of \
                 mongoose-plugin-autoinc), which only strings, numbers, booleans and ObjectIds \
                 have as their own"
            };
            return Err(literal::refused(field, other, reason));
        }
    })
}

/// The period of `key` as `pattern` renders it (empty for a key without one).
fn rendered(key: &CounterKey, pattern: Option<&Pattern>) -> String {
    key.period()
        .and_then(canonical_start)
        .zip(pattern)
        .map_or_else(String::new, |(start, pattern)| pattern.render(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_integer_form() {
        let l = CounterLayout::new();
        assert_eq!(l.read_last(&doc! { "seq": 41_i32 }), Ok(41));
        assert_eq!(l.read_last(&doc! { "seq": 41_i64 }), Ok(41));
        assert_eq!(l.read_last(&doc! { "seq": 41.0 }), Ok(41));
        assert!(l.read_last(&doc! { "seq": 41.5 }).is_err());
        assert!(l
            .read_last(&doc! { "seq": "41" })
            .unwrap_err()
            .contains("instead of an integer"));
        assert!(l.read_last(&doc! {}).unwrap_err().contains("missing"));
    }

    #[test]
    fn next_free_is_one_ahead() {
        let l = CounterLayout::new()
            .field("COUNT")
            .stores(crate::options::Stores::NextFree);
        assert_eq!(l.read_last(&doc! { "COUNT": 42 }), Ok(41));
        assert!(l.read_last(&doc! { "COUNT": i64::MIN }).is_err());
    }

    #[test]
    fn mongoose_keys() {
        use crate::id::Scope;
        let l = CounterLayout::mongoose();
        assert!(l.key_index().is_some() && CounterLayout::new().key_index().is_none());
        assert_eq!(
            l.key_filter(&CounterKey::named("order")).unwrap(),
            doc! { "id": "order", "reference_value": Bson::Null }
        );
        let scope = Scope::new().with("tenant", "a").with("branch", 3);
        assert_eq!(
            l.key_filter(&CounterKey::of("order", None, Some(&scope)))
                .unwrap(),
            doc! { "id": "order", "reference_value": { "branch": 3, "tenant": "a" } }
        );
        assert_eq!(
            CounterLayout::new()
                .key_filter(&CounterKey::named("order"))
                .unwrap(),
            doc! { "_id": "order" }
        );
    }
}
