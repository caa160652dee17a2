//! `repair` racing live writers of a proxy collection: claims are repaired (and pruned) over
//! and over while tasks insert claimed documents, batched and gapless at once. A writer's
//! claim and document commit together, so a repair never sees one without the other: it
//! claims and prunes exactly the damage planted before it ran, every acknowledged number is
//! stored once, and every document ends with its claim.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mongo_sequence::claims::Claims;
use mongo_sequence::SequentialId;
use mongodb::bson::{doc, oid::ObjectId, Document};
use mongodb::{Collection, Database};
use serde::{Deserialize, Serialize};

use crate::checker::{self, Promise, Stored};
use crate::common;
use crate::reliability_support::{self as support, Until};

/// Batched numbers, claimed in a proxy collection.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "race_ticket", batch = 25, unique = "proxy")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
    call: String,
}

/// Gapless numbers, claimed in a proxy collection.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "race_invoice", gapless, unique = "proxy")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
    call: String,
}

/// Tasks writing each model.
const TASKS: usize = 8;
/// Documents without a claim, and claims without a document, planted in each collection
/// before the writers start (far above the numbers the writers take).
const PLANTED: u64 = 20;

/// Plants `PLANTED` documents without a claim and `PLANTED` claims of no document.
async fn plant(docs: &Collection<Document>, claims: &Collection<Document>) {
    let unclaimed: Vec<Document> = (0..PLANTED as i64)
        .map(|i| doc! { "_id": ObjectId::new(), "number": 1_000_000 + i, "call": "planted" })
        .collect();
    docs.insert_many(unclaimed).await.unwrap();
    let orphans =
        (0..PLANTED as i64).map(|i| doc! { "_id": 2_000_000 + i, "doc": ObjectId::new() });
    claims.insert_many(orphans).await.unwrap();
}

/// Repairs `claims` with pruning until `done`, and once more after; returns how many
/// repairs started while the writers wrote, and what all of them claimed and pruned.
async fn repair_until(claims: Claims, done: Arc<AtomicBool>) -> (u64, u64, u64) {
    let (mut during, mut claimed, mut pruned) = (0, 0, 0);
    loop {
        let writing = !done.load(Ordering::SeqCst);
        let report = claims.repair().prune(true).await.expect("a repair");
        assert_eq!(report.raced, 0, "a repair met a writer's claim: {report:?}");
        claimed += report.claimed;
        pruned += report.pruned;
        if !writing {
            return (during, claimed, pruned);
        }
        during += 1;
    }
}

/// Checks one model's collection after the race: what the checker says of the writers'
/// numbers, and every document (planted ones included) with its claim.
async fn check(
    db: &Database,
    label: &str,
    coll: &str,
    acknowledged: &[(i64, String)],
    dense: bool,
) {
    let stored = Stored::read_calls(db, coll, "number", Some("call")).await;
    let written: Vec<(i64, String)> = acknowledged.to_vec();
    assert_eq!(
        stored.documents() as u64,
        written.len() as u64 + PLANTED,
        "{label}: the writers' documents and the planted ones"
    );
    let promise = Promise {
        gaps_at_most: None,
        dense: false,
    };
    checker::judge(&written, &stored, promise).assert_clean(label);
    if dense {
        let mut numbers: Vec<i64> = written.iter().map(|(n, _)| *n).collect();
        numbers.sort_unstable();
        assert_eq!(
            numbers,
            (1..=written.len() as i64).collect::<Vec<_>>(),
            "{label}: gapless numbers 1..=N"
        );
    }
    let docs = db.collection::<Document>(coll);
    let claims = db.collection::<Document>(&format!("{coll}.claims.number"));
    common::claims_match(label, &docs, &claims).await;
}

/// Repairs with pruning run over and over while 8 tasks insert batched and 8 gapless claimed
/// documents (40 each; 400 with `SOAK=1`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repairs_racing_live_writers_touch_only_the_damage() {
    let calls = common::pick(40, 400);
    let db = common::database("repair_race").await;
    let tickets = db.collection::<Ticket>("tickets");
    let invoices = db.collection::<Invoice>("invoices");
    // The claims collections and their indexes exist before the damage is planted.
    for (n, call) in [(1, "first"), (2, "second")] {
        let ticket = Ticket {
            oid: None,
            number: None,
            call: call.into(),
        };
        let invoice = Invoice {
            oid: None,
            number: None,
            call: call.into(),
        };
        assert_eq!(ticket.clone().insert_with_id(&tickets).await.unwrap(), n);
        assert_eq!(invoice.clone().insert_with_id(&invoices).await.unwrap(), n);
    }
    let mut planted = Vec::new();
    for coll in ["tickets", "invoices"] {
        let docs = db.collection::<Document>(coll);
        let claims = Claims::with_default_proxy(&docs, "number");
        plant(&docs, claims.proxy()).await;
        planted.push(claims);
    }

    let done = Arc::new(AtomicBool::new(false));
    let repairs: Vec<_> = (planted.into_iter())
        .map(|claims| tokio::spawn(repair_until(claims, done.clone())))
        .collect();
    let (t, i) = tokio::join!(
        support::concurrent(TASKS, Until::Calls(calls), move |call| {
            let coll = tickets.clone();
            async move {
                let mut ticket = Ticket {
                    oid: None,
                    number: None,
                    call,
                };
                ticket.insert_with_id(&coll).await
            }
        }),
        support::concurrent(TASKS, Until::Calls(calls), move |call| {
            let coll = invoices.clone();
            async move {
                let mut invoice = Invoice {
                    oid: None,
                    number: None,
                    call,
                };
                invoice.insert_with_id(&coll).await
            }
        }),
    );
    done.store(true, Ordering::SeqCst);
    let mut lines = Vec::new();
    let mut total_repairs = 0;
    for (label, repair) in ["tickets", "invoices"].into_iter().zip(repairs) {
        let (during, claimed, pruned) = repair.await.unwrap();
        assert_eq!(
            (claimed, pruned),
            (PLANTED, PLANTED),
            "{label}: the repairs claimed and pruned exactly the planted damage"
        );
        assert!(
            during >= 2,
            "{label}: only {during} repair(s) ran beside the writers: the race was not run"
        );
        total_repairs += during;
        lines.push(format!(
            "{label}: repairs={during} claimed={claimed} pruned={pruned}"
        ));
    }
    let first = |n: i64, call: &str| (n, call.to_owned());
    // The acknowledged (number, call) pairs: every insert succeeded.
    let acked = |calls: Vec<support::Record>| -> Vec<(i64, String)> {
        let writers = calls
            .into_iter()
            .map(|c| (c.outcome.expect("a claimed insert"), c.call));
        [first(1, "first"), first(2, "second")]
            .into_iter()
            .chain(writers)
            .collect()
    };
    let (tickets_acked, invoices_acked) = (acked(t), acked(i));
    check(&db, "tickets", "tickets", &tickets_acked, false).await;
    check(&db, "invoices", "invoices", &invoices_acked, true).await;
    let ids = tickets_acked.len() + invoices_acked.len();
    println!("repair-race: {}", lines.join(" | "));
    println!(
        "reliability: repair-race repairs={total_repairs} ids={ids} duplicates=0 lost=0 \
         planted_claimed={} planted_pruned={}",
        2 * PLANTED,
        2 * PLANTED
    );
}
