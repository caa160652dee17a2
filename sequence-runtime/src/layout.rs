//! Where and how a counter document stores its value.

use mongodb::bson::{doc, Bson, Document};

use crate::error::Result;
use crate::key::CounterKey;
use crate::names::check_field_name;

/// What the counter field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Stores {
    /// The last value issued (`{ seq: 41 }` means 41 was issued and 42 comes next), as in the
    /// MongoDB documentation's counters collection and mongoose-sequence.
    #[default]
    LastIssued,
    /// The next free value (`{ COUNT: 42 }` means 42 comes next), as in counters that are read
    /// before they are incremented.
    NextFree,
}

/// How a counter document is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Keys {
    /// By `_id` (the key's value).
    #[default]
    Id,
    /// By mongoose-sequence's `{ id, reference_value }`.
    Mongoose,
}

/// The shape of the counter documents: the counter field's name and what it stores.
///
/// The default is `{ _id: <name>, seq: <last issued> }`. Counters written by existing code keep
/// working when the layout says what that code wrote:
///
/// ```
/// # use mongo_sequence_runtime::{CounterLayout, Stores};
/// // { _id: "invoice", COUNT: 1042 } where 1042 is the next number to hand out
/// let layout = CounterLayout::new().field("COUNT").stores(Stores::NextFree);
/// assert_eq!(layout.field_name(), "COUNT");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CounterLayout {
    field: String,
    stores: Stores,
    keys: Keys,
}

impl Default for CounterLayout {
    fn default() -> Self {
        CounterLayout {
            field: "seq".to_owned(),
            stores: Stores::LastIssued,
            keys: Keys::Id,
        }
    }
}

impl CounterLayout {
    /// The default layout: field `seq`, last issued value.
    pub fn new() -> Self {
        Self::default()
    }

    /// mongoose-sequence's layout: `{ id: <name>, reference_value: <scope or null>, seq: <last
    /// issued> }`, found by `{ id, reference_value }` (with the unique index on those two fields
    /// that mongoose-sequence declares, created when missing), so that a Rust service and a
    /// Node service using mongoose-sequence share one counter.
    ///
    /// `reference_value` is `null` for an unscoped counter and `{ <field>: <value>, … }` (fields
    /// sorted by name, values as stored in the documents) for a scoped one. This layout has no
    /// periods: a sequence with date tokens in its `prefix` cannot use it.
    pub fn mongoose() -> Self {
        CounterLayout {
            keys: Keys::Mongoose,
            ..Self::default()
        }
    }

    /// Whether this is mongoose-sequence's layout.
    pub fn is_mongoose(&self) -> bool {
        self.keys == Keys::Mongoose
    }

    /// Sets the counter field's name.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }

    /// Sets what the counter field stores.
    pub fn stores(mut self, stores: Stores) -> Self {
        self.stores = stores;
        self
    }

    /// The counter field's name.
    pub fn field_name(&self) -> &str {
        &self.field
    }

    /// What the counter field stores.
    pub fn stored(&self) -> Stores {
        self.stores
    }

    pub(crate) fn validate(&self) -> Result<()> {
        check_field_name(&self.field)
    }

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
            Some(Bson::Double(v))
                if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 =>
            {
                *v as i64
            }
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
        assert!(CounterLayout::new().field("a.b").validate().is_err());
    }

    #[test]
    fn mongoose_keys() {
        use crate::scope::Scope;
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
