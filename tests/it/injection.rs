//! Every value stays data: operator-shaped values (`{ "$ne": null }`, `{ "$regex": "." }`, `$`
//! keys nested deeper, arrays, null, an empty document, a BSON pattern) through every layout —
//! this crate's, mongoose-sequence's, typegoose's, mongoose-auto-increment's, a filter with
//! `scope(...)`, MongoEngine's dotted name — and every operation that touches a counter. A
//! victim tenant's counters, documents and claims stay byte for byte as they were, and each
//! value is either numbered on a counter of its own that holds it literally, or refused with
//! a typed error and nothing written for it.
//!
//! Typegoose's layout has no scope: there the values reach the filter as the sequence's name
//! (an application that names sequences after its input), through `Sequence`'s operations.
//! A sample of arbitrary values against the same rule is the property test at the end.

use crate::common;

use std::collections::BTreeMap;

use mongo_sequence::options::{filter, Layout};
use mongo_sequence::{Error, Scope, Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, oid::ObjectId, Bson, Document, Regex};
use mongodb::{Collection, Database};
use serde::{Deserialize, Serialize};

/// The values an attacker sends as a tenant.
fn values() -> Vec<Bson> {
    let pattern = |p: &str| {
        Bson::RegularExpression(Regex {
            pattern: p.into(),
            options: String::new(),
        })
    };
    vec![
        Bson::Document(doc! { "$ne": Bson::Null }),
        Bson::Document(doc! { "$gt": "" }),
        Bson::Document(doc! { "$regex": "." }),
        Bson::Document(doc! { "$where": "true" }),
        Bson::Document(doc! { "$expr": { "$eq": [1, 1] } }),
        Bson::Document(doc! { "$in": ["victim"] }),
        Bson::Document(doc! { "a": { "b": { "$gt": "" } } }),
        Bson::Document(doc! { "a": [{ "$ne": "x" }] }),
        Bson::Document(doc! {}),
        Bson::Array(vec!["victim".into()]),
        Bson::Array(vec![]),
        Bson::Null,
        pattern("."),
        pattern("^vic"),
        Bson::String("$ne".into()),
    ]
}

/// Declares, in a module of its own, the models of one layout: `Plain`, `Gapless` and
/// `Proxy`, each scoped by `shop`, with the `#[seq(...)]` keys given (`Plain` with a batch).
macro_rules! models {
    ($module:ident, $plain:literal, $gapless:literal, $proxy:literal, $($keys:tt)*) => {
        mod $module {
            use super::*;

            #[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
            #[seq(name = $plain, scope = "shop", batch = 10, $($keys)*)]
            pub struct Plain {
                #[seq(id)]
                pub number: Option<i64>,
                pub shop: Bson,
                pub name: String,
            }

            #[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
            #[seq(name = $gapless, scope = "shop", gapless, $($keys)*)]
            pub struct Gapless {
                #[seq(id)]
                pub number: Option<i64>,
                pub shop: Bson,
                pub name: String,
            }

            #[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
            #[seq(name = $proxy, scope = "shop", unique = "proxy", $($keys)*)]
            pub struct Proxy {
                #[seq(id)]
                pub number: Option<i64>,
                pub shop: Bson,
                pub name: String,
            }
        }
    };
}

models!(default_layout, "ticket", "ticket_gapless", "ticket_proxy",);
models!(
    mongoose_layout,
    "ticket",
    "ticket_gapless",
    "ticket_proxy",
    layout = "mongoose_sequence"
);
models!(
    autoinc_layout,
    "ticket",
    "ticket_gapless",
    "ticket_proxy",
    layout = "mongoose_auto_increment"
);
models!(
    filter_layout,
    "ticket",
    "ticket_gapless",
    "ticket_proxy",
    counters = "idcounters",
    field = "c",
    filter(m = name, shop = scope(shop))
);
models!(
    mongoengine_layout,
    "tickets.number",
    "tickets.gapless",
    "tickets.proxy",
    counters = "mongoengine.counters",
    field = "next"
);

