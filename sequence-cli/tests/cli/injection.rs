//! Every value stays data on the command line: operator-shaped `--scope` values (and, in
//! typegoose's layout, names) through `next`, `show`, `set-next`, `delete`, `sync`, `check` and
//! `repair` in every layout. A victim tenant's counters, documents and claims stay byte for
//! byte as they were; each value is numbered on a counter of its own that holds it literally,
//! or refused with exit status 2 and a message naming the field, nothing written for it.

use std::collections::BTreeMap;

use mongodb::bson::{doc, oid::ObjectId, Bson, Document};
use sequence_runtime::options::{filter, Layout};
use sequence_runtime::{Scope, Sequence, SequenceOptions};

use crate::support::{all, cli, fresh_database, stderr, stdout};

/// The values an attacker sends, as the JSON of `--scope shop=<JSON>`.
const VALUES: [&str; 15] = [
    r#"{"$ne":null}"#,
    r#"{"$gt":""}"#,
    r#"{"$regex":"."}"#,
    r#"{"$where":"true"}"#,
    r#"{"$expr":{"$eq":[1,1]}}"#,
    r#"{"$in":["victim"]}"#,
    r#"{"a":{"b":{"$gt":""}}}"#,
    r#"{"a":[{"$ne":"x"}]}"#,
    r#"{}"#,
    r#"["victim"]"#,
    r#"[]"#,
    r#"null"#,
    r#"{"$regularExpression":{"pattern":".","options":""}}"#,
    r#"{"$oid":"0123456789abcdef01234567"}"#,
    r#""$ne""#,
];

/// The value the command line reads from `json`, as it reads it.
fn read(json: &str) -> Bson {
    Bson::try_from(serde_json::from_str::<serde_json::Value>(json).unwrap()).unwrap()
}

/// One layout: the flags that name it, the options of the same sequence in the library, the
/// collection of its counters, and how a counter is told to hold a scope value literally.
struct Row {
    label: &'static str,
    name: &'static str,
    flags: &'static [&'static str],
    /// The same flags as `sync` takes them (`--counter-field` for `--field`).
    sync_flags: &'static [&'static str],
    counters: &'static str,
    options: fn(&str) -> SequenceOptions,
    holds: fn(&Document, &str, &Bson) -> bool,
    /// Whether the layout refuses `value` as a scope value.
    refuses: fn(&Bson) -> bool,
}

fn scoped(name: &str) -> sequence_runtime::options::SequenceOptionsBuilder {
    SequenceOptions::builder(name).scope(["shop"])
}

fn default_holds(doc: &Document, name: &str, value: &Bson) -> bool {
    let scope = Scope::new().with("shop", value.clone());
    let key = sequence_runtime::id::CounterKey::of(name, None, Some(&scope));
    doc.get("_id") == Some(key.value())
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            label: "default",
            name: "ticket",
            flags: &[],
            sync_flags: &[],
            counters: "counters",
            options: |n| scoped(n).build(),
            holds: default_holds,
            refuses: |_| false,
        },
        Row {
            label: "mongoose_sequence",
            name: "ticket",
            flags: &["--layout", "mongoose_sequence"],
            sync_flags: &["--layout", "mongoose_sequence"],
            counters: "counters",
            options: |n| scoped(n).layout(Layout::MongooseSequence).build(),
            holds: |d, n, v| {
                d.get_str("id") == Ok(n)
                    && d.get("reference_value") == Some(&Bson::Document(doc! { "shop": v.clone() }))
            },
            refuses: |_| false,
        },
        Row {
            label: "mongoose_auto_increment",
            name: "Ticket",
            flags: &[
                "--layout",
                "mongoose_auto_increment",
                "--counters",
                "identitycounters",
            ],
            sync_flags: &[
                "--layout",
                "mongoose_auto_increment",
                "--counters",
                "identitycounters",
            ],
            counters: "identitycounters",
            options: |n| scoped(n).layout(Layout::MongooseAutoIncrement).build(),
            holds: |d, n, v| {
                let text = match v {
                    Bson::String(s) => s.clone(),
                    Bson::ObjectId(id) => id.to_hex(),
                    _ => return false,
                };
                d.get_str("model") == Ok(n) && d.get_str("groupingField") == Ok(&text)
            },
            refuses: |v| !matches!(v, Bson::String(_) | Bson::ObjectId(_)),
        },
        Row {
            label: "filter",
            name: "ticket",
            flags: &[
                "--counters",
                "idcounters",
                "--field",
                "c",
                "--filter",
                "m = name, shop = scope(shop)",
            ],
            sync_flags: &[
                "--counters",
                "idcounters",
                "--counter-field",
                "c",
                "--filter",
                "m = name, shop = scope(shop)",
            ],
            counters: "idcounters",
            options: |n| {
                scoped(n)
                    .counters("idcounters")
                    .field("c")
                    .filter(filter::parse("m = name, shop = scope(shop)").unwrap())
                    .build()
            },
            holds: |d, n, v| d.get_str("m") == Ok(n) && d.get("shop") == Some(v),
            refuses: |v| matches!(v, Bson::Array(_) | Bson::Null),
        },
        Row {
            label: "mongoengine",
            name: "tickets.number",
            flags: &["--counters", "mongoengine.counters", "--field", "next"],
            sync_flags: &[
                "--counters",
                "mongoengine.counters",
                "--counter-field",
                "next",
            ],
            counters: "mongoengine.counters",
            options: |n| {
                scoped(n)
                    .counters("mongoengine.counters")
                    .field("next")
                    .build()
            },
            holds: default_holds,
            refuses: |_| false,
        },
    ]
}

