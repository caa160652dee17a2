//! The `mongo-sequence` command line, run as a process against a real server: each command,
//! its `--json` output parsed, its exit status.

use std::process::{Command, Output};

use mongodb::bson::{doc, oid::ObjectId, Bson, Document};
use sequence_runtime::options::{CheckDigit, Layout};
use sequence_runtime::{clock::ManualClock, jiff, Scope, Sequence, SequenceOptions};
use sequence_testkit::{unique_db_name, TestServer};
use serde_json::Value;

#[path = "cli/adoption.rs"]
mod adoption;
#[path = "cli/injection.rs"]
mod injection;
#[path = "cli/progress.rs"]
mod progress;

fn uri() -> String {
    TestServer::shared_or_panic().uri().to_owned()
}

/// A database of its own on the test server, and its name.
async fn fresh_database(name: &str) -> (String, mongodb::Database) {
    let db_name = unique_db_name(name);
    let db = TestServer::shared_or_panic()
        .client()
        .await
        .database(&db_name);
    (db_name, db)
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

/// Runs it with `--json`, expects exit status `code`, and parses the JSON error on stderr
/// (stdout stays empty).
fn json_error(args: &[&str], code: i32) -> Value {
    let out = cli(&[args, &["--json"]].concat());
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
    let error: Value = serde_json::from_slice(&out.stderr)
        .unwrap_or_else(|e| panic!("{args:?}: the error is not JSON ({e}): {}", stderr(&out)));
    assert!(error["error"].is_string(), "{error}");
    error
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A database with counters of every kind: plain, of two periods, scoped, and mongoose's.
async fn counters(name: &str) -> (String, mongodb::Database) {
    let (db_name, db) = fresh_database(name).await;
    let userid = Sequence::new(&db, SequenceOptions::builder("userid").build()).unwrap();
    userid.set_next(42).await.unwrap();
    let clock = std::sync::Arc::new(ManualClock::new("2025-11-20T12:00:00Z".parse().unwrap()));
    let inv = Sequence::new(
        &db,
        SequenceOptions::builder("inv").prefix("YYMMDD").build(),
    )
    .unwrap();
    inv.set_clock(clock.clone());
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
        .layout(Layout::MongooseSequence)
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
    assert_eq!(
        stderr(&back),
        "error: refusing to move `userid` backwards from last issued 99 to next 50: the \
         numbers 50 to 99 would be issued again; nothing was written\nhint: `--force` moves it \
         anyway, if no document holds these values; `--dry-run` shows the move\n"
    );
    let dry = cli(&["set-next", &db, "userid", "50", "--dry-run"]);
    assert!(
        stderr(&dry)
            .ends_with("hint: `--force` moves it anyway, if no document holds these values\n"),
        "a dry run is not suggested again: {}",
        stderr(&dry)
    );
    let back = json_error(&["set-next", &db, "userid", "50"], 1);
    assert!(
        back["error"].as_str().unwrap().contains("backwards"),
        "{back}"
    );
    assert!(back["hint"].as_str().unwrap().contains("--force"), "{back}");
    assert_eq!(current().await, 99);
    json(&["set-next", &db, "userid", "50", "--force"]);
    assert_eq!(current().await, 49);

    // Values outside start..=max are refused, whatever `--force` says.
    for args in [
        &["set-next", &db, "userid", "0", "--force"][..],
        &["set-next", &db, "userid", "101", "--max", "100"],
        &["set-next", &db, "userid", "60", "--start", "70"],
    ] {
        let error = json_error(args, 2);
        assert!(
            error["error"]
                .as_str()
                .unwrap()
                .contains("outside start..=max"),
            "{error}"
        );
        assert!(error["hint"].as_str().unwrap().contains("--max"), "{error}");
    }
    assert_eq!(current().await, 49, "nothing was written");
    let done = json(&["set-next", &db, "userid", "100", "--max", "100"]);
    assert_eq!(
        (done["new"].as_i64(), done["next"].as_i64()),
        (Some(99), Some(100))
    );
    assert!(
        done["warning"]
            .as_str()
            .unwrap()
            .contains("running processes keep"),
        "{done}"
    );
    let text = cli(&["set-next", &db, "userid", "120"]);
    assert!(text.status.success());
    assert!(
        stderr(&text).starts_with("warning: running processes keep the ranges of `userid`"),
        "{}",
        stderr(&text)
    );
    assert_eq!(current().await, 119);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_moves_counters_past_imported_ids_and_purge_deletes_old_periods() {
    let (db, database) = counters("cli_sync").await;
    let docs = database.collection::<Document>("docs");
    docs.insert_many((1..=30_i64).map(|i| doc! { "_id": i }))
        .await
        .unwrap();
    let target = format!("{db}.docs");
    let dry = json(&["sync", &target, "--name", "legacy", "--dry-run", "--create"]);
    assert_eq!(dry["counters"][0]["new"], 30);
    assert_eq!(dry["dry_run"], true);
    let counters = database.collection::<Document>("counters");
    assert!(counters
        .find_one(doc! { "_id": "legacy" })
        .await
        .unwrap()
        .is_none());
    let done = cli(&["sync", &target, "--name", "legacy", "--create"]);
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
        &["check", "no-dot", "--field", "number"],
        &["repair", "db.coll"],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_takes_values_with_the_counters_options() {
    let (db, database) = counters("cli_next").await;
    let counters = database.collection::<Document>("counters");
    let seq = |id: &'static str| {
        let counters = counters.clone();
        async move {
            counters
                .find_one(doc! { "_id": id })
                .await
                .unwrap()
                .unwrap()
                .get_i64("seq")
                .unwrap()
        }
    };
    assert_eq!(
        json(&["next", &db, "userid"]),
        serde_json::json!({ "name": "userid", "ids": [42], "dry_run": false })
    );
    assert_eq!(
        json(&["next", &db, "userid", "3"])["ids"],
        serde_json::json!([43, 44, 45])
    );
    let text = cli(&["next", &db, "userid", "2"]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert_eq!(stdout(&text), "46\n47\n");
    assert_eq!(seq("userid").await, 47, "the values are issued");

    // Rendered IDs, a scope, and the bounds given.
    let ids = json(&[
        "next", &db, "ticket", "2", "--prefix", "T-", "--width", "4", "--create",
    ]);
    assert_eq!(ids["ids"], serde_json::json!(["T-0001", "T-0002"]));
    let scoped = json(&["next", &db, "order", "2", "--scope", "tenant=acme"]);
    assert_eq!(scoped["ids"], serde_json::json!([8, 9]));
    let small = ["--start", "100", "--max", "101", "--create"];
    let first = json(&[&["next", &db, "small", "2"][..], &small].concat());
    assert_eq!(first["ids"], serde_json::json!([100, 101]));
    let exhausted = json_error(&[&["next", &db, "small"][..], &small].concat(), 1);
    assert!(
        exhausted["error"].as_str().unwrap().contains("exhausted"),
        "{exhausted}"
    );
    assert!(
        exhausted["hint"].as_str().unwrap().contains("--max"),
        "{exhausted}"
    );
    assert_eq!(seq("small").await, 101, "nothing was written");

    // A counter written by other code: the next free value in `COUNT`.
    counters
        .insert_one(doc! { "_id": "invoice", "COUNT": 1042_i64 })
        .await
        .unwrap();
    let taken = json(&[
        "next",
        &db,
        "invoice",
        "--field",
        "COUNT",
        "--stores",
        "next_free",
    ]);
    assert_eq!(taken["ids"], serde_json::json!([1042]));
    let invoice = counters
        .find_one(doc! { "_id": "invoice" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(invoice.get_i64("COUNT"), Ok(1043));

    json_error(&["next", &db, "userid", "0"], 2);
    json_error(&["next", &db, "userid", "--stores", "next"], 2);
}

/// Sequences whose IDs have a template, check digits or another encoding: `next` prints the
/// IDs as the documents hold them, from the sequence's record or the options given, and
/// `show` the last ID issued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_and_show_write_ids_of_each_format() {
    let (db_name, db) = fresh_database("cli_formats").await;
    let account = SequenceOptions::builder("account")
        .format("ACC-{n:08}-{check}")
        .check_digit(CheckDigit::Luhn)
        .build();
    let seq = Sequence::new(&db, account).unwrap();
    assert_eq!(seq.next_id::<String>().await.unwrap(), "ACC-00000001-8");
    // From the record: the template and the check digits.
    let ids = json(&["next", &db_name, "account", "2"]);
    assert_eq!(
        ids["ids"],
        serde_json::json!(["ACC-00000002-6", "ACC-00000003-4"])
    );
    let shown = json(&["show", &db_name, "account"]);
    assert_eq!(shown["last_id"], "ACC-00000003-4");
    let table = cli(&["show", &db_name, "account"]);
    assert!(
        stdout(&table).contains("last ID: ACC-00000003-4"),
        "{}",
        stdout(&table)
    );
    // From the options given: a Crockford code with its check symbol.
    let ids = json(&[
        "next",
        &db_name,
        "order",
        "2",
        "--encoding",
        "crockford32",
        "--width",
        "4",
        "--check-digit",
        "crockford",
        "--create",
    ]);
    assert_eq!(ids["ids"], serde_json::json!(["00011", "00022"]));
    let refused = json_error(
        &[
            "next",
            &db_name,
            "order",
            "--check-digit",
            "lunh",
            "--create",
        ],
        2,
    );
    assert!(refused.to_string().contains("luhn"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_needs_force_and_a_dry_run_deletes_nothing() {
    let (db, database) = counters("cli_delete").await;
    let counters = database.collection::<Document>("counters");
    let count = |filter: Document| {
        let counters = counters.clone();
        async move { counters.count_documents(filter).await.unwrap() }
    };
    let refused = cli(&["delete", &db, "inv"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("refusing to delete 3 counters of `inv`")
            && stderr(&refused).contains("--force"),
        "{}",
        stderr(&refused)
    );
    let refused = json_error(&["delete", &db, "inv"], 2);
    assert!(
        refused["hint"].as_str().unwrap().contains("--dry-run"),
        "{refused}"
    );
    assert_eq!(count(doc! { "_id.seq": "inv" }).await, 3);

    let dry = json(&["delete", &db, "inv", "--dry-run"]);
    assert_eq!(
        (dry["deleted"].as_u64(), dry["dry_run"].as_bool()),
        (Some(3), Some(true))
    );
    let periods: Vec<&str> = dry["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["period"].as_str().unwrap())
        .collect();
    assert_eq!(periods, ["20251120", "20251121", "20251122"]);
    assert_eq!(count(doc! {}).await, 5, "a dry run deletes nothing");
    let dry = cli(&["delete", &db, "inv", "--dry-run", "--force"]);
    assert!(
        stdout(&dry).contains("would delete 3 counters of `inv`"),
        "{}",
        stdout(&dry)
    );
    assert_eq!(
        count(doc! {}).await,
        5,
        "a dry run deletes nothing, even with --force"
    );

    let one = json(&["delete", &db, "inv", "--period", "20251120", "--force"]);
    assert_eq!(one["deleted"], 1);
    assert_eq!(count(doc! { "_id.seq": "inv" }).await, 2);
    let rest = cli(&["delete", &db, "inv", "--force"]);
    assert!(rest.status.success(), "{}", stderr(&rest));
    assert!(
        stdout(&rest).contains("deleted 2 counters of `inv`"),
        "{}",
        stdout(&rest)
    );
    assert!(
        stderr(&rest).contains("warning: running processes keep"),
        "{}",
        stderr(&rest)
    );
    assert_eq!(count(doc! { "_id.seq": "inv" }).await, 0);
    let gone = json_error(&["delete", &db, "inv", "--force"], 1);
    assert!(
        gone["error"]
            .as_str()
            .unwrap()
            .contains("no counter of `inv`"),
        "{gone}"
    );

    let scoped = json(&["delete", &db, "order", "--scope", "tenant=acme", "--force"]);
    assert_eq!(scoped["deleted"], 1);
    let plain = json(&["delete", &db, "userid", "--force"]);
    assert_eq!(plain["counters"][0]["last_issued"], 41);
    assert_eq!(count(doc! {}).await, 0);
    let mongoose = json(&[
        "delete",
        &db,
        "shared",
        "--counters",
        "identitycounters",
        "--layout",
        "mongoose_sequence",
        "--force",
    ]);
    assert_eq!(mongoose["deleted"], 1);
    assert_eq!(
        database
            .collection::<Document>("identitycounters")
            .count_documents(doc! {})
            .await
            .unwrap(),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_are_shown_set_and_deleted_one_at_a_time() {
    let (db, database) = counters("cli_shards").await;
    let counters = database.collection::<Document>("counters");
    // Shards 0 and 1 of `--shards 4 --max 100`, as the ranges strategy writes them.
    counters
        .insert_many([
            doc! { "_id": { "seq": "acct", "shard": 0 }, "lo": 1_i64, "hi": 25_i64, "seq": 10_i64 },
            doc! { "_id": { "seq": "acct", "shard": 1 }, "lo": 26_i64, "hi": 50_i64, "seq": 30_i64 },
        ])
        .await
        .unwrap();
    let shard = json(&["show", &db, "acct", "--shard", "1"]);
    assert_eq!(
        (
            shard["shard"].as_i64(),
            shard["last_issued"].as_i64(),
            shard["start"].as_i64(),
            shard["max"].as_i64(),
            shard["room_left"].as_u64(),
            shard["used"].as_f64()
        ),
        (Some(1), Some(30), Some(26), Some(50), Some(20), Some(0.2))
    );
    let listed = json(&["list", &db, "--name", "acct"]);
    let left: Vec<u64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["room_left"].as_u64().unwrap())
        .collect();
    assert_eq!(left, [15, 20]);

    let outside = json_error(&["set-next", &db, "acct", "51", "--shard", "1"], 2);
    assert!(
        outside["error"].as_str().unwrap().contains("(26..=50)"),
        "{outside}"
    );
    let moved = json(&["set-next", &db, "acct", "40", "--shard", "1"]);
    assert_eq!(
        (moved["old"].as_i64(), moved["new"].as_i64()),
        (Some(30), Some(39))
    );
    let stored = counters
        .find_one(doc! { "_id": { "seq": "acct", "shard": 1 } })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.get_i64("seq"), stored.get_i64("hi")),
        (Ok(39), Ok(50))
    );
    let missing = json_error(&["show", &db, "acct", "--shard", "3"], 1);
    assert_eq!(
        missing["hint"], "name one: --shard 0, --shard 1",
        "the shards there: {missing}"
    );
    json_error(
        &["show", &db, "acct", "--shard", "1", "--period", "20251122"],
        2,
    );

    let deleted = json(&["delete", &db, "acct", "--shard", "0", "--force"]);
    assert_eq!(deleted["deleted"], 1);
    assert_eq!(
        counters
            .count_documents(doc! { "_id.seq": "acct" })
            .await
            .unwrap(),
        1
    );

    // The runtime agrees on the slices: it takes the next value of one of the shards.
    let next = json(&["next", &db, "acct", "--shards", "4", "--max", "100"]);
    let value = next["ids"][0].as_i64().unwrap();
    assert!([1, 40, 51, 76].contains(&value), "{next}");
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

/// The counters of typegoose, of mongoose-auto-increment and of a filter of one's own are
/// listed with their layout, and shown and moved by name (`--layout`) or by filter
/// (`--filter`, with the `--prefix` that renders a period).
#[tokio::test]
async fn counters_of_other_conventions_are_listed_shown_and_moved() {
    let (db_name, database) = fresh_database("cli_conventions").await;
    let db = db_name.as_str();
    database
        .collection::<Document>("identitycounters")
        .insert_many([
            doc! { "field": "_id", "modelName": "Ticket", "count": Bson::Int64(9) },
            doc! { "model": "Order", "field": "_id", "groupingField": "acme", "count": 4 },
        ])
        .await
        .unwrap();
    database
        .collection::<Document>("ids")
        .insert_one(doc! { "prefix": 251125, "count": 7 })
        .await
        .unwrap();

    let listed = json(&["list", db, "--counters", "identitycounters"]);
    let rows: Vec<(&str, &str, i64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["layout"].as_str().unwrap(),
                c["last_issued"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("Order", "mongoose_auto_increment", 4),
            ("Ticket", "typegoose", 9)
        ],
        "{listed}"
    );
    let typegoose = ["--counters", "identitycounters", "--layout", "typegoose"];
    let ticket = json(&[&["show", db, "Ticket"][..], &typegoose].concat());
    assert_eq!(ticket["last_issued"], 9);
    let moved = json(&[&["set-next", db, "Ticket", "20"][..], &typegoose].concat());
    assert_eq!(moved["old"], 9);
    let order = json(&[
        "show",
        db,
        "Order",
        "--counters",
        "identitycounters",
        "--layout",
        "mongoose_auto_increment",
        "--scope",
        "groupingField=acme",
    ]);
    assert_eq!(order["last_issued"], 4);

    let seed = [
        "--counters",
        "ids",
        "--field",
        "count",
        "--filter",
        "prefix = period as number",
    ];
    let listed = json(&[&["list", db][..], &seed].concat());
    assert_eq!(
        (
            listed[0]["period"].as_str(),
            listed[0]["last_issued"].as_i64()
        ),
        (Some("251125"), Some(7)),
        "{listed}"
    );
    let day = json(
        &[
            &[
                "show", db, "daily", "--prefix", "YYMMDD", "--period", "20251125",
            ][..],
            &seed,
        ]
        .concat(),
    );
    assert_eq!(day["last_issued"], 7, "{day}");
    let counters = database.collection::<Document>("identitycounters");
    let stored = counters
        .find_one(doc! { "modelName": "Ticket" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("count"), Some(&Bson::Int64(19)), "{stored}");
    let usage = cli(&["show", db, "Ticket", "--layout", "mongoose"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(
        stderr(&usage).contains("mongoose_sequence"),
        "{}",
        stderr(&usage)
    );
}

#[test]
fn errors_are_json_with_json() {
    let no_uri = Command::new(env!("CARGO_BIN_EXE_mongo-sequence"))
        .env_remove("MONGODB_URI")
        .args(["list", "db", "--json"])
        .output()
        .unwrap();
    assert_eq!(no_uri.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&no_uri.stderr).unwrap();
    assert!(
        error["error"].as_str().unwrap().contains("MONGODB_URI"),
        "{error}"
    );
    assert!(error["hint"].as_str().unwrap().contains("--uri"), "{error}");

    let unknown = json_error(&["frobnicate"], 2);
    assert!(
        unknown["error"].as_str().unwrap().contains("frobnicate"),
        "{unknown}"
    );
    assert!(unknown["hint"].is_string(), "{unknown}");
    let bad_scope = json_error(&["show", "db", "x", "--scope", "no-equals-sign"], 2);
    assert!(
        bad_scope["error"].as_str().unwrap().contains("field=value"),
        "{bad_scope}"
    );
    let bad_target = json_error(&["sync", "no-dot", "--name", "x"], 2);
    assert!(
        bad_target["hint"].as_str().unwrap().contains("shop.orders"),
        "{bad_target}"
    );
    let db = unique_db_name("cli_json");
    let missing = json_error(&["show", &db, "nope"], 1);
    assert_eq!(
        missing["error"],
        format!(
            "sequence `nope` has no counter and no record in any counters collection of \
             `{db}`; nothing was done"
        ),
        "{missing}"
    );
    assert!(
        missing["hint"].as_str().unwrap().contains("list"),
        "{missing}"
    );
}

/// A collection `stubs` of documents numbered 1..=3 in `number`, each with its claim in
/// `proxy` (as `unique = "proxy"` writes them), in a database of its own.
async fn claimed_stubs(name: &str, proxy: &str) -> (String, mongodb::Database) {
    let (db_name, db) = fresh_database(name).await;
    for number in 1..=3_i64 {
        let oid = ObjectId::new();
        db.collection::<Document>("stubs")
            .insert_one(doc! { "_id": oid, "number": number })
            .await
            .unwrap();
        db.collection::<Document>(proxy)
            .insert_one(doc! { "_id": number, "doc": oid })
            .await
            .unwrap();
    }
    (db_name, db)
}

/// Every document of `coll`, in `_id` order.
async fn all(coll: &mongodb::Collection<Document>) -> Vec<Document> {
    use futures_util::TryStreamExt;
    coll.find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// Runs it with `--json`, expects exit status `code`, and parses its JSON output.
fn json_with_status(args: &[&str], code: i32) -> Value {
    let out = cli(&[args, &["--json"]].concat());
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("the output is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_and_repair_find_and_fix_an_orphan_claim_and_an_unclaimed_document() {
    let (db_name, db) = claimed_stubs("cli_claims", "stubs.claims.number").await;
    let claims = db.collection::<Document>("stubs.claims.number");
    let gone = ObjectId::new();
    claims
        .insert_one(doc! { "_id": 99_i64, "doc": gone })
        .await
        .unwrap();
    let imported = ObjectId::new();
    db.collection::<Document>("stubs")
        .insert_one(doc! { "_id": imported, "number": 50_i64 })
        .await
        .unwrap();
    let target = format!("{db_name}.stubs");
    let args = ["--field", "number"];

    let found = json_with_status(&[&["check", &target][..], &args].concat(), 3);
    assert_eq!(
        (
            &found["unclaimed_count"],
            &found["orphan_count"],
            &found["shared_count"]
        ),
        (&1.into(), &1.into(), &0.into()),
        "{found}"
    );
    assert_eq!(found["unclaimed"][0]["id"], 50, "{found}");
    assert_eq!(found["unclaimed"][0]["doc"]["$oid"], imported.to_hex());
    assert_eq!(found["orphans"][0]["id"], 99, "{found}");
    assert_eq!(found["orphans"][0]["doc"]["$oid"], gone.to_hex());
    assert_eq!(found["orphans"][0]["holds"], Value::Null);
    assert_eq!(found["proxy"], format!("{db_name}.stubs.claims.number"));
    let table = cli(&[&["check", &target][..], &args].concat());
    assert_eq!(table.status.code(), Some(3), "{}", stderr(&table));
    let text = stdout(&table);
    for expected in [
        "documents without a claim (1)",
        "claims without a document (1)",
        &imported.to_hex(),
        "gone",
    ] {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }

    // A dry run says what it would do, and writes nothing.
    let before = all(&claims).await;
    let dry = json(&[&["repair", &target, "--prune", "--dry-run"][..], &args].concat());
    assert_eq!(
        (&dry["claimed"], &dry["pruned"], &dry["dry_run"]),
        (&1.into(), &1.into(), &true.into()),
        "{dry}"
    );
    assert_eq!(all(&claims).await, before, "a dry run wrote");

    let repaired = json(&[&["repair", &target, "--prune"][..], &args].concat());
    assert_eq!(
        (
            &repaired["claimed"],
            &repaired["pruned"],
            &repaired["dry_run"]
        ),
        (&1.into(), &1.into(), &false.into()),
        "{repaired}"
    );
    let clean = json(&[&["check", &target][..], &args].concat());
    assert_eq!(
        (&clean["unclaimed_count"], &clean["orphan_count"]),
        (&0.into(), &0.into()),
        "{clean}"
    );
    let keys: Vec<(i64, Bson)> = all(&claims)
        .await
        .into_iter()
        .map(|c| (c.get_i64("_id").unwrap(), c.get("doc").cloned().unwrap()))
        .collect();
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert_eq!(keys[3], (50, Bson::ObjectId(imported)));
    assert!(keys.iter().all(|(id, _)| *id != 99), "{keys:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repair_refuses_two_documents_holding_one_id_and_lists_them() {
    // Claims under another name, to be named with --proxy.
    let (db_name, db) = claimed_stubs("cli_claims_shared", "proof").await;
    let proof = db.collection::<Document>("proof");
    let stubs = db.collection::<Document>("stubs");
    let twin = ObjectId::new();
    stubs
        .insert_one(doc! { "_id": twin, "number": 2_i64 })
        .await
        .unwrap();
    stubs
        .insert_one(doc! { "_id": ObjectId::new(), "number": 8_i64 })
        .await
        .unwrap();
    let holder = stubs
        .find_one(doc! { "number": 2_i64, "_id": { "$ne": twin } })
        .await
        .unwrap()
        .unwrap()
        .get_object_id("_id")
        .unwrap();
    let target = format!("{db_name}.stubs");
    let args = ["--field", "number", "--proxy", "proof"];

    let found = json_with_status(&[&["check", &target][..], &args].concat(), 3);
    assert_eq!(found["shared_count"], 1, "{found}");
    assert_eq!(found["shared"][0]["id"], 2, "{found}");
    assert_eq!(found["shared"][0]["count"], 2, "{found}");

    let before = all(&proof).await;
    for prune in [&[][..], &["--prune"]] {
        let error = json_error(&[&["repair", &target][..], &args, prune].concat(), 1);
        let message = error["error"].as_str().unwrap();
        for oid in [twin, holder] {
            assert!(message.contains(&oid.to_hex()), "{oid} in {message}");
        }
        assert!(
            error["hint"].as_str().unwrap().contains("ID of its own"),
            "{error}"
        );
        let docs = error["details"]["shared"][0]["docs"].as_array().unwrap();
        assert_eq!(docs.len(), 2, "{error}");
    }
    assert_eq!(all(&proof).await, before, "a refused repair wrote");
    // As text, the same refusal.
    let out = cli(&[&["repair", &target][..], &args].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("more than one document"),
        "{}",
        stderr(&out)
    );
}

/// The counter document of `filter` in `counters` of `db`, if any.
async fn counter_doc(db: &mongodb::Database, filter: Document) -> Option<Document> {
    db.collection::<Document>("counters")
        .find_one(filter)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gapless_sequence_is_kept_gapless_unless_an_override_names_the_gap() {
    let (db_name, db) = fresh_database("cli_gapless").await;
    // Three receipts issued by the application, which recorded the sequence as gapless.
    let receipt = Sequence::new(
        &db,
        SequenceOptions::builder("receipt").gapless(true).build(),
    )
    .unwrap();
    receipt.set_next(4).await.unwrap();
    let last = || async {
        counter_doc(&db, doc! { "_id": "receipt" })
            .await
            .unwrap()
            .get_i64("seq")
            .unwrap()
    };

    let refused = json_error(&["next", &db_name, "receipt"], 2);
    assert_eq!(
        refused["error"],
        "sequence `receipt` is gapless: values that `next` takes are never stored, a permanent \
         gap in its numbering; nothing was taken"
    );
    assert_eq!(last().await, 3, "the counter is untouched");
    let forward = json_error(&["set-next", &db_name, "receipt", "10"], 2);
    assert!(
        forward["error"]
            .as_str()
            .unwrap()
            .contains("leaves the numbers 4 to 9 permanently unused"),
        "{forward}"
    );
    assert_eq!(forward["hint"], "`--leave-gap` moves it anyway");
    let back = json_error(&["set-next", &db_name, "receipt", "2", "--force"], 2);
    assert!(
        back["error"]
            .as_str()
            .unwrap()
            .contains("issues the numbers 2 to 3 again"),
        "{back}"
    );
    let delete = json_error(&["delete", &db_name, "receipt", "--force"], 2);
    assert!(
        delete["error"]
            .as_str()
            .unwrap()
            .contains("starts again at 1"),
        "{delete}"
    );
    assert_eq!(last().await, 3, "nothing was written by the refusals");

    // The overrides do what they name.
    assert_eq!(
        json(&["next", &db_name, "receipt", "--leave-gap"])["ids"],
        serde_json::json!([4])
    );
    json(&["set-next", &db_name, "receipt", "10", "--leave-gap"]);
    assert_eq!(last().await, 9);
    json(&["set-next", &db_name, "receipt", "5", "--force", "--reissue"]);
    assert_eq!(last().await, 4);
    json(&[
        "delete",
        &db_name,
        "receipt",
        "--force",
        "--restart-numbering",
    ]);
    assert_eq!(counter_doc(&db, doc! { "_id": "receipt" }).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_names_create_nothing_and_periods_and_scopes_are_listed() {
    let (db_name, db) = counters("cli_known").await;
    let before = db
        .collection::<Document>("counters")
        .count_documents(doc! {})
        .await
        .unwrap();
    for args in [
        &["next", &db_name, "newcounter"][..],
        &["set-next", &db_name, "newcounter", "5"],
    ] {
        let typo = json_error(args, 1);
        assert!(
            typo["hint"].as_str().unwrap().contains("--create"),
            "{typo}"
        );
    }
    assert_eq!(
        db.collection::<Document>("counters")
            .count_documents(doc! {})
            .await
            .unwrap(),
        before,
        "a typo creates nothing"
    );
    assert_eq!(
        json(&["set-next", &db_name, "newcounter", "5", "--create"])["next"],
        5
    );

    // A sequence of periods, and one of scopes: `show` lists the flags that name their counters.
    let inv = json_error(&["show", &db_name, "inv"], 1);
    assert_eq!(
        inv["hint"],
        "name one: --period 20251120, --period 20251121, --period 20251122"
    );
    let order = json_error(&["show", &db_name, "order"], 1);
    assert_eq!(order["hint"], "name one: --scope tenant=acme");
    // `next` takes the recorded options: the period of today, a scope value when given.
    let today = jiff::Timestamp::now().strftime("%y%m%d").to_string();
    let ids = json(&["next", &db_name, "inv"])["ids"].clone();
    assert!(
        ids[0].as_str().unwrap().starts_with(&today),
        "{ids} is of today's period"
    );
    let order = json_error(&["next", &db_name, "order"], 1);
    assert_eq!(order["hint"], "name one: --scope tenant=acme");
    assert_eq!(
        json(&["next", &db_name, "order", "--scope", "tenant=acme"])["ids"],
        serde_json::json!([8])
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_indexes_creates_the_scoped_unique_index_once() {
    let (db_name, db) = counters("cli_indexes").await;
    let target = format!("{db_name}.orders");
    let args = [
        "ensure-indexes",
        &target,
        "--name",
        "order",
        "--field",
        "number",
    ];
    let first = json(&args);
    assert_eq!(
        first["indexes"],
        serde_json::json!([{
            "namespace": target,
            "keys": { "tenant": 1, "number": 1 },
            "unique": true,
            "created": true,
            "present": false,
            "purpose": "inserts detect a stored ID by it, and skip ahead of it",
        }]),
        "the scope comes from the sequence's record"
    );
    let again = json(&args);
    assert_eq!(again["indexes"][0]["created"], false, "{again}");
    let mut cursor = db
        .collection::<Document>("orders")
        .list_indexes()
        .await
        .unwrap();
    let mut unique = Vec::new();
    while cursor.advance().await.unwrap() {
        let index = cursor.deserialize_current().unwrap();
        if index.options.and_then(|o| o.unique) == Some(true) {
            unique.push(index.keys);
        }
    }
    assert_eq!(unique, [doc! { "tenant": 1, "number": 1 }]);
    let text = stdout(&cli(&args));
    assert!(text.contains("\n1 index needed, 0 created\n"), "{text}");
    assert!(text.contains("state"), "every column has a header: {text}");
    db.collection::<Document>("orders")
        .drop_index("tenant_1_number_1")
        .await
        .unwrap();
    let dry = stdout(&cli(&[&args[..], &["--dry-run"]].concat()));
    assert!(
        dry.contains("missing")
            && dry.ends_with("\n1 index needed, 1 missing (a dry run creates none)\n"),
        "{dry}"
    );
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
