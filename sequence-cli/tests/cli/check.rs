//! `check`: the claims of a proxy collection checked against its documents, an orphan claim
//! and an unclaimed document found, and fixed by `repair`.

use mongodb::bson::{doc, oid::ObjectId, Bson, Document};
use serde_json::Value;

use crate::support::{all, claimed_stubs, cli, json, json_with_status, stderr, stdout};

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