/// What belongs to the victim, byte for byte: its counter, documents and claims.
async fn victim(db: &mongodb::Database, row: &Row) -> BTreeMap<String, Vec<Vec<u8>>> {
    let victim = Bson::from("victim");
    let mut found = BTreeMap::new();
    for coll in db.list_collection_names().await.unwrap() {
        let docs = all(&db.collection::<Document>(&coll)).await;
        let mine: Vec<Vec<u8>> = docs
            .iter()
            .filter(|d| {
                (coll == row.counters && (row.holds)(d, row.name, &victim))
                    || d.get("shop") == Some(&victim)
                    || d.get_document("_id").ok().and_then(|id| id.get("shop")) == Some(&victim)
            })
            .map(|d| mongodb::bson::to_vec(d).unwrap())
            .collect();
        if !mine.is_empty() {
            found.insert(coll, mine);
        }
    }
    found
}

/// Runs the command line and returns whether it succeeded; a failure must be a refusal
/// (status 2) naming `named`, or, where `missing_ok`, a counter that does not exist (1).
fn run(args: &[&str], named: &str, missing_ok: bool) -> bool {
    let out = cli(args);
    match out.status.code() {
        Some(0) => true,
        Some(2) => {
            assert!(stderr(&out).contains(named), "{args:?}: {}", stderr(&out));
            false
        }
        Some(1) if missing_ok => false,
        other => panic!(
            "{args:?}: status {other:?}: {}{}",
            stdout(&out),
            stderr(&out)
        ),
    }
}

