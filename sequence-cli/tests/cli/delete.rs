//! `delete`: the counters of a sequence, or of one period, scope or layout, deleted only with
//! `--force`, and nothing deleted by a dry run.

use mongodb::bson::{doc, Document};

use crate::support::{cli, counters, json, json_error, stderr, stdout};

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
