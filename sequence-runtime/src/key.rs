//! The identity of one counter document.

use std::fmt;

use mongodb::bson::Bson;

/// The `_id` of one counter document: a plain string for a named sequence
/// (`{ _id: "userid", seq: 41 }`), or an embedded document for keys with several parts.
///
/// Keys are compared by `_id` equality only, so two different keys never address the same
/// document and no part of a key is ever read as a query operator.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterKey {
    value: Bson,
    canonical: String,
}

impl CounterKey {
    /// The key of a named sequence: `_id` is the name itself.
    pub fn named(name: impl Into<String>) -> Self {
        let name = name.into();
        CounterKey {
            canonical: format!("s:{name}"),
            value: Bson::String(name),
        }
    }

    /// A key with several parts, stored as an embedded document (field order is significant).
    pub fn composite(doc: mongodb::bson::Document) -> Self {
        let value = Bson::Document(doc);
        CounterKey {
            canonical: format!("d:{}", value.clone().into_canonical_extjson()),
            value,
        }
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
}