async fn matrix(row: Row) {
    let (db_name, db) = fresh_database(&format!("cli_inject_{}", row.label)).await;
    let seq = Sequence::new(&db, (row.options)(row.name)).unwrap();
    let tickets = db.collection::<Document>("tickets");
    let imported = db.collection::<Document>("imported");
    let claims = db.collection::<Document>("tickets.claims.number");
    let victim_scope = Scope::new().with("shop", "victim");
    for _ in 0..3 {
        let number = seq
            .in_scope(victim_scope.clone())
            .unwrap()
            .next()
            .await
            .unwrap();
        let id = ObjectId::new();
        tickets
            .insert_one(doc! { "_id": id, "number": number, "shop": "victim" })
            .await
            .unwrap();
        claims
            .insert_one(doc! { "_id": { "shop": "victim", "id": number }, "doc": id })
            .await
            .unwrap();
    }
    let before = victim(&db, &row).await;
    assert_eq!(before[row.counters].len(), 1, "{}: {before:?}", row.label);
    let target = format!("{db_name}.tickets");
    let (mut numbered, mut refused) = (0, 0);
    for (i, json) in VALUES.iter().enumerate() {
        let value = read(json);
        let must_refuse = (row.refuses)(&value);
        let scope = format!("shop={json}");
        let with = |args: &[&str]| -> Vec<String> {
            let mut all: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            all.extend(row.flags.iter().map(|f| (*f).to_owned()));
            all
        };
        let call = |args: Vec<String>, missing_ok: bool| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run(&args, "`shop`", missing_ok)
        };
        let own = || async {
            let docs = all(&db.collection::<Document>(row.counters)).await;
            docs.into_iter().find(|d| (row.holds)(d, row.name, &value))
        };

        let taken = call(
            with(&["next", &db_name, row.name, "--create", "--scope", &scope]),
            false,
        );
        assert_eq!(taken, !must_refuse, "{} {json}: next", row.label);
        assert_eq!(
            own().await.is_some(),
            taken,
            "{} {json}: its own counter",
            row.label
        );
        let shown = call(with(&["show", &db_name, row.name, "--scope", &scope]), true);
        assert_eq!(shown, taken, "{} {json}: show", row.label);
        let set = call(
            with(&["set-next", &db_name, row.name, "40", "--scope", &scope]),
            false,
        );
        assert_eq!(set, taken, "{} {json}: set-next", row.label);
        let forced = call(
            with(&[
                "set-next",
                &db_name,
                row.name,
                "5",
                "--scope",
                &scope,
                "--force",
                "--reissue",
            ]),
            false,
        );
        assert_eq!(forced, taken, "{} {json}: set-next --force", row.label);
        let deleted = call(
            with(&["delete", &db_name, row.name, "--scope", &scope, "--force"]),
            true,
        );
        assert_eq!(deleted, taken, "{} {json}: delete", row.label);
        assert!(own().await.is_none(), "{} {json}: deleted", row.label);

        // Documents holding the value, stored by another program: `sync` (IDs in `_id`),
        // `check` and `repair` (IDs in `number`, claimed by `_id`).
        let id = ObjectId::new();
        let number = 900 + i as i64;
        tickets
            .insert_one(doc! { "_id": id, "number": number, "shop": value.clone() })
            .await
            .unwrap();
        imported
            .insert_one(doc! { "_id": number, "shop": value.clone() })
            .await
            .unwrap();
        let mut sync = vec![
            "sync".to_owned(),
            format!("{db_name}.imported"),
            "--name".into(),
            row.name.into(),
            "--scope".into(),
            "shop".into(),
        ];
        sync.extend(row.sync_flags.iter().map(|f| (*f).to_owned()));
        let synced = call(sync, false);
        assert_eq!(synced, taken, "{} {json}: sync", row.label);
        if synced {
            let counter = own().await.unwrap();
            assert!(
                counter.iter().any(|(_, v)| v.as_i64() == Some(number)),
                "{} {json}: sync moved its own counter: {counter}",
                row.label
            );
        }
        let claim = ["--field", "number", "--scope", "shop"];
        let checked = cli(&[&["check", &target][..], &claim].concat());
        assert_eq!(
            checked.status.code(),
            Some(3),
            "{json}: {}",
            stderr(&checked)
        );
        let repaired = cli(&[&["repair", &target][..], &claim].concat());
        let claimable = !has_dollar_name(&value);
        assert_eq!(
            repaired.status.success(),
            claimable,
            "{} {json}: repair: {}",
            row.label,
            stderr(&repaired)
        );
        tickets.delete_one(doc! { "_id": id }).await.unwrap();
        imported.delete_one(doc! { "_id": number }).await.unwrap();
        if claimable {
            let gone = cli(&[&["repair", &target, "--prune"][..], &claim].concat());
            assert!(gone.status.success(), "{json}: {}", stderr(&gone));
        }

        if taken {
            numbered += 1;
        } else {
            refused += 1;
        }
        assert_eq!(
            victim(&db, &row).await,
            before,
            "{} {json}: the victim's counter, documents and claims are unchanged",
            row.label
        );
    }
    println!(
        "cli injection: layout={} values={} numbered={numbered} refused={refused} victim=unchanged",
        row.label,
        VALUES.len()
    );
}

/// Whether `value` holds a `$`-prefixed field name, which a claim's `_id` cannot store.
fn has_dollar_name(value: &Bson) -> bool {
    match value {
        Bson::Document(d) => d
            .iter()
            .any(|(k, v)| k.starts_with('$') || has_dollar_name(v)),
        Bson::Array(a) => a.iter().any(has_dollar_name),
        _ => false,
    }
}

