//! Property tests of the counter filters: for arbitrary BSON scope values (`$` keys at any
//! depth, patterns, arrays, null, numbers of every type), the filter a layout builds for one
//! value matches the counter document an upsert of another value's filter creates exactly when
//! the two values are one counter's, and it refuses exactly the values no equality matches.
//!
//! The server's reading of a filter is modelled here ([`matches`]) for what the layouts send:
//! equality on a field (an array field matched by any element, a missing field by null, a
//! regular expression as a pattern), a document whose first field starts with `$` read as
//! operators, and the operators `$eq`, `$ne`, `$in`, `$gt(e)`, `$lt(e)`, `$exists`, `$regex`
//! and `$not`; an operator the server refuses where it stands (`$where`, `$expr`, an unknown
//! one) is an error, which writes nothing. `tests/it/injection.rs` checks the same property
//! against the real server on a sample.

use std::cmp::Ordering;

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{doc, Bson, Document, Regex};
use proptest::prelude::*;

use super::layout::{group_text, CounterLayout};
use crate::id::{CounterKey, Scope};
use crate::options::{filter, Layout, SequenceOptions};

/// Scope values: leaves of every kind a request could carry, in documents and arrays whose
/// keys include operators.
fn values() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        proptest::sample::select(vec!["victim", "$gt", "$ne", "", "a", "5"])
            .prop_map(|s| Bson::String(s.to_owned())),
        (-2_i32..6).prop_map(Bson::Int32),
        (-2_i64..6).prop_map(Bson::Int64),
        proptest::sample::select(vec![5.0, 0.5, -0.0]).prop_map(Bson::Double),
        any::<bool>().prop_map(Bson::Boolean),
        Just(Bson::Null),
        proptest::sample::select(vec![".", "^v", "victim"]).prop_map(|p| {
            Bson::RegularExpression(Regex {
                pattern: p.to_owned(),
                options: String::new(),
            })
        }),
        Just(Bson::ObjectId(ObjectId::from_bytes([7; 12]))),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        let key = proptest::sample::select(vec![
            "a", "b", "$ne", "$gt", "$eq", "$in", "$where", "$expr", "$regex", "~$ne", "$exists",
        ]);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
            proptest::collection::vec((key, inner), 0..3).prop_map(|fields| {
                let mut d = Document::new();
                for (k, v) in fields {
                    d.insert(k, v);
                }
                Bson::Document(d)
            }),
        ]
    })
}

/// The layouts that hold a scope value, each with the options of a sequence scoped by `shop`.
fn layouts() -> Vec<(&'static str, SequenceOptions)> {
    let scoped = |b: crate::options::SequenceOptionsBuilder| b.scope(["shop"]).build();
    vec![
        ("default", scoped(SequenceOptions::builder("ticket"))),
        (
            "mongoose_sequence",
            scoped(SequenceOptions::builder("ticket").layout(Layout::MongooseSequence)),
        ),
        (
            "mongoose_auto_increment",
            scoped(SequenceOptions::builder("ticket").layout(Layout::MongooseAutoIncrement)),
        ),
        (
            "filter",
            scoped(
                SequenceOptions::builder("ticket")
                    .counters("idcounters")
                    .field("c")
                    .filter(filter::parse(r#"m = "Ticket", shop = scope(shop)"#).unwrap()),
            ),
        ),
    ]
}

fn key(value: &Bson) -> CounterKey {
    CounterKey::of(
        "ticket",
        None,
        Some(&Scope::new().with("shop", value.clone())),
    )
}

/// The document an upsert with `filter` creates: its equality fields (a `$eq` one's value).
fn created(filter: &Document) -> Document {
    let mut doc = Document::new();
    for (field, condition) in filter {
        match condition {
            Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => {
                if let (Some(value), 1) = (d.get("$eq"), d.len()) {
                    doc.insert(field.clone(), value.clone());
                }
            }
            value => {
                doc.insert(field.clone(), value.clone());
            }
        }
    }
    doc
}

/// Whether the server's filter `filter` matches `doc`; `Err` where the server refuses it.
fn matches(filter: &Document, doc: &Document) -> Result<bool, String> {
    for (field, condition) in filter {
        let value = doc.get(field);
        let hit = match condition {
            Bson::Document(ops) if ops.keys().next().is_some_and(|k| k.starts_with('$')) => {
                operators(ops, value)?
            }
            q => bare(q, value),
        };
        if !hit {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `{ field: q }`: equality, a pattern for a regular expression, null for a missing field,
/// and an array field matched by any of its elements.
fn bare(q: &Bson, value: Option<&Bson>) -> bool {
    let one = |v: &Bson| match (q, v) {
        (Bson::RegularExpression(r), Bson::String(s)) => pattern(r, s),
        (Bson::RegularExpression(_), _) => false,
        _ => equal(q, v),
    };
    match value {
        None => matches!(q, Bson::Null),
        Some(v) => one(v) || matches!(v, Bson::Array(a) if a.iter().any(one)),
    }
}

/// `{ field: { $eq: q } }`: equality, and an array field matched by any of its elements.
fn eq(q: &Bson, value: Option<&Bson>) -> bool {
    match value {
        None => matches!(q, Bson::Null),
        Some(v) => equal(q, v) || matches!(v, Bson::Array(a) if a.iter().any(|e| equal(q, e))),
    }
}

fn operators(ops: &Document, value: Option<&Bson>) -> Result<bool, String> {
    let mut all = true;
    for (op, arg) in ops {
        let hit = match op.as_str() {
            "$eq" => eq(arg, value),
            "$ne" => !eq(arg, value),
            "$in" => match arg {
                Bson::Array(a) => a.iter().any(|q| bare(q, value)),
                _ => return Err("$in needs an array".into()),
            },
            "$gt" | "$gte" | "$lt" | "$lte" => value.is_some_and(|v| {
                let order = compare(v, arg);
                match op.as_str() {
                    "$gt" => order == Some(Ordering::Greater),
                    "$gte" => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
                    "$lt" => order == Some(Ordering::Less),
                    _ => matches!(order, Some(Ordering::Less | Ordering::Equal)),
                }
            }),
            "$exists" => match arg {
                Bson::Boolean(b) => value.is_some() == *b,
                _ => value.is_some(),
            },
            "$regex" => match (arg, value) {
                (Bson::String(p), Some(Bson::String(s))) => s.contains(p.trim_start_matches('^')),
                (Bson::String(_), _) => false,
                _ => return Err("$regex needs a string".into()),
            },
            "$not" => match arg {
                Bson::Document(inner) => !operators(inner, value)?,
                _ => return Err("$not needs a document".into()),
            },
            other => return Err(format!("unknown operator {other}")),
        };
        all &= hit;
    }
    Ok(all)
}

/// What the layouts' patterns match: `.` anything, `^v` a leading `v`, else the text.
fn pattern(r: &Regex, s: &str) -> bool {
    match r.pattern.as_str() {
        "." => !s.is_empty(),
        "^v" => s.starts_with('v'),
        p => s.contains(p),
    }
}

/// BSON equality as the server compares values: numbers by value, documents field by field
/// in order, arrays element by element.
fn equal(a: &Bson, b: &Bson) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => return x == y,
        (Some(_), None) | (None, Some(_)) => return false,
        _ => {}
    }
    match (a, b) {
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && equal(vx, vy))
        }
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(vx, vy)| equal(vx, vy))
        }
        _ => a == b,
    }
}

fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

/// The order of two values of one kind (numbers, strings); `None` across kinds, which the
/// server's range operators do not match.
fn compare(a: &Bson, b: &Bson) -> Option<Ordering> {
    match (number(a), number(b), a, b) {
        (Some(x), Some(y), _, _) => x.partial_cmp(&y),
        (_, _, Bson::String(x), Bson::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Whether two scope values are one counter's in `layout`: equal as the server compares them
/// (mongoose-auto-increment's layout: equal as text, as the plugin stores them).
fn one_counter(layout: &str, a: &Bson, b: &Bson) -> bool {
    if layout == "mongoose_auto_increment" {
        return group_text("shop", a).ok() == group_text("shop", b).ok();
    }
    Scope::new().with("shop", a.clone()).canonical()
        == Scope::new().with("shop", b.clone()).canonical()
}

/// Whether `layout` must refuse `value`: an array or null where it is a field of its own, a
/// value without a text of its own as mongoose-auto-increment's group.
fn refused(layout: &str, value: &Bson) -> bool {
    match layout {
        "filter" => matches!(value, Bson::Array(_) | Bson::Null),
        "mongoose_auto_increment" => group_text("shop", value).is_err(),
        _ => false,
    }
}

proptest! {
    #![proptest_config(crate::property_cases::config(3000))]

    /// A value's filter finds the counter of every value it is one counter with, and no other.
    #[test]
    fn a_filter_matches_exactly_its_own_counter(a in values(), b in values()) {
        for (name, options) in layouts() {
            let layout = CounterLayout::of(&options);
            let (fa, fb) = (layout.id_filter(&key(&a)), layout.id_filter(&key(&b)));
            prop_assert_eq!(fa.is_err(), refused(name, &a), "{}: {}", name, a);
            prop_assert_eq!(
                CounterLayout::check_scope(&options, &Scope::new().with("shop", a.clone())).is_err(),
                refused(name, &a),
                "{}: checked before anything is written: {}", name, a
            );
            let (Ok(fa), Ok(fb)) = (fa, fb) else { continue };
            let stored = created(&fb);
            let hit = matches(&fa, &stored);
            prop_assert!(hit.is_ok(), "{}: the server refuses {}: {:?}", name, fa, hit);
            prop_assert_eq!(
                hit.unwrap(),
                one_counter(name, &a, &b),
                "{}: filter {} and counter {}", name, fa, stored
            );
        }
    }
}

/// The model of the server's reading finds the injection the filters used to let through.
#[test]
fn the_model_reads_operators_as_the_server_does() {
    let victim = doc! { "m": "Ticket", "shop": "victim", "c": 100 };
    let raw = doc! { "m": "Ticket", "shop": { "$ne": Bson::Null } };
    assert_eq!(
        matches(&raw, &victim),
        Ok(true),
        "as the filter layout sent it"
    );
    let options = layouts().pop().unwrap().1;
    let literal = CounterLayout::of(&options)
        .id_filter(&key(&Bson::Document(doc! { "$ne": Bson::Null })))
        .unwrap();
    assert_eq!(matches(&literal, &victim), Ok(false));
    assert_eq!(
        matches(
            &doc! { "shop": "victim" },
            &doc! { "shop": ["victim", "x"] }
        ),
        Ok(true),
        "a single value matches an array holding it"
    );
    assert!(matches(&doc! { "shop": { "$where": "true" } }, &victim).is_err());
}
