//! Write errors on the counters collection, judged by the checker: the server's `failCommand`
//! fail point answers the counter updates of this test's client, at random (`0.2`), with a
//! disk-full error (`OutOfDiskSpace`, 14031) or a not-primary one (`NotWritablePrimary`,
//! 10107, which the driver retries once). Callers get typed errors naming the code; no number
//! is issued twice, every acknowledged document is stored, and the counter moves past no more
//! numbers than the updates whose outcome the client did not learn, and the ranges held.

use crate::checker::{self, Promise, Stored};
use crate::common;
use crate::reliability_support::{self as support, Unconfirmed, Until};

use mongo_sequence::SequentialId;
use mongodb::bson::doc;
use mongodb::event::EventHandler;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

/// One value per counter update.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "slip")]
struct Slip {
    #[seq(id)]
    number: i64,
    call: String,
}

/// A range of 25 per counter update.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "slip25", batch = 25)]
struct Slip25 {
    #[seq(id)]
    number: i64,
    call: String,
}

/// Tasks calling each model at once, `per_task` calls each.
const TASKS: usize = 8;

/// One fault: the counter updates answered with `code` at random, both models at once.
async fn under(code: i32, name: &str) -> String {
    let per_task = common::pick(20, 200);
    let db_name = unique_db_name(name);
    let app = format!("app-{db_name}");
    let unconfirmed = Unconfirmed::default();
    let watched = unconfirmed.clone();
    let uri = TestServer::shared_or_panic().uri();
    let client = common::client_with_app(uri, &app, |o| {
        o.command_event_handler = Some(EventHandler::callback(move |e| watched.observe(e)));
    })
    .await;
    let db = client.database(&db_name);
    let (slips, slips25) = (
        db.collection::<Slip>("slips"),
        db.collection::<Slip25>("slips25"),
    );
    // The counters and collections exist before the fault.
    let mut first = vec![Slip {
        number: 0,
        call: "first".into(),
    }
    .insert_with_id(&slips)
    .await
    .unwrap()];
    let mut first25 = vec![Slip25 {
        number: 0,
        call: "first".into(),
    }
    .insert_with_id(&slips25)
    .await
    .unwrap()];
    let admin = common::client().await.database("admin");
    let fail_point = common::fail_point(
        &admin,
        doc! { "times": 1 },
        doc! { "failCommands": ["findAndModify"], "errorCode": code, "appName": &app },
    )
    .await;
    // The fault is met for certain once: by the counter update of one call (a batch of 1
    // reserves on every insert); then at random, on the updates of both models.
    let sure = Slip {
        number: 0,
        call: "sure".into(),
    }
    .insert_with_id(&slips)
    .await;
    let mut sure_errors = Vec::new();
    match sure {
        Ok(n) => first.push(n),
        Err(e) => sure_errors.push(support::kind(&e)),
    }
    fail_point
        .rearm()
        .with(doc! { "activationProbability": 0.2 })
        .await;
    let (one, batched) = tokio::join!(
        support::concurrent(TASKS, Until::Calls(per_task), move |call| {
            let coll = slips.clone();
            async move { Slip { number: 0, call }.insert_with_id(&coll).await }
        }),
        support::concurrent(TASKS, Until::Calls(per_task), move |call| {
            let coll = slips25.clone();
            async move { Slip25 { number: 0, call }.insert_with_id(&coll).await }
        }),
    );
    let fired = fail_point.fired().await;
    let (one, batched) = (support::outcomes(&one), support::outcomes(&batched));
    let (one, batched) = ((one.0, [one.1, sure_errors].concat()), batched);
    let expected = format!("mongo:command:{code}");
    let mut lines = Vec::new();
    for (label, (ok, errors), first, coll, counter, batch) in [
        ("batch=1", one, &mut first, "slips", "slip", 1),
        ("batch=25", batched, &mut first25, "slips25", "slip25", 25),
    ] {
        let label = format!("{name}/{label}");
        for e in &errors {
            assert_eq!(*e, expected, "{label}: a typed error naming the code");
        }
        first.extend(ok);
        let stored = Stored::read(&db, coll, "number").await;
        let last = common::counter(&db, counter).await.unwrap_or(0);
        // An update the server refused before it ran takes nothing; the client counts every
        // update it did not see succeed, and a cache holds or dropped the rest.
        let bound =
            unconfirmed.of(counter) as u64 + common::held_by_cache(&db, counter, batch).await;
        let gaps = Promise {
            gaps_at_most: Some((last, bound)),
            dense: false,
        };
        checker::judge(first, &stored, gaps).assert_clean(&label);
        lines.push(format!(
            "{label}: ok={} errors={} stored={} counter={last} (gaps bound {bound})",
            first.len(),
            errors.len(),
            stored.documents()
        ));
    }
    println!(
        "counter-write-errors: fired={fired} | {}",
        lines.join(" | ")
    );
    format!("{name}:fired={fired}")
}

/// A full disk, then a primary that is no longer one, on the counter updates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_write_errors_lose_and_repeat_nothing() {
    let disk = under(14031, "disk_full").await;
    let primary = under(10107, "not_primary").await;
    println!("reliability: counter-write-errors {disk} {primary} duplicates=0 lost=0");
}
