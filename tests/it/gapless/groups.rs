//! The concurrent gapless inserts of a process commit together in groups: few counter updates,
//! failures that stay their caller's own, and no state left behind per scope once a group is
//! idle.

use crate::common;

use std::collections::BTreeSet;

use mongo_sequence::Error;
use mongodb::bson::doc;
use sequence_testkit::unique_db_name;

use super::{invoice, stored_ids, unique_code_index, Invoice, Receipt};

/// Concurrent gapless inserts in one process commit together: far fewer counter updates than
/// inserts. Documents that fail on their own (a duplicate code, a validation error) fail for
/// their caller only, and the stored numbers stay exactly 1..=N.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_commit_together() {
    const TASKS: usize = 32;
    let per_task = common::pick(10, 100);
    let name = unique_db_name("gapless_group");
    let (client, commands) = common::monitored_client(&name).await;
    let db = client.database(&name);
    // Codes starting with `bad` fail validation.
    db.create_collection("invoices")
        .validator(doc! { "code": { "$not": { "$regex": "^bad" } } })
        .await
        .unwrap();
    let coll = db.collection::<Invoice>("invoices");
    unique_code_index(&coll).await;
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                for i in 0..per_task {
                    // Every 7th call repeats a code; every 11th fails validation.
                    let code = match (task * per_task + i) % 77 {
                        n if n % 7 == 6 => format!("dup-{}", task % 2),
                        n if n % 11 == 10 => format!("bad-{task}-{i}"),
                        _ => format!("{task}-{i}"),
                    };
                    let mut inv = invoice(code.clone());
                    let outcome = inv.insert_with_id(&coll).await;
                    if let Ok(id) = &outcome {
                        assert_eq!(inv.id, Some(*id));
                    }
                    outcomes.push((code, outcome));
                }
                outcomes
            })
        })
        .collect();
    let (mut ok, mut duplicates, mut invalid) = (BTreeSet::new(), 0, 0);
    for t in tasks {
        for (code, outcome) in t.await.unwrap() {
            match outcome {
                Ok(id) => assert!(ok.insert(id), "{id} returned twice"),
                Err(Error::DuplicateKey { message, .. }) => {
                    assert!(
                        code.starts_with("dup-") && message.contains("code"),
                        "{message}"
                    );
                    duplicates += 1;
                }
                Err(Error::Mongo(e)) if code.starts_with("bad-") => {
                    assert!(e.to_string().contains("validation"), "{e}");
                    invalid += 1;
                }
                Err(e) => panic!("{code}: unexpected error {e}"),
            }
        }
    }
    let n = ok.len();
    assert!(duplicates > 0 && invalid > 0, "{duplicates} {invalid}");
    assert_eq!(n + duplicates + invalid, TASKS * per_task);
    assert_eq!(ok, (1..=n as i64).collect(), "the Ok IDs are 1..=N");
    assert_eq!(stored_ids(&coll).await, (1..=n as i64).collect::<Vec<_>>());
    assert_eq!(common::counter(&db, "invoice").await, Some(n as i64));
    let updates = commands.round_trips();
    assert!(
        updates * 2 <= (TASKS * per_task) as u64,
        "{updates} counter updates for {} inserts: they were not grouped",
        TASKS * per_task
    );
    println!(
        "gapless group: inserts={} ok={n} duplicates={duplicates} invalid={invalid} counter_updates={updates}",
        TASKS * per_task
    );
}

/// A gapless model scoped by shop keeps no state per shop once its inserts are done: the queue
/// of each group (counter, collection, scope value) leaves the registry when the group goes
/// idle. Without that, a process numbering for many shops (tenants) would keep one per shop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoped_gapless_groups_leave_no_state_behind() {
    let db = common::database("gapless_bounded").await;
    let coll = db.collection::<Receipt>("receipts");
    let namespace = coll.namespace().to_string();
    let shops = 60;
    let tasks: Vec<_> = (0..4)
        .map(|task| {
            let coll = coll.clone();
            tokio::spawn(async move {
                for shop in (task..shops).step_by(4) {
                    let mut receipt = Receipt {
                        oid: None,
                        number: None,
                        shop: format!("shop-{shop}"),
                        code: format!("code-{shop}"),
                    };
                    receipt.insert_with_id(&coll).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(common::all(&coll).await.len(), shops);
    assert_eq!(
        mongo_sequence::__private::registry_entries(&namespace),
        0,
        "no group of {shops} shops is still registered"
    );
}
