//! What the tests of the command line share: the binary run against the shared test server,
//! its `--json` output and errors parsed, its text output read, and the databases they start
//! from (counters of every kind, documents with their claims).

use std::process::{Command, Output};

use mongodb::bson::{doc, oid::ObjectId, Document};
use sequence_runtime::options::Layout;
use sequence_runtime::{clock::ManualClock, jiff, Scope, Sequence, SequenceOptions};
use sequence_testkit::{unique_db_name, TestServer};
use serde_json::Value;

/// The URI of the shared test server (started on first use).
fn uri() -> String {
    TestServer::shared_or_panic().uri().to_owned()
}

/// A database of its own on the test server, and its name.
pub(crate) async fn fresh_database(name: &str) -> (String, mongodb::Database) {
    let db_name = unique_db_name(name);
    let db = TestServer::shared_or_panic()
        .client()
        .await
        .database(&db_name);
    (db_name, db)
}

/// The command line, given `--uri` of the test server and no `MONGODB_URI` of the
/// environment; its arguments and streams are the caller's to add.
pub(crate) fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mongo-sequence"));
    command.env_remove("MONGODB_URI").arg("--uri").arg(uri());
    command
}

/// Runs the command line with `args` against the test server.
pub(crate) fn cli(args: &[&str]) -> Output {
    command()
        .args(args)
        .output()
        .expect("the command line runs")
}

/// Runs the command line with `args` and `--json`, and expects exit status `code`.
fn run_json(args: &[&str], code: i32) -> Output {
    let out = cli(&[args, &["--json"]].concat());
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    out
}

/// Runs it with `--json`, expects success, and parses its JSON output.
pub(crate) fn json(args: &[&str]) -> Value {
    json_with_status(args, 0)
}

/// Runs it with `--json`, expects exit status `code`, and parses its JSON output.
pub(crate) fn json_with_status(args: &[&str], code: i32) -> Value {
    let out = run_json(args, code);
    serde_json::from_slice(&out.stdout).expect("the output is JSON")
}

/// Runs it with `--json`, expects exit status `code`, and parses the JSON error on stderr
/// (stdout stays empty).
pub(crate) fn json_error(args: &[&str], code: i32) -> Value {
    let out = run_json(args, code);
    assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
    let error: Value = serde_json::from_slice(&out.stderr)
        .unwrap_or_else(|e| panic!("{args:?}: the error is not JSON ({e}): {}", stderr(&out)));
    assert!(error["error"].is_string(), "{error}");
    error
}

/// What the command printed on stdout.
pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the command printed on stderr.
pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A database with counters of every kind: plain, of two periods, scoped, and mongoose's.
pub(crate) async fn counters(name: &str) -> (String, mongodb::Database) {
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

/// A collection `stubs` of documents numbered 1..=3 in `number`, each with its claim in
/// `proxy` (as `unique = "proxy"` writes them), in a database of its own.
pub(crate) async fn claimed_stubs(name: &str, proxy: &str) -> (String, mongodb::Database) {
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
pub(crate) async fn all(coll: &mongodb::Collection<Document>) -> Vec<Document> {
    use futures_util::TryStreamExt;
    coll.find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// The counter document of `filter` in `counters` of `db`, if any.
pub(crate) async fn counter_doc(db: &mongodb::Database, filter: Document) -> Option<Document> {
    db.collection::<Document>("counters")
        .find_one(filter)
        .await
        .unwrap()
}