/// Whether a counter document is the counter of a name and a scope value, holding the value
/// literally.
type Holds = fn(&Document, &str, &Bson) -> bool;

/// Where a layout keeps its counters, and how its counter of a name and a value is told.
struct Place {
    label: &'static str,
    counters: &'static str,
    holds: Holds,
}

fn default_holds(doc: &Document, name: &str, value: &Bson) -> bool {
    let key = mongo_sequence::id::CounterKey::of(
        name,
        None,
        Some(&Scope::new().with("shop", value.clone())),
    );
    doc.get("_id") == Some(key.value())
}

fn mongoose_holds(doc: &Document, name: &str, value: &Bson) -> bool {
    doc.get_str("id") == Ok(name)
        && doc.get("reference_value") == Some(&Bson::Document(doc! { "shop": value.clone() }))
}

fn autoinc_holds(doc: &Document, name: &str, value: &Bson) -> bool {
    let text = match value {
        Bson::String(s) => s.clone(),
        _ => return false,
    };
    doc.get_str("model") == Ok(name) && doc.get_str("groupingField") == Ok(&text)
}

fn filter_holds(doc: &Document, name: &str, value: &Bson) -> bool {
    doc.get_str("m") == Ok(name) && doc.get("shop") == Some(value)
}

/// Whether a layout refuses `value` as a scope value wherever a counter is found by it.
fn refused_by_layout(label: &str, value: &Bson) -> bool {
    match label {
        "filter" => matches!(value, Bson::Array(_) | Bson::Null),
        "mongoose_auto_increment" => !matches!(value, Bson::String(_)),
        _ => false,
    }
}

/// Whether a claim's key (`_id`) cannot hold `value`: a `$`-prefixed field name in it.
fn dollar_name(value: &Bson) -> bool {
    match value {
        Bson::Document(d) => d.iter().any(|(k, v)| k.starts_with('$') || dollar_name(v)),
        Bson::Array(a) => a.iter().any(dollar_name),
        _ => false,
    }
}

/// What belongs to the victim, byte for byte: its counters, documents and claims.
async fn victim(db: &Database, place: &Place, names: &[&str]) -> BTreeMap<String, Vec<Vec<u8>>> {
    let victim = Bson::String("victim".into());
    let mut all = BTreeMap::new();
    for coll in db.list_collection_names().await.unwrap() {
        let docs: Vec<Document> = common::all(&db.collection::<Document>(&coll)).await;
        let mut bytes: Vec<Vec<u8>> = docs
            .iter()
            .filter(|d| {
                if coll == place.counters {
                    names.iter().any(|n| (place.holds)(d, n, &victim))
                } else if coll.contains(".claims.") {
                    d.get_document("_id").ok().and_then(|id| id.get("shop")) == Some(&victim)
                } else {
                    d.get("shop") == Some(&victim)
                }
            })
            .map(|d| mongodb::bson::to_vec(d).unwrap())
            .collect();
        bytes.sort();
        all.insert(coll, bytes);
    }
    all
}

/// The counter of `name` holding `value` literally, if there is one.
async fn own_counter(db: &Database, place: &Place, name: &str, value: &Bson) -> Option<Document> {
    let docs: Vec<Document> = common::all(&db.collection::<Document>(place.counters)).await;
    docs.into_iter().find(|d| (place.holds)(d, name, value))
}

/// Documents of `coll` whose `shop` is `value` exactly.
async fn stored_with(coll: &Collection<Document>, value: &Bson) -> usize {
    let docs: Vec<Document> = common::all(coll).await;
    docs.iter().filter(|d| d.get("shop") == Some(value)).count()
}

/// One operation's outcome: numbered (the value's own counter must hold it) or refused.
fn outcome<T: std::fmt::Debug>(
    op: &str,
    value: &Bson,
    refused: bool,
    result: Result<T, Error>,
) -> bool {
    match result {
        Ok(v) => {
            assert!(
                !refused,
                "{op} {value}: taken ({v:?}) though it must be refused"
            );
            true
        }
        Err(Error::UnmatchableValue { field, .. }) => {
            assert!(refused, "{op} {value}: refused though it is data");
            assert_eq!(field, "shop", "{op} {value}: the error names the field");
            false
        }
        Err(e) => panic!("{op} {value}: unexpected error {e}"),
    }
}

