//! `ensure-indexes`: the unique index of a sequence's documents, with its scope from the
//! sequence's record, created once.

use mongodb::bson::{doc, Document};

use crate::support::{cli, counters, json, stdout};

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
