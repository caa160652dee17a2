//! Gapless numbers stay dense: around inserts that fail (a duplicate code, a dropped
//! connection), in bulk inserts (all or nothing), from concurrent tasks, and per period and
//! scope.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mongo_sequence::Error;
use mongodb::bson::doc;
use sequence_testkit::{unique_db_name, TestServer};

use super::{invoice, stored_ids, unique_code_index, Invoice, Receipt};

const TASKS: u64 = 8;

/// 8 tasks × 60 gapless inserts (× 500 with `SOAK=1`); one in ten hits a unique index on
/// purpose, and the server drops the connection of an insert once every 20 inserts of the
/// first task (3 times, 25 with `SOAK=1`), whichever task's insert comes next. The stored IDs
/// are exactly 1..=N.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_inserts_leave_no_gap() {
    const EVERY: u64 = 20;
    let per_task: u64 = common::pick(60, 500);
    let name = unique_db_name("gapless_faults");
    let app = format!("faults-{name}");
    let client = common::client_with_app(TestServer::shared_or_panic().uri(), &app, |_| {}).await;
    let db = client.database(&name);
    let coll = db.collection::<Invoice>("invoices");
    unique_code_index(&coll).await;

    // The next insert command of this client drops its connection; the first task arms the
    // point again every 20 of its inserts. Each arming is used before the next one: the first
    // task's own next insert uses it if no other does.
    let admin = common::client().await.database("admin");
    let fault = common::fail_point(
        &admin,
        doc! { "times": 1 },
        doc! { "failCommands": ["insert"], "closeConnection": true, "appName": &app },
    )
    .await;
    let rearm = fault.rearm();

    let ok = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (coll, ok, refused) = (coll.clone(), ok.clone(), refused.clone());
            let rearm = rearm.clone();
            tokio::spawn(async move {
                for i in 0..per_task {
                    if task == 0 && i > 0 && i % EVERY == 0 {
                        rearm.with(doc! { "times": 1 }).await;
                    }
                    // Every tenth document repeats a code that its predecessor used.
                    let code = if i % 10 == 9 {
                        format!("{task}-{}", i - 1)
                    } else {
                        format!("{task}-{i}")
                    };
                    let mut inv = invoice(code);
                    match inv.insert_with_id(&coll).await {
                        Ok(id) => {
                            assert_eq!(inv.id, Some(id));
                            ok.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(Error::DuplicateKey { message, .. }) => {
                            assert!(message.contains("code"), "{message}");
                            refused.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => panic!("unexpected error: {e}"),
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let dropped = fault.fired().await;
    assert_eq!(
        dropped,
        per_task.div_ceil(EVERY) as i64,
        "every arming dropped one insert"
    );

    let n = ok.load(Ordering::SeqCst);
    let refused = refused.load(Ordering::SeqCst);
    assert_eq!(n + refused, TASKS * per_task);
    assert_eq!(refused, TASKS * per_task / 10);
    let ids = stored_ids(&coll).await;
    assert_eq!(
        ids,
        (1..=n as i64).collect::<Vec<_>>(),
        "no gap, no duplicate"
    );
    assert_eq!(common::counter(&db, "invoice").await, Some(n as i64));
    println!(
        "reliability: gapless ids={n} duplicates=0 gaps=0 refused={refused} dropped={dropped}"
    );
}

/// Bulk gapless inserts are all-or-nothing.
#[tokio::test]
async fn bulk_gapless_inserts_are_all_or_nothing() {
    let db = common::database("gapless_bulk").await;
    let coll = db.collection::<Invoice>("invoices");
    unique_code_index(&coll).await;
    let mut docs = vec![invoice("x"), invoice("y"), invoice("z")];
    let ids = Invoice::insert_many_with_ids(&mut docs, &coll)
        .await
        .unwrap();
    assert_eq!(ids, vec![1, 2, 3]);
    let mut clash = vec![invoice("p"), invoice("x"), invoice("q")];
    assert!(matches!(
        Invoice::insert_many_with_ids(&mut clash, &coll).await,
        Err(Error::DuplicateKey { .. })
    ));
    assert_eq!(stored_ids(&coll).await, vec![1, 2, 3]);
    assert_eq!(common::counter(&db, "invoice").await, Some(3));
    let mut more = vec![invoice("p"), invoice("q")];
    assert_eq!(
        Invoice::insert_many_with_ids(&mut more, &coll)
            .await
            .unwrap(),
        vec![4, 5]
    );
}

/// IDs of a gapless sequence are dense even when inserts of several models interleave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_gapless_inserts_are_dense() {
    let db = common::database("gapless_dense").await;
    let coll = db.collection::<Invoice>("invoices");
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let coll = coll.clone();
            tokio::spawn(async move {
                [invoice(format!("c{i}"))
                    .insert_with_id(&coll)
                    .await
                    .unwrap()]
            })
        })
        .collect();
    let ids = common::distinct_ids(tasks).await;
    assert_eq!(ids, (1..=16).collect());
}

/// Gapless numbering works with period prefixes and scopes: each shop's receipts of a year are
/// numbered without holes, even around failed inserts.
#[tokio::test]
async fn gapless_with_prefix_and_scope() {
    use mongo_sequence::clock::ManualClock;
    let db = common::database("gapless_prefix_scope").await;
    let coll = db.collection::<Receipt>("receipts");
    unique_code_index(&coll).await;
    let clock = Arc::new(ManualClock::new("2025-06-01T12:00:00Z".parse().unwrap()));
    Receipt::sequence(&coll).set_clock(clock.clone());
    let receipt = |shop: &str, code: &str| Receipt {
        oid: None,
        number: None,
        shop: shop.into(),
        code: code.into(),
    };

    let mut numbers = Vec::new();
    for (shop, code) in [("a", "1"), ("a", "2"), ("a", "1"), ("b", "3"), ("a", "4")] {
        match receipt(shop, code).insert_with_id(&coll).await {
            Ok(n) => numbers.push((shop, n)),
            Err(Error::DuplicateKey { .. }) => numbers.push((shop, "refused".into())),
            Err(e) => panic!("{e}"),
        }
    }
    let expected = [
        ("a", "R-2025-00001"),
        ("a", "R-2025-00002"),
        ("a", "refused"),
        ("b", "R-2025-00001"),
        ("a", "R-2025-00003"),
    ];
    assert_eq!(
        numbers,
        expected
            .iter()
            .map(|(s, n)| (*s, n.to_string()))
            .collect::<Vec<_>>()
    );

    clock.set("2026-01-01T00:00:00Z".parse().unwrap());
    assert_eq!(
        receipt("a", "5").insert_with_id(&coll).await.unwrap(),
        "R-2026-00001"
    );
    Receipt::sequence(&coll).use_system_clock();
}