/// The matrix of one layout: every value through every operation of its models and sequence.
macro_rules! matrix {
    ($models:ident, $place:expr, $db:literal, [$plain:literal, $gapless:literal, $proxy:literal]) => {{
        use $models::{Gapless, Plain, Proxy};
        let place: Place = $place;
        let db = common::database($db).await;
        let docs = db.collection::<Plain>("tickets");
        let gapless = db.collection::<Gapless>("invoices");
        let proxied = db.collection::<Proxy>("slips");
        let raw = db.collection::<Document>("tickets");
        let names = [$plain, $gapless, $proxy];
        let shop = |v: &Bson| Plain {
            number: None,
            shop: v.clone(),
            name: "x".into(),
        };
        for i in 0..3 {
            let mut t = Plain {
                name: format!("victim {i}"),
                ..shop(&"victim".into())
            };
            t.insert_with_id(&docs).await.unwrap();
        }
        let mut g = Gapless {
            number: None,
            shop: "victim".into(),
            name: "v".into(),
        };
        g.insert_with_id(&gapless).await.unwrap();
        let mut p = Proxy {
            number: None,
            shop: "victim".into(),
            name: "v".into(),
        };
        p.insert_with_id(&proxied).await.unwrap();
        Plain::sequence(&docs).release().await.unwrap();
        let before = victim(&db, &place, &names).await;
        assert!(
            before[place.counters].len() == 3,
            "{}: three victim counters: {before:?}",
            place.label
        );
        let (mut numbered, mut refusals) = (0, 0);
        for (i, value) in values().into_iter().enumerate() {
            let refused = refused_by_layout(place.label, &value);
            let mut taken = Vec::new();

            let mut t = shop(&value);
            let r = t.insert_with_id(&docs).await;
            taken.push(($plain, outcome("insert_with_id", &value, refused, r)));
            let mut many = [shop(&value), shop(&value)];
            let r = Plain::insert_many_with_ids(&mut many, &docs).await;
            taken.push(($plain, outcome("insert_many_with_ids", &value, refused, r)));
            let r = shop(&value).next_id_for(&docs).await;
            taken.push(($plain, outcome("next_id_for", &value, refused, r)));
            let mut u = Plain {
                name: format!("attacker {i}"),
                ..shop(&value)
            };
            let r = u
                .upsert_with_id(&docs, doc! { "name": format!("attacker {i}") })
                .await;
            taken.push(($plain, outcome("upsert_with_id", &value, refused, r)));
            let mut g = Gapless {
                number: None,
                shop: value.clone(),
                name: "a".into(),
            };
            let r = g.insert_with_id(&gapless).await;
            taken.push(($gapless, outcome("gapless insert", &value, refused, r)));
            let mut p = Proxy {
                number: None,
                shop: value.clone(),
                name: "a".into(),
            };
            let r = p.insert_with_id(&proxied).await;
            let claim_refused = refused || dollar_name(&value);
            taken.push(($proxy, outcome("proxy insert", &value, claim_refused, r)));
            // Nothing is written for a value refused.
            for (coll, refused) in [
                ("tickets", refused),
                ("invoices", refused),
                ("slips", claim_refused),
            ] {
                if refused {
                    assert_eq!(stored_with(&db.collection(coll), &value).await, 0, "{coll}");
                }
            }

            // The operator's calls on the value's counter.
            let seq = Plain::sequence(&docs);
            match seq.in_scope(Scope::new().with("shop", value.clone())) {
                Ok(scoped) => {
                    assert!(!refused, "{} {value}: in_scope took it", place.label);
                    seq.release().await.unwrap();
                    scoped.set_next(40).await.unwrap();
                    assert!(matches!(
                        scoped.set_next(2).await,
                        Err(Error::WouldMoveBackwards { .. })
                    ));
                    scoped.set_next(30).force(true).await.unwrap();
                    let counter = own_counter(&db, &place, $plain, &value).await;
                    assert!(counter.is_some(), "{} {value}: set_next", place.label);
                    assert_eq!(scoped.next().await.unwrap(), 30);
                    seq.release().await.unwrap();
                    scoped.reset().await.unwrap();
                    assert!(scoped.delete().await.unwrap());
                    assert!(own_counter(&db, &place, $plain, &value).await.is_none());
                }
                Err(e) => {
                    assert!(refused, "{} {value}: in_scope refused it: {e}", place.label);
                    assert!(matches!(e, Error::UnmatchableValue { .. }), "{e}");
                }
            }
            // Documents that hold the value, stored by another program: `sync_counters`.
            let stored = doc! { "number": 900_i64, "shop": value.clone(), "name": "raw" };
            let inserted = raw.insert_one(stored).await.unwrap().inserted_id;
            let r = Plain::sequence(&docs).sync_counters(&raw, "number").await;
            let synced = outcome("sync_counters", &value, refused, r);
            if synced {
                let counter = own_counter(&db, &place, $plain, &value).await.unwrap();
                assert!(
                    counter.iter().any(|(_, v)| v.as_i64() == Some(900)),
                    "{} {value}: sync moved its own counter: {counter}",
                    place.label
                );
            }
            raw.delete_one(doc! { "_id": inserted }).await.unwrap();

            for (name, numbered_here) in taken {
                let own = own_counter(&db, &place, name, &value).await;
                assert_eq!(
                    own.is_some(),
                    numbered_here,
                    "{} {value}: a counter of `{name}` holds it literally",
                    place.label
                );
                if numbered_here {
                    numbered += 1;
                } else {
                    refusals += 1;
                }
            }
            assert_eq!(
                victim(&db, &place, &names).await,
                before,
                "{} {value}: the victim's counters, documents and claims are unchanged",
                place.label
            );
        }
        println!(
            "injection: layout={} values={} numbered={numbered} refused={refusals} victim=unchanged",
            place.label,
            values().len()
        );
    }};
}

