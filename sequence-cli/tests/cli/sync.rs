//! `sync`: a counter moved past the IDs imported into a collection; and `purge-before`, which
//! deletes the counters of the periods before a date.

use mongodb::bson::{doc, Document};

use crate::support::{cli, counters, json, stderr, stdout};

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
