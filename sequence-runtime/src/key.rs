//! The identity of one counter document.

use std::fmt;

use mongodb::bson::{Bson, Document};

/// The `_id` of one counter document: a plain string for a named sequence
/// (`{ _id: "userid", seq: 41 }`), or an embedded document for keys with several parts.
///
/// Keys are compared by `_id` equality only, so two different keys never address the same
/// document and no part of a key is ever read as a query operator.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterKey {
    value: Bson,
    canonical: String,
    fields: Document,
}

impl CounterKey {
    /// The key of a named sequence: `_id` is the name itself.
    pub fn named(name: impl Into<String>) -> Self {
        let name = name.into();
        CounterKey {
            canonical: format!("s:{name}"),
            value: Bson::String(name),
            fields: Document::new(),
        }
    }

    /// A key with several parts, stored as an embedded document (field order is significant).
    pub fn composite(doc: mongodb::bson::Document) -> Self {
        let value = Bson::Document(doc);
        CounterKey {
            canonical: format!("d:{}", value.clone().into_canonical_extjson()),
            value,
            fields: Document::new(),
        }
    }

    /// Fixes fields of the counter document besides its value (for a shard: the bounds of its
    /// slice, `{ lo, hi }`). The upsert that creates the counter writes them; a counter document
    /// holding other values for them is reported as
    /// [`Error::CounterMismatch`](crate::Error::CounterMismatch) and never written to. They do
    /// not take part in [`canonical`](Self::canonical): the key still names one document.
    pub fn with_fields(mut self, fields: Document) -> Self {
        self.fields = fields;
        self
    }

    /// The fixed fields (empty unless set with [`with_fields`](Self::with_fields)).
    pub fn fields(&self) -> &Document {
        &self.fields
    }

    /// Whether `doc` holds the fixed fields with the same values (numbers compare by value);
    /// if not, a description of what it holds instead.
    pub(crate) fn fields_mismatch(&self, doc: &Document) -> Option<String> {
        let same = self.fields.iter().all(|(k, want)| {
            doc.get(k).is_some_and(|got| {
                got == want || as_i64(got).is_some_and(|g| Some(g) == as_i64(want))
            })
        });
        if same {
            return None;
        }
        let found: Document = self
            .fields
            .keys()
            .map(|k| (k.clone(), doc.get(k).cloned().unwrap_or(Bson::Null)))
            .collect();
        Some(found.to_string())
    }

    /// The `_id` value of the counter document.
    pub fn value(&self) -> &Bson {
        &self.value
    }

    /// A string that identifies the key unambiguously (for maps and registries).
    pub fn canonical(&self) -> &str {
        &self.canonical
    }
}

fn as_i64(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(v) => Some(i64::from(*v)),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 => {
            Some(*v as i64)
        }
        _ => None,
    }
}

impl fmt::Display for CounterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Bson::String(s) => f.write_str(s),
            other => write!(f, "{other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::doc;

    #[test]
    fn named_and_composite_keys_never_collide() {
        let a = CounterKey::named("d:{}");
        let b = CounterKey::composite(doc! {});
        assert_ne!(a.canonical(), b.canonical());
        assert_eq!(CounterKey::named("userid").to_string(), "userid");
        let c1 = CounterKey::composite(doc! { "n": "a", "p": "b" });
        let c2 = CounterKey::composite(doc! { "n": "a", "p": "b" });
        assert_eq!(c1.canonical(), c2.canonical());
    }

    #[test]
    fn fixed_fields_compare_by_value() {
        let k = CounterKey::composite(doc! { "seq": "a", "shard": 0 })
            .with_fields(doc! { "lo": 10_i64, "hi": 19_i64 });
        assert_eq!(
            k.canonical(),
            CounterKey::composite(doc! { "seq": "a", "shard": 0 }).canonical()
        );
        assert!(k
            .fields_mismatch(&doc! { "lo": 10_i32, "hi": 19.0, "seq": 12 })
            .is_none());
        let found = k.fields_mismatch(&doc! { "lo": 10, "hi": 29 }).unwrap();
        assert!(found.contains("29"), "{found}");
        assert!(k
            .fields_mismatch(&doc! { "seq": 12 })
            .unwrap()
            .contains("null"));
        assert!(CounterKey::named("x").fields_mismatch(&doc! {}).is_none());
    }
}