#[tokio::test]
async fn every_value_stays_data_in_this_crates_layout() {
    matrix!(
        default_layout,
        Place {
            label: "default",
            counters: "counters",
            holds: default_holds,
        },
        "inject_default",
        ["ticket", "ticket_gapless", "ticket_proxy"]
    );
}

#[tokio::test]
async fn every_value_stays_data_in_mongoose_sequences_layout() {
    matrix!(
        mongoose_layout,
        Place {
            label: "mongoose_sequence",
            counters: "counters",
            holds: mongoose_holds,
        },
        "inject_mongoose",
        ["ticket", "ticket_gapless", "ticket_proxy"]
    );
}

#[tokio::test]
async fn every_value_stays_data_in_mongoose_auto_increments_layout() {
    matrix!(
        autoinc_layout,
        Place {
            label: "mongoose_auto_increment",
            counters: "identitycounters",
            holds: autoinc_holds,
        },
        "inject_autoinc",
        ["ticket", "ticket_gapless", "ticket_proxy"]
    );
}

#[tokio::test]
async fn every_value_stays_data_in_a_filter_with_a_scope() {
    matrix!(
        filter_layout,
        Place {
            label: "filter",
            counters: "idcounters",
            holds: filter_holds,
        },
        "inject_filter",
        ["ticket", "ticket_gapless", "ticket_proxy"]
    );
}

#[tokio::test]
async fn every_value_stays_data_in_mongoengines_dotted_names() {
    matrix!(
        mongoengine_layout,
        Place {
            label: "mongoengine",
            counters: "mongoengine.counters",
            holds: default_holds,
        },
        "inject_mongoengine",
        ["tickets.number", "tickets.gapless", "tickets.proxy"]
    );
}

