//! [`StoredCounter`]: a counter document as found in a counters collection, decoded from any
//! named layout or from a filter of one's own, for the tools that list counters.

use mongodb::bson::{doc, Bson, Document};
use sequence_rules::filter::{self, FilterField, FilterValue};

use super::{CounterLayout, Finder};
use crate::id::bson_integer;
use crate::options::{Layout, Stores};

/// A counter document as found in a counters collection: which counter it is, and what it
/// holds. Decoded from any named layout by [`StoredCounter::decode`]; this is how operators'
/// tools list counters.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StoredCounter {
    /// The sequence name (of typegoose's and mongoose-auto-increment's layouts: the model's).
    pub name: String,
    /// The canonical period (`"20251122"`), for a counter of a period.
    pub period: Option<String>,
    /// The scope values (of mongoose-sequence's layout: its `reference_value`; of
    /// mongoose-auto-increment's: `{ groupingField: <group> }` when it has one), for a scoped
    /// counter.
    pub scope: Option<Document>,
    /// The shard, for a counter of a ranges sequence.
    pub shard: Option<i64>,
    /// The layout the document is in.
    pub layout: Layout,
    /// The last issued value (read from the layout's counter field, or the one given to
    /// [`decode_with`](Self::decode_with)), or why it cannot be read.
    pub last: std::result::Result<i64, String>,
}

impl StoredCounter {
    /// Decodes a counter document of the default layout (`{ _id: <key>, seq }`),
    /// mongoose-sequence's (`{ id, reference_value, seq }`), typegoose's (`{ modelName,
    /// field, count }`) or mongoose-auto-increment's (`{ model, field, count }`), each with its
    /// layout's counter field; `None` for a document that is none of them.
    pub fn decode(doc: &Document) -> Option<Self> {
        Self::decode_with(doc, None, Stores::LastIssued)
    }

    /// Like [`decode`](Self::decode), for counters whose value is in `field` (the option
    /// `field`; `None`: the layout's) and holds what `stores` says: `{ _id: "invoice", COUNT:
    /// 42 }` with `"COUNT"` and [`Stores::NextFree`] has 41 as its last issued value.
    ///
    /// ```
    /// use sequence_runtime::{options::Stores, store::StoredCounter};
    /// use mongodb::bson::doc;
    /// let found = doc! { "_id": "invoice", "COUNT": 42 };
    /// let counter = StoredCounter::decode_with(&found, Some("COUNT"), Stores::NextFree).unwrap();
    /// assert_eq!(counter.last, Ok(41));
    /// ```
    pub fn decode_with(doc: &Document, field: Option<&str>, stores: Stores) -> Option<Self> {
        Self::decode_named(doc, field, stores)
    }

    /// Decodes a counter document that `filter` finds (a convention of one's own), its value in
    /// `field`, holding what `stores` says; `None` for a document whose constant fields do not
    /// match. Its name is the field of `name` (else the filter as written), its period and
    /// scope values the values its `period` and `scope(...)` fields hold, as stored.
    ///
    /// ```
    /// use sequence_runtime::options::{filter, Stores};
    /// use sequence_runtime::store::StoredCounter;
    /// use mongodb::bson::doc;
    /// let seed = filter::parse("prefix = period as number").unwrap();
    /// let found = doc! { "_id": 1, "prefix": 251125, "count": 7 };
    /// let counter = StoredCounter::decode_filter(&found, &seed, "count", Stores::LastIssued).unwrap();
    /// assert_eq!((counter.period.as_deref(), counter.last), (Some("251125"), Ok(7)));
    /// ```
    pub fn decode_filter(
        doc: &Document,
        filter: &[FilterField],
        field: &str,
        stores: Stores,
    ) -> Option<Self> {
        let mut counter = StoredCounter {
            name: filter::display(filter),
            period: None,
            scope: None,
            shard: None,
            layout: Layout::Default,
            last: CounterLayout {
                field: field.to_owned(),
                stores,
                finder: Finder::Id,
            }
            .read_last(doc),
        };
        for f in filter {
            let value = doc.get(&f.field);
            let constant = match &f.value {
                FilterValue::Text(t) => Some(Bson::String(t.clone())),
                FilterValue::Integer(n) => Some(Bson::Int64(*n)),
                FilterValue::Bool(b) => Some(Bson::Boolean(*b)),
                _ => None,
            };
            if let Some(constant) = constant {
                let same = value.is_some_and(|v| {
                    v == &constant
                        || bson_integer(v).is_some_and(|v| Some(v) == bson_integer(&constant))
                });
                if !same {
                    return None;
                }
                continue;
            }
            let value = value?;
            match &f.value {
                FilterValue::Name => counter.name = value.as_str()?.to_owned(),
                FilterValue::Period | FilterValue::PeriodNumber => {
                    counter.period = Some(match value {
                        Bson::String(s) => s.clone(),
                        other => bson_integer(other)?.to_string(),
                    });
                }
                FilterValue::Scope(name) => {
                    counter
                        .scope
                        .get_or_insert_with(Document::new)
                        .insert(name.clone(), value.clone());
                }
                _ => {}
            }
        }
        Some(counter)
    }

    /// [`decode_with`](Self::decode_with)'s work: the layouts that say themselves what they are.
    fn decode_named(doc: &Document, field: Option<&str>, stores: Stores) -> Option<Self> {
        let read = |layout: Layout| {
            CounterLayout {
                field: field.unwrap_or(layout.field()).to_owned(),
                stores,
                finder: Finder::Id,
            }
            .read_last(doc)
        };
        let unscoped = |name: &str, layout: Layout, scope: Option<Document>| StoredCounter {
            name: name.to_owned(),
            period: None,
            scope,
            shard: None,
            layout,
            last: read(layout),
        };
        if let (Ok(name), Some(reference)) = (doc.get_str("id"), doc.get("reference_value")) {
            let scope = match reference {
                Bson::Document(d) => Some(d.clone()),
                _ => None,
            };
            return Some(StoredCounter {
                shard: scope
                    .as_ref()
                    .and_then(|s| s.get("shard"))
                    .and_then(bson_integer),
                scope: scope.filter(|s| !s.contains_key("shard")),
                ..unscoped(name, Layout::MongooseSequence, None)
            });
        }
        if let (Ok(name), Ok(_)) = (doc.get_str("modelName"), doc.get_str("field")) {
            return Some(unscoped(name, Layout::Typegoose, None));
        }
        if let (Ok(name), Ok(_)) = (doc.get_str("model"), doc.get_str("field")) {
            let group = doc
                .get_str("groupingField")
                .ok()
                .filter(|g| !g.is_empty())
                .map(|g| doc! { "groupingField": g });
            return Some(unscoped(name, Layout::MongooseAutoIncrement, group));
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
            layout: Layout::Default,
            last: read(Layout::Default),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(mongoose.layout, Layout::MongooseSequence);
        assert_eq!(
            (mongoose.scope, mongoose.last),
            (Some(doc! { "tenant": "a" }), Ok(9))
        );
        let corrupt = StoredCounter::decode(&doc! { "_id": "x", "seq": "nine" }).unwrap();
        assert!(corrupt.last.is_err());
        assert!(StoredCounter::decode(&doc! { "_id": 5, "seq": 1 }).is_none());
    }
}
