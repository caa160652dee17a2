//! The one door through which values go into the filters the crate sends: a value that is not
//! the crate's own (a scope value, a sequence name, a period, a filter's constant, an ID, a
//! claim, a value of the command line's `--scope`) is matched as the data it is, never read
//! as a query operator, or refused with [`Error::UnmatchableValue`] before anything is
//! written.
//!
//! How the server reads `{ field: value }`:
//!
//! | value | matches |
//! | --- | --- |
//! | a document whose first field starts with `$` (`{ $ne: null }`) | what the operator says: any value |
//! | a regular expression | every string it matches |
//! | an array | the same array, and an array holding it as an element |
//! | anything but an array | the same value, and an array holding it (`"victim"` finds `["victim"]`) |
//! | null | null, and a document without the field |
//! | any other document or value | that value (numbers by value) |
//!
//! `{ field: { $eq: value } }` takes the first two as data. Nothing turns the last three
//! into an exact match in a filter that an upsert also writes, so where they would be read so
//! ([`exactly`]) they are refused. Inside an embedded document the server compares whole
//! values, so there every value is data.
//!
//! A key (`_id`, or a document inside it: [`key`]) is refused where it holds a `$`-prefixed
//! field name at any depth, since the server cannot store one in `_id`; a counter's own key
//! escapes the `$` of its scope values instead ([`Scope::key_document`](crate::Scope)).
//!
//! The filters of users' own documents (the IDs stored in a scope, for skipping ahead) match
//! with `$eq` ([`stored`]): there, matching more documents than the scope's own (an array
//! field holding the value) only skips further ahead, and never writes to another counter.
//!
//! The functions are public for tools that build filters of counters themselves, as the
//! command line does:
//!
//! ```
//! use mongodb::bson::{doc, Bson};
//! use sequence_runtime::store::literal;
//!
//! let shop = Bson::Document(doc! { "$ne": null });
//! let filter = doc! { "m": "Ticket", "shop": literal::exactly("shop", &shop)? };
//! assert_eq!(filter, doc! { "m": "Ticket", "shop": { "$eq": { "$ne": null } } });
//! let tenants = Bson::Array(vec!["victim".into()]);
//! assert!(literal::exactly("shop", &tenants).is_err());
//! # Ok::<(), sequence_runtime::Error>(())
//! ```

use mongodb::bson::{doc, Bson};

use crate::error::{Error, Result};

/// `value`, given for `field`, as a filter matches it exactly, or [`Error::UnmatchableValue`]
/// for a value no equality matches exactly (an array, null): a document with a `$`-prefixed
/// field and a regular expression become `{ $eq: value }`, everything else is itself.
pub fn exactly(field: &str, value: &Bson) -> Result<Bson> {
    refusal(value).map_or(Ok(()), |reason| Err(refused(field, value, reason)))?;
    Ok(match value {
        Bson::RegularExpression(_) => doc! { "$eq": value.clone() }.into(),
        Bson::Document(d) if d.keys().any(|k| k.starts_with('$')) => {
            doc! { "$eq": value.clone() }.into()
        }
        _ => value.clone(),
    })
}

/// Why no equality matches `value` exactly where it is a field's value, if none does.
pub(crate) fn refusal(value: &Bson) -> Option<&'static str> {
    match value {
        Bson::Array(_) => Some(
            "an array also matches a field holding it as an element, and a single value \
             matches an array holding it, so two values would share one counter",
        ),
        Bson::Null | Bson::Undefined => Some(
            "null also matches a document without the field, so it cannot be a counter of \
             its own; give a value",
        ),
        _ => None,
    }
}

/// `value`, given for `field`, as a key the server stores in `_id` (whole, or a document
/// inside it), or [`Error::UnmatchableValue`] where it holds a `$`-prefixed field name, which
/// the server cannot store there.
pub fn key(field: &str, value: &Bson) -> Result<Bson> {
    match dollar_name(value) {
        Some(name) => Err(refused(
            field,
            value,
            &format!(
                "the server cannot store the `$`-prefixed field name `{name}` in an `_id` \
                 (a claim's or a counter's key)"
            ),
        )),
        None => Ok(value.clone()),
    }
}

