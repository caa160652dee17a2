//! How the stores address and read the counter documents of a sequence (its `layout`, `field`
//! and `stores`), and how a counter document of any layout is decoded ([`StoredCounter`]).

use mongodb::bson::{doc, Bson, Document};
use sequence_rules::defaults;

use crate::id::{bson_integer, CounterKey};
use crate::options::{Layout, SequenceOptions, Stores};

/// The shape of a sequence's counter documents, as the stores use it: how they are found
/// (`layout`), the counter field's name (`field`) and what it holds (`stores`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CounterLayout {
    pub(crate) field: String,
    pub(crate) stores: Stores,
    mongoose: bool,
}

impl CounterLayout {
    /// The layout of the default options: `{ _id: <key>, seq: <last issued> }`.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        CounterLayout {
            field: defaults::COUNTER_FIELD.to_owned(),
            stores: Stores::LastIssued,
            mongoose: false,
        }
    }

    /// mongoose-sequence's layout, field `seq`.
    #[cfg(test)]
    pub(crate) fn mongoose() -> Self {
        CounterLayout {
            mongoose: true,
            ..Self::new()
        }
    }

    /// The layout `options` describe.
    pub(crate) fn of(options: &SequenceOptions) -> Self {
        CounterLayout {
            field: options.field.clone(),
            stores: options.stores,
            mongoose: options.layout == Layout::Mongoose,
        }
    }

    /// Whether counters are found as mongoose-sequence finds them.
    pub(crate) fn is_mongoose(&self) -> bool {
        self.mongoose
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

    /// Stored value minus last issued value.
    pub(crate) fn offset(&self) -> i64 {
        self.stores.offset()
    }

    /// The filter that selects the counter document of `key`, with its fixed fields (so that
    /// an upsert writes them, and a document holding other values does not match).
    pub(crate) fn key_filter(&self, key: &CounterKey) -> Document {
        let mut filter = self.id_filter(key);
        filter.extend(key.fields().clone());
        filter
    }

    /// The filter that selects the document of `key`, whatever its other fields.
    pub(crate) fn id_filter(&self, key: &CounterKey) -> Document {
        if !self.mongoose {
            return doc! { "_id": key.value().clone() };
        }
        let (id, reference) = match (key.name(), key.value()) {
            (Some(name), _) => (
                name.to_owned(),
                key.scope()
                    .map_or(Bson::Null, |s| Bson::Document(s.document())),
            ),
            // A composite key of other parts: `seq` names the counter, the rest is the
            // reference value.
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
        doc! { "id": id, "reference_value": reference }
    }

    /// The filter that selects every counter document of sequence `name` whose period is
    /// before `period`, in every scope.
    pub(crate) fn periods_before_filter(&self, name: &str, period: &str) -> Document {
        doc! { "_id.seq": name, "_id.period": { "$lt": period } }
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

/// A counter document as found in a counters collection: which counter it is, and what it
/// holds. Decoded from either layout by [`StoredCounter::decode`]; this is how operators'
/// tools list counters.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StoredCounter {
    /// The sequence name.
    pub name: String,
    /// The canonical period (`"20251122"`), for a counter of a period.
    pub period: Option<String>,
    /// The scope values (of the mongoose layout: its `reference_value`), for a scoped counter.
    pub scope: Option<Document>,
    /// The shard, for a counter of a ranges sequence.
    pub shard: Option<i64>,
    /// Whether the document is in mongoose-sequence's layout.
    pub mongoose: bool,
    /// The last issued value (read from the field `seq`, or the one given to
    /// [`decode_with`](Self::decode_with)), or why it cannot be read.
    pub last: std::result::Result<i64, String>,
}

impl StoredCounter {
    /// Decodes a counter document of the default layout (`{ _id: <key>, seq }`) or of
    /// mongoose-sequence's (`{ id, reference_value, seq }`); `None` for a document that is
    /// neither.
    pub fn decode(doc: &Document) -> Option<Self> {
        Self::decode_with(doc, defaults::COUNTER_FIELD, Stores::LastIssued)
    }

    /// Like [`decode`](Self::decode), for counters whose value is in `field` and holds what
    /// `stores` says (the options `field` and `stores`): `{ _id: "invoice", COUNT: 42 }` with
    /// `"COUNT"` and [`Stores::NextFree`] has 41 as its last issued value.
    ///
    /// ```
    /// use sequence_runtime::{options::Stores, store::StoredCounter};
    /// use mongodb::bson::doc;
    /// let found = doc! { "_id": "invoice", "COUNT": 42 };
    /// let counter = StoredCounter::decode_with(&found, "COUNT", Stores::NextFree).unwrap();
    /// assert_eq!(counter.last, Ok(41));
    /// ```
    pub fn decode_with(doc: &Document, field: &str, stores: Stores) -> Option<Self> {
        let layout = |mongoose| CounterLayout {
            field: field.to_owned(),
            stores,
            mongoose,
        };
        if let (Ok(name), Some(reference)) = (doc.get_str("id"), doc.get("reference_value")) {
            let scope = match reference {
                Bson::Document(d) => Some(d.clone()),
                _ => None,
            };
            return Some(StoredCounter {
                name: name.to_owned(),
                period: None,
                shard: scope
                    .as_ref()
                    .and_then(|s| s.get("shard"))
                    .and_then(bson_integer),
                scope: scope.filter(|s| !s.contains_key("shard")),
                mongoose: true,
                last: layout(true).read_last(doc),
            });
        }
        let (name, period, scope, shard) = match doc.get("_id")? {
            Bson::String(name) => (name.clone(), None, None, None),
            Bson::Document(id) => (
                id.get_str("seq").ok()?.to_owned(),
                id.get_str("period").ok().map(str::to_owned),
                id.get_document("scope").ok().cloned(),
                id.get("shard").and_then(bson_integer),
            ),
            _ => return None,
        };
        Some(StoredCounter {
            name,
            period,
            scope,
            shard,
            mongoose: false,
            last: layout(false).read_last(doc),
        })
    }
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
    fn counter_documents_of_both_layouts_decode() {
        let plain = StoredCounter::decode(&doc! { "_id": "userid", "seq": 41_i64 }).unwrap();
        assert_eq!(
            (plain.name.as_str(), plain.last.clone()),
            ("userid", Ok(41))
        );
        let periodic =
            doc! { "_id": { "seq": "inv", "period": "20251122", "scope": { "t": "a" } }, "seq": 3 };
        let periodic = StoredCounter::decode(&periodic).unwrap();
        assert_eq!(periodic.period.as_deref(), Some("20251122"));
        assert_eq!(periodic.scope, Some(doc! { "t": "a" }));
        let shard = doc! { "_id": { "seq": "acct", "shard": 7 }, "lo": 1, "hi": 9, "seq": 4 };
        assert_eq!(StoredCounter::decode(&shard).unwrap().shard, Some(7));
        let mongoose = doc! { "id": "order", "reference_value": { "tenant": "a" }, "seq": 9 };
        let mongoose = StoredCounter::decode(&mongoose).unwrap();
        assert!(mongoose.mongoose);
        assert_eq!(
            (mongoose.scope, mongoose.last),
            (Some(doc! { "tenant": "a" }), Ok(9))
        );
        let corrupt = StoredCounter::decode(&doc! { "_id": "x", "seq": "nine" }).unwrap();
        assert!(corrupt.last.is_err());
        assert!(StoredCounter::decode(&doc! { "_id": 5, "seq": 1 }).is_none());
    }

    #[test]
    fn mongoose_keys() {
        use crate::id::Scope;
        let l = CounterLayout::mongoose();
        assert!(l.is_mongoose() && !CounterLayout::new().is_mongoose());
        assert_eq!(
            l.key_filter(&CounterKey::named("order")),
            doc! { "id": "order", "reference_value": Bson::Null }
        );
        let scope = Scope::new().with("tenant", "a").with("branch", 3);
        assert_eq!(
            l.key_filter(&CounterKey::of("order", None, Some(&scope))),
            doc! { "id": "order", "reference_value": { "branch": 3, "tenant": "a" } }
        );
        assert_eq!(
            CounterLayout::new().key_filter(&CounterKey::named("order")),
            doc! { "_id": "order" }
        );
    }
}