/// Typegoose's layout has no scope: the values reach its filter as names.
#[tokio::test]
async fn every_name_stays_data_in_typegooses_layout() {
    let db = common::database("inject_typegoose").await;
    let options = |name: &str| {
        SequenceOptions::builder(name)
            .layout(Layout::Typegoose)
            .start(0)
            .batch(5)
            .build()
    };
    let victim_seq = Sequence::new(&db, options("Ticket")).unwrap();
    victim_seq.reserve(7).await.unwrap();
    let counters = db.collection::<Document>("identitycounters");
    let victim = || async {
        let docs: Vec<Document> = common::all(&counters).await;
        let mine: Vec<Document> = docs
            .into_iter()
            .filter(|d| d.get_str("modelName") == Ok("Ticket"))
            .collect();
        mine
    };
    let before = victim().await;
    assert_eq!(before.len(), 1);
    let (mut numbered, mut refused) = (0, 0);
    for value in values() {
        let name = value.to_string();
        let seq = match Sequence::new(&db, options(&name)) {
            Ok(seq) => seq,
            Err(e) => {
                assert!(matches!(e, Error::InvalidName { .. }), "{name}: {e}");
                refused += 1;
                continue;
            }
        };
        match seq.next().await {
            Ok(_) => {
                seq.set_next(40).await.unwrap();
                seq.set_next(3).force(true).await.unwrap();
                seq.release().await.unwrap();
                seq.reset().await.unwrap();
                let docs: Vec<Document> = common::all(&counters).await;
                assert!(
                    docs.iter().any(|d| d.get_str("modelName") == Ok(&name)),
                    "{name}: its own counter holds its name"
                );
                assert!(seq.delete().await.unwrap());
                numbered += 1;
            }
            Err(e) => {
                assert!(matches!(e, Error::InvalidName { .. }), "{name}: {e}");
                refused += 1;
            }
        }
        assert_eq!(
            victim().await,
            before,
            "{name}: the victim's counter is unchanged"
        );
    }
    println!(
        "injection: layout=typegoose names={} numbered={numbered} refused={refused} victim=unchanged",
        values().len()
    );
}

/// `purge_periods_before` takes no scope: the values reach its filter as names, which never
/// purge another sequence's periods.
#[tokio::test]
async fn purging_by_an_operator_shaped_name_leaves_other_sequences_alone() {
    let db = common::database("inject_purge").await;
    let clock = std::sync::Arc::new(mongo_sequence::clock::ManualClock::new(
        "2025-11-20T12:00:00Z".parse().unwrap(),
    ));
    let daily = |name: &str, filtered: bool| {
        let mut options = SequenceOptions::builder(name).prefix("YYMMDD");
        if filtered {
            options = options
                .counters("idcounters")
                .field("c")
                .filter(filter::parse("m = name, day = period").unwrap());
        }
        options.build()
    };
    for filtered in [false, true] {
        let victim = Sequence::new(&db, daily("ticket", filtered)).unwrap();
        victim.set_clock(clock.clone());
        victim.next().await.unwrap();
        let coll = if filtered { "idcounters" } else { "counters" };
        let counters: Vec<Document> = common::all(&db.collection::<Document>(coll)).await;
        for value in values() {
            let name = value.to_string();
            let Ok(seq) = Sequence::new(&db, daily(&name, filtered)) else {
                continue;
            };
            let purged = seq
                .purge_periods_before(mongo_sequence::jiff::civil::date(2030, 1, 1))
                .await;
            match purged {
                Ok(n) => assert_eq!(n, 0, "{name}: nothing of its own to purge"),
                Err(e) => assert!(
                    matches!(e, Error::InvalidName { .. } | Error::InvalidArgument { .. }),
                    "{name}: {e}"
                ),
            }
            let after: Vec<Document> = common::all(&db.collection::<Document>(coll)).await;
            assert_eq!(after, counters, "{name}: the victim's periods are kept");
        }
    }
}

/// `ObjectId` is not among the values above: a value every layout numbers, for a control.
#[tokio::test]
async fn a_plain_value_is_numbered_in_every_layout() {
    let db = common::database("inject_control").await;
    let docs = db.collection::<filter_layout::Plain>("tickets");
    let id = Bson::ObjectId(ObjectId::new());
    let mut t = filter_layout::Plain {
        number: None,
        shop: id.clone(),
        name: "x".into(),
    };
    assert_eq!(t.insert_with_id(&docs).await.unwrap(), 1);
    let counters: Vec<Document> = common::all(&db.collection::<Document>("idcounters")).await;
    assert!(counters.iter().any(|d| filter_holds(d, "ticket", &id)));
}

