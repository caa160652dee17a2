//! How the stores address and read the counter documents of a [`CounterLayout`].

use mongo_sequence_rules::limits::exact_integer;
use mongodb::bson::{doc, Bson, Document};

use crate::options::{CounterLayout, Keys, Stores};
use crate::values::CounterKey;

impl CounterLayout {
    /// Stored value minus last issued value.
    pub(crate) fn offset(&self) -> i64 {
        match self.stores {
            Stores::LastIssued => 0,
            Stores::NextFree => 1,
        }
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
        match self.keys {
            Keys::Id => doc! { "_id": key.value().clone() },
            Keys::Mongoose => {
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
        }
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
            Some(Bson::Int32(v)) => i64::from(*v),
            Some(Bson::Int64(v)) => *v,
            Some(Bson::Double(v)) if exact_integer(*v).is_some() => *v as i64,
            Some(other) => {
                return Err(format!(
                    "the field `{}` holds {:?} ({:?}) instead of an integer",
                    self.field,
                    other,
                    other.element_type()
                ))
            }
        };
        stored
            .checked_sub(self.offset())
            .ok_or_else(|| format!("the field `{}` holds {stored}", self.field))
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
        let l = CounterLayout::new().field("COUNT").stores(Stores::NextFree);
        assert_eq!(l.read_last(&doc! { "COUNT": 42 }), Ok(41));
        assert!(l.read_last(&doc! { "COUNT": i64::MIN }).is_err());
    }

    #[test]
    fn mongoose_keys() {
        use crate::values::Scope;
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