/// The first `$`-prefixed field name in `value`, at any depth.
fn dollar_name(value: &Bson) -> Option<&str> {
    match value {
        Bson::Document(d) => d.iter().find_map(|(k, v)| {
            if k.starts_with('$') {
                Some(k.as_str())
            } else {
                dollar_name(v)
            }
        }),
        Bson::Array(a) => a.iter().find_map(dollar_name),
        _ => None,
    }
}

/// `value` as a filter of users' stored documents matches it: `{ $eq: value }`, never an
/// operator.
pub fn stored(value: &Bson) -> Bson {
    doc! { "$eq": value.clone() }.into()
}

/// `{ $in: values }` of keys (`_id`s the crate read or made), each matched as itself: a
/// regular expression or an array in `$in` would match other values, so they are refused.
pub fn any_of(field: &str, values: &[Bson]) -> Result<Bson> {
    for value in values {
        if let Bson::RegularExpression(_) | Bson::Array(_) = value {
            return Err(refused(
                field,
                value,
                "a regular expression or an array in `$in` matches other values",
            ));
        }
    }
    Ok(doc! { "$in": values.to_vec() }.into())
}

/// The error of a value refused, for `field`, with `reason`.
pub(crate) fn refused(field: &str, value: &Bson, reason: &str) -> Error {
    Error::UnmatchableValue {
        field: field.to_owned(),
        value: value.to_string(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::Regex;

    #[test]
    fn operators_and_patterns_become_data() {
        let ne = Bson::Document(doc! { "$ne": Bson::Null });
        assert_eq!(
            exactly("t", &ne).unwrap(),
            Bson::Document(doc! { "$eq": ne })
        );
        let mixed = Bson::Document(doc! { "a": 1, "$gt": "" });
        assert_eq!(
            exactly("t", &mixed).unwrap(),
            Bson::Document(doc! { "$eq": mixed })
        );
        let pattern = Bson::RegularExpression(Regex {
            pattern: ".".into(),
            options: String::new(),
        });
        assert_eq!(
            exactly("t", &pattern).unwrap(),
            Bson::Document(doc! { "$eq": pattern })
        );
        // An embedded document compares whole: its deeper `$` keys are data.
        let nested = Bson::Document(doc! { "a": { "$ne": Bson::Null } });
        assert_eq!(exactly("t", &nested).unwrap(), nested);
        assert_eq!(exactly("t", &Bson::from("$gt")).unwrap(), Bson::from("$gt"));
        assert_eq!(exactly("t", &Bson::Int32(7)).unwrap(), Bson::Int32(7));
    }

    #[test]
    fn arrays_and_null_are_refused_naming_the_field() {
        for value in [
            Bson::Array(vec!["victim".into()]),
            Bson::Null,
            Bson::Undefined,
        ] {
            let e = exactly("shop", &value).unwrap_err();
            assert!(
                matches!(&e, Error::UnmatchableValue { field, .. } if field == "shop"),
                "{e:?}"
            );
        }
        assert!(exactly("shop", &Bson::Array(vec![])).is_err());
    }

    #[test]
    fn keys_refuse_dollar_names_at_any_depth() {
        let deep = Bson::Document(doc! { "a": [{ "b": { "$where": "true" } }] });
        let e = key("shop", &deep).unwrap_err().to_string();
        assert!(e.contains("`$where`") && e.contains("`shop`"), "{e}");
        let fine = Bson::Document(doc! { "a": [1, { "b": "$x" }] });
        assert_eq!(key("shop", &fine).unwrap(), fine);
    }

    #[test]
    fn in_lists_refuse_patterns() {
        assert!(any_of("_id", &[Bson::Int64(1), Bson::from("a")]).is_ok());
        let pattern = Bson::RegularExpression(Regex {
            pattern: ".".into(),
            options: String::new(),
        });
        assert!(any_of("_id", &[pattern]).is_err());
    }
}