/// Arbitrary scope values: leaves of every kind, in documents and arrays whose keys include
/// operators, at any depth.
fn arbitrary_values() -> impl proptest::strategy::Strategy<Value = Bson> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        proptest::sample::select(vec!["victim", "$gt", "", "a"]).prop_map(Bson::from),
        (-2_i64..4).prop_map(Bson::Int64),
        Just(Bson::Double(0.5)),
        any::<bool>().prop_map(Bson::Boolean),
        Just(Bson::Null),
        Just(Bson::RegularExpression(Regex {
            pattern: ".".into(),
            options: String::new(),
        })),
    ];
    leaf.prop_recursive(3, 10, 3, |inner| {
        let key = proptest::sample::select(vec!["a", "$ne", "$gt", "$in", "$where", "$regex"]);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
            proptest::collection::vec((key, inner), 0..3).prop_map(|fields| {
                let fields = fields.into_iter().map(|(k, v)| (k.to_owned(), v));
                Bson::Document(fields.collect())
            }),
        ]
    })
}

/// On the real server, for a sample of arbitrary values: the filter of a value's counter
/// matches that counter alone, which holds the value literally, beside the victim's and
/// another value's (`store/filter_properties.rs` checks the same on many more cases against
/// a model of the server's reading).
#[test]
fn a_sample_of_arbitrary_values_each_finds_its_own_counter_on_the_server() {
    use mongo_sequence::id::CounterKey;
    use mongo_sequence::store::MongoStore;
    use proptest::test_runner::{Config, TestRunner};

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let db = runtime.block_on(common::database("inject_sample"));
    let layouts: [(&str, &str, Holds, SequenceOptions); 3] = [
        (
            "default",
            "counters",
            default_holds,
            SequenceOptions::builder("ticket").scope(["shop"]).build(),
        ),
        (
            "mongoose_sequence",
            "mongoose",
            mongoose_holds,
            SequenceOptions::builder("ticket")
                .scope(["shop"])
                .layout(Layout::MongooseSequence)
                .counters("mongoose")
                .build(),
        ),
        (
            "filter",
            "idcounters",
            filter_holds,
            SequenceOptions::builder("ticket")
                .scope(["shop"])
                .counters("idcounters")
                .field("c")
                .filter(filter::parse("m = name, shop = scope(shop)").unwrap())
                .build(),
        ),
    ];
    let (cases, checked) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut runner = TestRunner::new(Config {
        cases: 24,
        ..Config::default()
    });
    runner
        .run(&(arbitrary_values(), arbitrary_values()), |(a, b)| {
            cases.set(cases.get() + 1);
            runtime.block_on(async {
                for (label, counters, holds, options) in &layouts {
                    let seq = Sequence::new(&db, options.clone()).unwrap();
                    let store = MongoStore::new(&db, options).unwrap();
                    for value in [&"victim".into(), &a, &b] {
                        let scope = Scope::new().with("shop", value.clone());
                        let Ok(scoped) = seq.in_scope(scope.clone()) else {
                            continue;
                        };
                        scoped.next().await.unwrap();
                        let key = CounterKey::of("ticket", None, Some(&scope));
                        let filter = store.filter(&key).unwrap();
                        let coll = db.collection::<Document>(counters);
                        let found: Vec<Document> = {
                            use futures_util::TryStreamExt;
                            coll.find(filter.clone())
                                .await
                                .unwrap()
                                .try_collect()
                                .await
                                .unwrap()
                        };
                        assert_eq!(found.len(), 1, "{label} {value}: {filter} found {found:?}");
                        assert!(
                            holds(&found[0], "ticket", value),
                            "{label} {value}: {filter} found {}",
                            found[0]
                        );
                        checked.set(checked.get() + 1);
                    }
                }
            });
            Ok(())
        })
        .unwrap();
    println!(
        "injection: server sample cases={} filters checked={}",
        cases.get(),
        checked.get()
    );
}