/// The matrix of the layout labelled `label`.
async fn matrix_of(label: &str) {
    let row = rows().into_iter().find(|r| r.label == label).unwrap();
    matrix(row).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scope_value_stays_data_in_this_crates_layout() {
    matrix_of("default").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scope_value_stays_data_in_mongoose_sequences_layout() {
    matrix_of("mongoose_sequence").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scope_value_stays_data_in_mongoose_auto_increments_layout() {
    matrix_of("mongoose_auto_increment").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scope_value_stays_data_in_a_filter_with_a_scope() {
    matrix_of("filter").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scope_value_stays_data_in_mongoengines_dotted_names() {
    matrix_of("mongoengine").await;
}

/// Typegoose's layout has no scope: the values reach its filter as the name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_name_stays_data_in_typegooses_layout_on_the_command_line() {
    let (db_name, db) = fresh_database("cli_inject_typegoose").await;
    let options = SequenceOptions::builder("Ticket")
        .layout(Layout::Typegoose)
        .start(0)
        .build();
    Sequence::new(&db, options)
        .unwrap()
        .reserve(7)
        .await
        .unwrap();
    let counters = db.collection::<Document>("identitycounters");
    let before = all(&counters).await;
    let flags = ["--layout", "typegoose", "--counters", "identitycounters"];
    for name in VALUES {
        let with = |args: &[&str]| -> Vec<String> {
            args.iter().chain(&flags).map(|a| (*a).to_owned()).collect()
        };
        let cli = |args: Vec<String>| cli(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let out = cli(with(&["next", &db_name, name, "--create"]));
        match out.status.code() {
            Some(0) => {
                assert!(cli(with(&["set-next", &db_name, name, "40"]))
                    .status
                    .success());
                let args = with(&["delete", &db_name, name, "--force"]);
                assert!(cli(args).status.success(), "{name}");
            }
            Some(2) => assert!(stderr(&out).contains("name"), "{name}: {}", stderr(&out)),
            other => panic!("{name}: {other:?}: {}", stderr(&out)),
        }
        assert_eq!(
            all(&counters).await,
            before,
            "{name}: the victim's counter is unchanged"
        );
    }
}

/// The two commands of the report, as written: the victim's counter stays at 100, and
/// `{"$ne":null}` is numbered as a tenant of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reported_commands_leave_the_victim_at_100() {
    let (db_name, db) = fresh_database("inj").await;
    let counters = db.collection::<Document>("idcounters");
    counters
        .insert_one(doc! { "m": "Ticket", "shop": "victim", "c": 100 })
        .await
        .unwrap();
    let victim = || async {
        let docs = all(&counters).await;
        docs.into_iter()
            .find(|d| d.get_str("shop") == Ok("victim"))
            .unwrap()
    };
    let before = victim().await;
    let shape = [
        "--counters",
        "idcounters",
        "--field",
        "c",
        "--filter",
        r#"m = "Ticket", shop = scope(shop)"#,
        "--scope",
        r#"shop={"$ne":null}"#,
    ];
    let next = cli(&[
        &["next", &db_name, "ticket", "1"][..],
        &shape,
        &["--create"],
    ]
    .concat());
    assert!(next.status.success(), "{}", stderr(&next));
    assert_eq!(stdout(&next).trim(), "1");
    let set = cli(&[
        &["set-next", &db_name, "ticket", "5"][..],
        &shape,
        &["--force", "--reissue"],
    ]
    .concat());
    assert!(set.status.success(), "{}", stderr(&set));
    assert!(
        stdout(&set).contains(r#"{ "seq": "ticket", "scope": { "shop": { "$ne": null } } }"#),
        "the message shows the value as given: {}",
        stdout(&set)
    );
    assert_eq!(
        victim().await,
        before,
        "the victim's counter is still at 100"
    );
    let own = all(&counters).await;
    let own: Vec<&Document> = own
        .iter()
        .filter(|d| d.get("shop") == Some(&Bson::Document(doc! { "$ne": Bson::Null })))
        .collect();
    assert_eq!(own.len(), 1, "{own:?}");
    assert_eq!(own[0].get_i64("c"), Ok(4), "{}", own[0]);
}
