//! The identity of one counter document.

use std::fmt;

use mongodb::bson::{doc, Bson, Document};

use sequence_rules::limits::exact_integer;

use super::scope::Scope;

/// The `_id` of one counter document: a plain string for a named sequence
/// (`{ _id: "userid", seq: 41 }`), or an embedded document for keys with several parts.
///
/// Keys are compared by `_id` equality only, so two different keys never address the same
/// document and no part of a key is ever read as a query operator.
///
/// The key of a sequence in a period or a scope ([`CounterKey::of`]) is
/// `{ seq: <name>, period: <period>, scope: { <field>: <value>, … } }`, in that field order and
/// without the parts that do not apply.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterKey {
    value: Bson,
    canonical: String,
    fields: Document,
    parts: Option<Parts>,
}

/// What a key made by [`CounterKey::named`] or [`CounterKey::of`] is made of.
#[derive(Clone, Debug, PartialEq)]
struct Parts {
    name: String,
    period: Option<String>,
    scope: Option<Scope>,
}

impl CounterKey {
    /// The key of a named sequence: `_id` is the name itself.
    pub fn named(name: impl Into<String>) -> Self {
        let name = name.into();
        CounterKey {
            canonical: format!("s:{name}"),
            value: Bson::String(name.clone()),
            fields: Document::new(),
            parts: Some(Parts {
                name,
                period: None,
                scope: None,
            }),
        }
    }

    /// The key of sequence `name` in `period` (a canonical period such as `"20251122"`) and
    /// `scope`: [`named`](Self::named) when there is neither, else the embedded document
    /// `{ seq: name, period, scope }` (scope values as in [`Scope::key_document`]).
    pub fn of(name: impl Into<String>, period: Option<&str>, scope: Option<&Scope>) -> Self {
        let name = name.into();
        let scope = scope.filter(|s| !s.is_empty());
        if period.is_none() && scope.is_none() {
            return Self::named(name);
        }
        let mut id = doc! { "seq": name.as_str() };
        let mut canonical = format!("p:{}", Bson::String(name.clone()).into_canonical_extjson());
        if let Some(period) = period {
            id.insert("period", period);
            canonical.push_str(&format!(",{period:?}"));
        }
        if let Some(scope) = scope {
            id.insert("scope", scope.key_document());
            canonical.push(',');
            canonical.push_str(scope.canonical());
        }
        CounterKey {
            value: Bson::Document(id),
            canonical,
            fields: Document::new(),
            parts: Some(Parts {
                name,
                period: period.map(str::to_owned),
                scope: scope.cloned(),
            }),
        }
    }

    /// A key with several parts, stored as an embedded document (field order is significant).
    pub fn composite(doc: mongodb::bson::Document) -> Self {
        let value = Bson::Document(doc);
        CounterKey {
            canonical: format!("d:{}", value.clone().into_canonical_extjson()),
            value,
            fields: Document::new(),
            parts: None,
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
                got == want || bson_integer(got).is_some_and(|g| Some(g) == bson_integer(want))
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

    /// The sequence name, for keys made by [`named`](Self::named) or [`of`](Self::of).
    pub fn name(&self) -> Option<&str> {
        self.parts.as_ref().map(|p| p.name.as_str())
    }

    /// The canonical period, for keys of a period.
    pub fn period(&self) -> Option<&str> {
        self.parts.as_ref()?.period.as_deref()
    }

    /// The scope, for keys of a scope.
    pub fn scope(&self) -> Option<&Scope> {
        self.parts.as_ref()?.scope.as_ref()
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

/// The integer a BSON number holds exactly (an integral double within ±2^53 - 1).
pub(crate) fn bson_integer(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(v) => Some(i64::from(*v)),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) => exact_integer(*v),
        _ => None,
    }
}

/// The key as messages show it: the name, else its `_id` with the scope values as they were
/// given (`{ "$ne": null }`, not the escaped form the `_id` stores).
impl fmt::Display for CounterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.value, &self.parts) {
            (Bson::String(s), _) => f.write_str(s),
            (
                Bson::Document(id),
                Some(Parts {
                    scope: Some(scope), ..
                }),
            ) => {
                let mut shown = id.clone();
                shown.insert("scope", scope.document());
                write!(f, "{shown}")
            }
            (other, _) => write!(f, "{other}"),
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
        let scope = Scope::new().with("shop", doc! { "$ne": Bson::Null });
        assert_eq!(
            CounterKey::of("ticket", None, Some(&scope)).to_string(),
            r#"{ "seq": "ticket", "scope": { "shop": { "$ne": null } } }"#
        );
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

    #[test]
    fn period_and_scope_keys() {
        assert_eq!(CounterKey::of("inv", None, None), CounterKey::named("inv"));
        let k = CounterKey::of("inv", Some("20251122"), None);
        assert_eq!(
            k.value(),
            &Bson::Document(doc! { "seq": "inv", "period": "20251122" })
        );
        assert_eq!(k.period(), Some("20251122"));
        let scope = Scope::new().with("tenant", "a");
        let k = CounterKey::of("inv", Some("2025"), Some(&scope));
        assert_eq!(
            k.value(),
            &Bson::Document(doc! { "seq": "inv", "period": "2025", "scope": { "tenant": "a" } })
        );
        assert_eq!(k.name(), Some("inv"));
        assert_eq!(k.scope(), Some(&scope));
        // No concatenation: parts cannot run into each other.
        let a = CounterKey::of("a,\"b\"", None, Some(&scope));
        let b = CounterKey::of("a", Some("b"), Some(&scope));
        assert_ne!(a.canonical(), b.canonical());
        let n32 = CounterKey::of("n", None, Some(&Scope::new().with("t", 5_i32)));
        let n64 = CounterKey::of("n", None, Some(&Scope::new().with("t", 5_i64)));
        assert_eq!(n32.canonical(), n64.canonical());
    }
}
