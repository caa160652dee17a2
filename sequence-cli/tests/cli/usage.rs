//! The arguments and errors of no one command: bad usage exits with status 2 and says what to
//! fix, and with `--json` every error is JSON.

use std::process::Command;

use sequence_testkit::unique_db_name;
use serde_json::Value;

use crate::support::{cli, json_error, stderr};

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
