//! `repair`: two documents holding one ID, refused and listed, nothing written.

use mongodb::bson::{doc, oid::ObjectId, Document};

use crate::support::{all, claimed_stubs, cli, json_error, json_with_status, stderr};

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
