//! Scoped counters: one counter per value of some fields of the document (mongoose-sequence's
//! `reference_fields`).

use std::cmp::Ordering;
use std::fmt;
use std::sync::{Arc, OnceLock};

use mongodb::bson::{Bson, Document};
use sequence_rules::limits::exact_integer;
use sequence_rules::names::{self, NameKind};

use crate::error::{Error, Result};

/// The values of a sequence's `scope` fields for one document: each distinct `Scope` has a
/// counter of its own.
///
/// Values keep their BSON type and are matched by equality only (numbers by value, as the
/// server compares them): a value such as `"$gt"` or `{ "$ne": null }` is data, never a query
/// operator. Fields are kept sorted by name, so the order they are given in does not matter.
///
/// ```
/// # use sequence_runtime::Scope;
/// let a = Scope::new().with("tenant", "acme").with("year", 2025);
/// let b = Scope::new().with("year", 2025).with("tenant", "acme");
/// assert_eq!(a, b);
/// assert_eq!(a.fields().map(|(f, _)| f).collect::<Vec<_>>(), ["tenant", "year"]);
/// ```
#[derive(Clone, Default)]
pub struct Scope {
    fields: Vec<(String, Bson)>,
    /// [`canonical`](Self::canonical), made once for the scope and its clones.
    canonical: Arc<OnceLock<String>>,
}

impl PartialEq for Scope {
    fn eq(&self, other: &Self) -> bool {
        self.fields == other.fields
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("fields", &self.fields)
            .finish()
    }
}

/// Field order of scope documents: by UTF-16 code units, as JavaScript's `Array.sort` orders
/// mongoose-sequence's `reference_fields`.
fn field_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

impl Scope {
    /// An empty scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the value of `field`.
    pub fn with(mut self, field: impl Into<String>, value: impl Into<Bson>) -> Self {
        let field = field.into();
        let value = value.into();
        // Clones share the string: a scope of its own clears it, one shared makes its own.
        match Arc::get_mut(&mut self.canonical) {
            Some(canonical) => drop(canonical.take()),
            None => self.canonical = Arc::default(),
        }
        match self
            .fields
            .binary_search_by(|(f, _)| field_order(f, &field))
        {
            Ok(i) => self.fields[i].1 = value,
            Err(i) => self.fields.insert(i, (field, value)),
        }
        self
    }

    /// The scope of these (field, value) pairs.
    pub fn from_values<F: Into<String>>(values: impl IntoIterator<Item = (F, Bson)>) -> Self {
        values
            .into_iter()
            .fold(Scope::new(), |scope, (f, v)| scope.with(f, v))
    }

    /// The fields and their values, sorted by field name.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &Bson)> {
        self.fields.iter().map(|(f, v)| (f.as_str(), v))
    }

    /// The value of `field`, if the scope has it.
    pub fn get(&self, field: &str) -> Option<&Bson> {
        (self.fields)
            .binary_search_by(|(f, _)| field_order(f, field))
            .ok()
            .map(|i| &self.fields[i].1)
    }

    /// Whether the scope has no field.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// `{ field: value, … }` as given (mongoose-sequence's `reference_value`).
    pub fn document(&self) -> Document {
        self.fields
            .iter()
            .map(|(f, v)| (f.clone(), v.clone()))
            .collect()
    }

    /// The scope as stored inside a counter's `_id`: the server refuses `$`-prefixed field names
    /// in `_id`, so every field name inside a value that starts with `$` or `~` gets a leading
    /// `~` (`{ "$ne": null }` is stored as `{ "~$ne": null }`); everything else is stored as is.
    /// The mapping is one-to-one, so distinct scopes never share a counter.
    pub fn key_document(&self) -> Document {
        self.fields
            .iter()
            .map(|(f, v)| (f.clone(), escape(v)))
            .collect()
    }

    /// A string that identifies the scope (numbers normalized as the server compares them).
    pub(crate) fn canonical(&self) -> &str {
        self.canonical.get_or_init(|| {
            let doc: Document = self
                .fields
                .iter()
                .map(|(f, v)| (f.clone(), normalize(v)))
                .collect();
            Bson::Document(doc).into_canonical_extjson().to_string()
        })
    }

    /// Checks that every field name is one a document can hold (not empty, no leading `$`,
    /// no `.`, no NUL), as [`Error::InvalidName`].
    pub fn check_names(&self) -> Result<()> {
        for (field, _) in &self.fields {
            names::check(NameKind::Field, field)?;
        }
        Ok(())
    }

    /// Checks the field names against the fields a sequence is scoped by.
    pub(crate) fn check(&self, sequence: &str, expected: &[String]) -> Result<()> {
        self.check_names()?;
        // Fields are unique: as many, each expected one present, is the same set.
        let present = |e: &String| {
            (self.fields)
                .binary_search_by(|(f, _)| field_order(f, e))
                .is_ok()
        };
        if !expected.is_empty()
            && expected.len() == self.fields.len()
            && expected.iter().all(present)
        {
            return Ok(());
        }
        let mut want: Vec<&str> = expected.iter().map(String::as_str).collect();
        want.sort_by(|a, b| field_order(a, b));
        let got: Vec<&str> = self.fields.iter().map(|(f, _)| f.as_str()).collect();
        if want.is_empty() {
            return Err(Error::InvalidArgument {
                argument: "scope",
                reason: format!(
                    "sequence `{sequence}` has no `scope` fields; set them with \
                     `SequenceOptionsBuilder::scope`"
                ),
            });
        }
        if got != want {
            return Err(Error::InvalidArgument {
                argument: "scope",
                reason: format!(
                    "sequence `{sequence}` is scoped by {}, but the scope has {}",
                    list(&want),
                    if got.is_empty() {
                        "no field".to_owned()
                    } else {
                        list(&got)
                    }
                ),
            });
        }
        Ok(())
    }
}

fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn escape(value: &Bson) -> Bson {
    match value {
        Bson::Document(d) => Bson::Document(
            d.iter()
                .map(|(k, v)| {
                    let k = if k.starts_with('$') || k.starts_with('~') {
                        format!("~{k}")
                    } else {
                        k.clone()
                    };
                    (k, escape(v))
                })
                .collect(),
        ),
        Bson::Array(a) => Bson::Array(a.iter().map(escape).collect()),
        other => other.clone(),
    }
}

/// Integers as `Int64`, integral doubles in range as `Int64`: what the server considers equal
/// maps to one string.
fn normalize(value: &Bson) -> Bson {
    match value {
        Bson::Int32(v) => Bson::Int64(i64::from(*v)),
        Bson::Double(v) if exact_integer(*v).is_some() => Bson::Int64(*v as i64),
        Bson::Document(d) => {
            Bson::Document(d.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
        }
        Bson::Array(a) => Bson::Array(a.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::doc;

    #[test]
    fn the_canonical_string_follows_the_fields_after_it_was_made() {
        let one = Scope::new().with("tenant", 1_i32);
        let made = one.canonical();
        assert_eq!(made, Scope::new().with("tenant", 1.0).canonical());
        let two = one.clone().with("year", 2025);
        assert_ne!(two.canonical(), made);
        assert_eq!(
            two.canonical(),
            Scope::new()
                .with("year", 2025)
                .with("tenant", 1_i64)
                .canonical()
        );
        let replaced = one.clone().with("tenant", 2);
        assert_ne!(replaced.canonical(), made);
        assert_eq!(one.canonical(), made);
        assert_eq!(
            one,
            Scope::new().with("tenant", 1_i32),
            "equal whether made or not"
        );
        // A clone changed before either made the string makes its own.
        let first = Scope::new().with("tenant", "a");
        let changed = first.clone().with("tenant", "b");
        assert_eq!(
            first.canonical(),
            Scope::new().with("tenant", "a").canonical()
        );
        assert_eq!(
            changed.canonical(),
            Scope::new().with("tenant", "b").canonical()
        );
        assert_ne!(first.canonical(), changed.canonical());
    }

    #[test]
    fn operators_are_escaped_one_to_one() {
        let ne = Scope::new().with("tenant", doc! { "$ne": Bson::Null });
        let tilde = Scope::new().with("tenant", doc! { "~$ne": Bson::Null });
        assert_eq!(ne.key_document(), doc! { "tenant": { "~$ne": Bson::Null } });
        assert_eq!(
            tilde.key_document(),
            doc! { "tenant": { "~~$ne": Bson::Null } }
        );
        assert_eq!(
            Scope::new().with("t", "$gt").key_document(),
            doc! { "t": "$gt" }
        );
        assert_eq!(
            Scope::new()
                .with("t", vec![Bson::Document(doc! { "$a": 1 })])
                .key_document(),
            doc! { "t": [{ "~$a": 1 }] }
        );
        assert_eq!(ne.document(), doc! { "tenant": { "$ne": Bson::Null } });
    }

    #[test]
    fn numbers_compare_by_value() {
        let a = Scope::new().with("n", 5_i32);
        let b = Scope::new().with("n", 5_i64);
        let c = Scope::new().with("n", 5.0);
        assert_eq!(a.canonical(), b.canonical());
        assert_eq!(a.canonical(), c.canonical());
        assert_ne!(a.canonical(), Scope::new().with("n", 5.5).canonical());
        assert_ne!(a.canonical(), Scope::new().with("n", "5").canonical());
    }

    #[test]
    fn checks_the_fields() {
        let s = Scope::new().with("year", 2025).with("tenant", "a");
        assert!(s.check("x", &["tenant".into(), "year".into()]).is_ok());
        assert!(s.check("x", &["year".into(), "tenant".into()]).is_ok());
        let e = s.check("x", &["tenant".into()]).unwrap_err().to_string();
        assert!(e.contains("scoped by `tenant`"), "{e}");
        assert!(s.check("x", &[]).is_err());
        assert!(Scope::new()
            .with("$bad", 1)
            .check("x", &["$bad".into()])
            .is_err());
    }
}
