//! The `mongo-sequence` command line, run as a process against a real server: each command,
//! its `--json` output parsed, its exit status.

use std::process::{Command, Output};

use mongo_sequence_runtime::{
    clock::ManualClock, jiff, options::Layout, Scope, Sequence, SequenceOptions,
};
use mongodb::bson::{doc, Document};
use sequence_testkit::{unique_db_name, TestServer};
use serde_json::Value;

fn uri() -> String {
    TestServer::shared_or_panic().uri().to_owned()
}

/// Runs the command line with `args` against the test server.
fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mongo-sequence"))
        .env_remove("MONGODB_URI")
        .arg("--uri")
        .arg(uri())
        .args(args)
        .output()
        .expect("the command line runs")
}

/// Runs it, expects success, and parses its JSON output.
fn json(args: &[&str]) -> Value {
    let out = cli(&[args, &["--json"]].concat());
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the output is JSON")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A database with counters of every kind: plain, of two periods, scoped, and mongoose's.
async fn counters(name: &str) -> (String, mongodb::Database) {
    let db_name = unique_db_name(name);
    let db = TestServer::shared_or_panic()
        .client()
        .await
        .database(&db_name);
    let userid = Sequence::new(&db, SequenceOptions::builder("userid").build()).unwrap();
    userid.set_next(42).await.unwrap();
    let clock = std::sync::Arc::new(ManualClock::new("2025-11-20T12:00:00Z".parse().unwrap()));
    let inv = Sequence::new(
        &db,
        SequenceOptions::builder("inv")
            .prefix("YYMMDD")
            .clock(clock.clone())
            .build(),
    )
    .unwrap();
    for _ in 0..3 {
        for _ in 0..2 {
            inv.next().await.unwrap();
        }
        clock.advance(jiff::SignedDuration::from_hours(24));
    }
    let order = Sequence::new(
        &db,
        SequenceOptions::builder("order").scope(["tenant"]).build(),
    )
    .unwrap();
    let acme = order.in_scope(Scope::new().with("tenant", "acme")).unwrap();
    acme.reserve(7).await.unwrap();
    let shared = SequenceOptions::builder("shared")
        .counters("identitycounters")
        .layout(Layout::Mongoose)
        .build();
    Sequence::new(&db, shared)
        .unwrap()
        .reserve(5)
        .await
        .unwrap();
    (db_name, db)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_show_decode_every_counter() {
    let (db, _) = counters("cli_list").await;
    let listed = json(&["list", &db]);
    let rows: Vec<(String, Value, Value, Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["period"].clone(),
                c["scope"].clone(),
                c["last_issued"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("inv".into(), "20251120".into(), Value::Null, 2.into()),
            ("inv".into(), "20251121".into(), Value::Null, 2.into()),
            ("inv".into(), "20251122".into(), Value::Null, 2.into()),
            (
                "order".into(),
                Value::Null,
                serde_json::json!({ "tenant": "acme" }),
                7.into()
            ),
            ("userid".into(), Value::Null, Value::Null, 41.into()),
        ]
    );
    let mongoose = json(&["list", &db, "--counters", "identitycounters"]);
    assert_eq!(mongoose[0]["layout"], "mongoose");
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
        stderr(&missing).contains("does not exist"),
        "{}",
        stderr(&missing)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_next_refuses_to_go_backwards_without_force() {
    let (db, database) = counters("cli_set_next").await;
    let current = || async {
        database
            .collection::<Document>("counters")
            .find_one(doc! { "_id": "userid" })
            .await
            .unwrap()
            .unwrap()
            .get_i64("seq")
            .unwrap()
    };
    let dry = json(&["set-next", &db, "userid", "100", "--dry-run"]);
    assert_eq!(
        (dry["old"].as_i64(), dry["new"].as_i64()),
        (Some(41), Some(99))
    );
    assert_eq!(current().await, 41, "a dry run writes nothing");
    json(&["set-next", &db, "userid", "100"]);
    assert_eq!(current().await, 99);
    let back = cli(&["set-next", &db, "userid", "50"]);
    assert_eq!(back.status.code(), Some(1));
    assert!(stderr(&back).contains("backwards"), "{}", stderr(&back));
    assert_eq!(current().await, 99);
    json(&["set-next", &db, "userid", "50", "--force"]);
    assert_eq!(current().await, 49);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_moves_counters_past_imported_ids_and_purge_deletes_old_periods() {
    let (db, database) = counters("cli_sync").await;
    let docs = database.collection::<Document>("docs");
    docs.insert_many((1..=30_i64).map(|i| doc! { "_id": i }))
        .await
        .unwrap();
    let target = format!("{db}.docs");
    let dry = json(&["sync", &target, "--name", "legacy", "--dry-run"]);
    assert_eq!(dry["counters"][0]["new"], 30);
    assert_eq!(dry["dry_run"], true);
    let counters = database.collection::<Document>("counters");
    assert!(counters
        .find_one(doc! { "_id": "legacy" })
        .await
        .unwrap()
        .is_none());
    let done = cli(&["sync", &target, "--name", "legacy"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(stdout(&done).contains("1 moved"), "{}", stdout(&done));
    let legacy = counters
        .find_one(doc! { "_id": "legacy" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(legacy.get_i64("seq"), Ok(30));

    let dry = json(&[
        "purge-before",
        &db,
        "inv",
        "2025-11-22",
        "--prefix",
        "YYMMDD",
        "--dry-run",
    ]);
    assert_eq!(dry["counters"], 2);
    let done = json(&[
        "purge-before",
        &db,
        "inv",
        "2025-11-22",
        "--prefix",
        "YYMMDD",
    ]);
    assert_eq!(done["counters"], 2);
    let left = json(&["list", &db]);
    let periods: Vec<&str> = left
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["period"].as_str())
        .collect();
    assert_eq!(periods, ["20251122"]);
}

#[test]
fn bad_usage_exits_with_status_2_and_says_what_to_fix() {
    let no_uri = Command::new(env!("CARGO_BIN_EXE_mongo-sequence"))
        .env_remove("MONGODB_URI")
        .args(["list", "db"])
        .output()
        .unwrap();
    assert_eq!(no_uri.status.code(), Some(2));
    assert!(
        stderr(&no_uri).contains("MONGODB_URI"),
        "{}",
        stderr(&no_uri)
    );
    for args in [
        &["list"][..],
        &["frobnicate"],
        &["show", "db", "x", "--scope", "no-equals-sign"],
        &["sync", "no-dot", "--name", "x"],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty());
    }
}
