//! `list`: every counters collection of a database decoded, each counter with its record, its
//! limits and the room it has left, filtered by name, in counters of another field, and read
//! by an operator who may not read the sequences' records.

use std::process::Command;

use mongodb::bson::{doc, Document};
use sequence_runtime::{Sequence, SequenceOptions};
use sequence_testkit::TestServer;
use serde_json::Value;

use crate::support::{cli, counters, fresh_database, json, json_error, stderr, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_show_decode_every_counter() {
    let (db, _) = counters("cli_list").await;
    let listed = json(&["list", &db]);
    let rows: Vec<(String, String, Value, Value, Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["counters"].as_str().unwrap().to_owned(),
                c["period"].clone(),
                c["scope"].clone(),
                c["last_issued"].clone(),
            )
        })
        .collect();
    let here = |name: &str, counters: &str, period: Value, scope: Value, last: i64| {
        (
            name.to_owned(),
            counters.to_owned(),
            period,
            scope,
            Value::from(last),
        )
    };
    assert_eq!(
        rows,
        [
            here("inv", "counters", "20251120".into(), Value::Null, 2),
            here("inv", "counters", "20251121".into(), Value::Null, 2),
            here("inv", "counters", "20251122".into(), Value::Null, 2),
            here(
                "order",
                "counters",
                Value::Null,
                serde_json::json!({ "tenant": "acme" }),
                7
            ),
            here("userid", "counters", Value::Null, Value::Null, 41),
            here("shared", "identitycounters", Value::Null, Value::Null, 5),
        ],
        "every counters collection of the database, each with its record"
    );
    let mongoose = json(&["list", &db, "--counters", "identitycounters"]);
    assert_eq!(mongoose[0]["layout"], "mongoose_sequence");
    assert_eq!(mongoose[0]["last_issued"], 5);

    let table = cli(&["list", &db]);
    assert!(table.status.success());
    let text = stdout(&table);
    assert!(
        text.contains("last issued") && text.contains("userid"),
        "{text}"
    );

    let shown = json(&["show", &db, "inv", "--period", "20251121"]);
    assert_eq!(
        (shown["period"].as_str(), shown["last_issued"].as_i64()),
        (Some("20251121"), Some(2))
    );
    let shown = json(&["show", &db, "order", "--scope", "tenant=acme"]);
    assert_eq!(shown["last_issued"], 7);
    let missing = cli(&["show", &db, "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("`nope` has no counter and no record"),
        "{}",
        stderr(&missing)
    );
    let absent = cli(&["show", &db, "order", "--scope", "tenant=globex"]);
    assert_eq!(
        stderr(&absent),
        format!(
            "error: sequence `order` has no counter `{{ \"seq\": \"order\", \"scope\": {{ \
             \"tenant\": \"globex\" }} }}` in `{db}.counters`: its counters are per period, \
             scope value or shard\nhint: name one: --scope tenant=acme\n"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_the_room_left_and_filters_by_name() {
    let (db, _) = counters("cli_room").await;
    let inv = json(&["list", &db, "--name", "in*"]);
    assert_eq!(inv.as_array().unwrap().len(), 3);
    assert!(inv.as_array().unwrap().iter().all(|c| c["name"] == "inv"));
    assert_eq!(
        json(&["list", &db, "--name", "?serid"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        json(&["list", &db, "--name", "user"]),
        serde_json::json!([])
    );

    let userid = json(&["list", &db, "--name", "userid", "--max", "100"]);
    assert_eq!(
        (
            userid[0]["max"].as_i64(),
            userid[0]["room_left"].as_u64(),
            userid[0]["used"].as_f64()
        ),
        (Some(100), Some(59), Some(0.41))
    );
    let default_max = json(&["list", &db, "--name", "userid"]);
    assert_eq!(default_max[0]["max"], i64::MAX);
    assert_eq!(default_max[0]["room_left"], i64::MAX as u64 - 41);
    let text = cli(&["list", &db, "--name", "userid", "--max", "100"]);
    let text = stdout(&text);
    assert!(text.contains("left") && text.contains("41.00%"), "{text}");
    let tiny = stdout(&cli(&["list", &db, "--name", "userid"]));
    assert!(tiny.contains("<0.01%"), "{tiny}");
    let shown = json(&[
        "show",
        &db,
        "order",
        "--scope",
        "tenant=acme",
        "--max",
        "10",
    ]);
    assert_eq!(
        (shown["room_left"].as_u64(), shown["used"].as_f64()),
        (Some(3), Some(0.7))
    );
    json_error(&["list", &db, "--start", "10", "--max", "5"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_of_another_field_are_decoded() {
    let (db_name, database) = fresh_database("cli_field").await;
    let db = db_name.as_str();
    let legacy = database.collection::<Document>("legacy");
    legacy
        .insert_many([
            doc! { "_id": "personIdCounter", "sequence": 41 },
            doc! { "_id": "invoice", "COUNT": 1042_i64 },
        ])
        .await
        .unwrap();
    // Without `--field`, the rows say which field to give.
    let listed = json(&["list", db, "--counters", "legacy"]);
    let hints: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["last_issued"]["hint"].as_str().unwrap())
        .collect();
    assert!(hints[0].contains("--field COUNT"), "{listed}");
    assert!(hints[1].contains("--field sequence"), "{listed}");

    let person = json(&[
        "show",
        db,
        "personIdCounter",
        "--counters",
        "legacy",
        "--field",
        "sequence",
    ]);
    assert_eq!(person["last_issued"], 41);
    let next_free = [
        "--counters",
        "legacy",
        "--field",
        "COUNT",
        "--stores",
        "next_free",
    ];
    let invoice = json(&[&["show", db, "invoice"][..], &next_free].concat());
    assert_eq!(invoice["last_issued"], 1041, "COUNT holds the next value");
    let listed = json(&[&["list", db, "--name", "invoice"][..], &next_free].concat());
    assert_eq!(listed[0]["last_issued"], 1041);
    let text = stdout(&cli(
        &[&["list", db, "--name", "invoice"][..], &next_free].concat()
    ));
    assert!(text.contains("1041") && !text.contains("corrupt"), "{text}");

    let moved = json(&[&["set-next", db, "invoice", "2000"][..], &next_free].concat());
    assert_eq!(moved["old"], 1041);
    let count = || async {
        legacy
            .find_one(doc! { "_id": "invoice" })
            .await
            .unwrap()
            .unwrap()
            .get_i64("COUNT")
            .unwrap()
    };
    assert_eq!(count().await, 2000, "the next value, as COUNT holds it");

    // `sync` reads and moves them too.
    database
        .collection::<Document>("invoices")
        .insert_many((2990..=3000_i64).map(|i| doc! { "_id": i }))
        .await
        .unwrap();
    let synced = json(&[
        "sync",
        &format!("{db}.invoices"),
        "--name",
        "invoice",
        "--counters",
        "legacy",
        "--counter-field",
        "COUNT",
        "--stores",
        "next_free",
    ]);
    assert_eq!(
        (
            synced["counters"][0]["old"].as_i64(),
            synced["counters"][0]["new"].as_i64()
        ),
        (Some(1999), Some(3000))
    );
    assert_eq!(count().await, 3001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_the_recorded_limits_or_says_they_are_unknown() {
    let (db_name, db) = fresh_database("cli_limits").await;
    let invoice = Sequence::new(
        &db,
        SequenceOptions::builder("invoice")
            .prefix("INV-")
            .width(4)
            .build(),
    )
    .unwrap();
    invoice.set_next(100).await.unwrap();
    // A counter of other code: no record.
    db.collection::<Document>("counters")
        .insert_one(doc! { "_id": "legacy", "seq": 41_i64 })
        .await
        .unwrap();
    let listed = json(&["list", &db_name]);
    let row = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        (
            row("invoice")["max"].as_i64(),
            row("invoice")["room_left"].as_u64()
        ),
        (Some(9999), Some(9900)),
        "width 4 leaves room for 9,999"
    );
    assert_eq!(
        (
            row("legacy")["max"].clone(),
            row("legacy")["room_left"].clone()
        ),
        (Value::Null, Value::Null)
    );
    let text = stdout(&cli(&["list", &db_name]));
    let legacy = text.lines().find(|l| l.contains("legacy")).unwrap();
    assert!(legacy.contains("unknown"), "{text}");
    assert!(!text.contains("9223372036854775807"), "{text}");
}

/// With access control, an operator who may read the counters but not the sequences' records
/// still lists them, warned that the limits are unknown and gapless sequences not recognised.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_without_the_privilege_to_read_records_warns_and_lists() {
    let server = tokio::task::spawn_blocking(|| {
        TestServer::start(sequence_testkit::ServerOptions::default().arg("--auth"))
    })
    .await
    .unwrap()
    .expect("a mongod with --auth starts");
    let root = server.create_root_user("root", "root-pw").await;
    let db = root.database("ops");
    db.collection::<Document>("counters")
        .insert_one(doc! { "_id": "invoice", "seq": 41_i64 })
        .await
        .unwrap();
    db.run_command(doc! {
        "createRole": "countersReader",
        "privileges": [{ "resource": { "db": "ops", "collection": "counters" }, "actions": ["find"] }],
        "roles": [],
    })
    .await
    .unwrap();
    root.database("admin")
        .run_command(doc! {
            "createUser": "operator",
            "pwd": "operator-pw",
            "roles": [{ "role": "countersReader", "db": "ops" }],
        })
        .await
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mongo-sequence"))
        .env_remove("MONGODB_URI")
        .arg("--uri")
        .arg(server.uri_with_credentials("operator", "operator-pw"))
        .args(["list", "ops"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("invoice"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("cannot read the sequences' settings in `ops.counters.sequences`"),
        "{}",
        stderr(&out)
    );
    drop((root, db));
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}
