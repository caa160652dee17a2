//! A negative control for the central promise, "no ID is ever issued twice, across crashes and
//! failovers", which rests on counter updates at `w: majority`. The same schedule runs twice at
//! once, each on a 3-node replica set of its own: replication to both secondaries held back
//! (the `stopReplProducer` fail point), numbers taken on the primary, the primary killed with
//! `SIGKILL`, a secondary elected, replication let go, numbering continued on the new primary
//! until its counter is past the old primary's, the old primary started again (it rolls back
//! what it alone had). Once with the counter's
//! write concern lowered to `w: 1`, once at the default (`majority`); the inserts are
//! `w: majority` both times. The numbers are stored in a field without a unique index, so a
//! number issued twice is stored twice.
//!
//! At `w: 1` the new primary never saw the counter updates the old one acknowledged, and hands
//! the same numbers out again, and both calls store theirs: the test asserts that the checker
//! (`checker.rs`), reading the database, finds these duplicates (if it finds none, the scenario
//! did not reproduce the anomaly, and the test fails). At `majority` the same schedule gives no
//! duplicate and loses no acknowledged document, by the same reading.

use crate::common;

use crate::checker::{self, Promise, Stored};
use crate::reliability_support as support;
use std::os::unix::process::ExitStatusExt;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mongo_sequence::{Sequence, SequenceOptions};
use mongodb::bson::{doc, Document};
use mongodb::options::{CollectionOptions, WriteConcern};
use sequence_testkit::TestServer;

const TASKS: usize = 4;

/// What one run saw.
struct Run {
    /// Numbers issued and acknowledged (stored at `w: majority`), with the call that got each.
    acknowledged: Vec<(i64, String)>,
    errors: usize,
    /// Numbers acknowledged more than once.
    duplicates: usize,
    /// Acknowledged calls whose document is not stored after the old primary rejoined.
    missing: usize,
    /// What was applied, for the summary.
    applied: String,
}

/// Switches `stopReplProducer` on or off on node `i`: a secondary with it on fetches nothing
/// more from its sync source.
async fn hold_replication(server: &TestServer, i: usize, on: bool) {
    let direct = mongodb::Client::with_uri_str(server.nodes()[i].direct_uri())
        .await
        .unwrap();
    direct
        .database("admin")
        .run_command(doc! {
            "configureFailPoint": "stopReplProducer",
            "mode": if on { "alwaysOn" } else { "off" },
        })
        .await
        .expect("configureFailPoint stopReplProducer (the server runs with enableTestCommands=1)");
}

/// The counter's value as node `i` alone has it.
async fn counter_on(server: &TestServer, i: usize, db: &str) -> i64 {
    let direct = mongodb::Client::with_uri_str(server.nodes()[i].direct_uri())
        .await
        .unwrap();
    common::counter(&direct.database(db), "ticket")
        .await
        .unwrap_or(0)
}

/// `TASKS` tasks take numbers from `seq` and insert a document with each at `w: majority`
/// until `stop`; returns the acknowledged (number, call) pairs and the count of failed calls.
async fn number(
    seq: Sequence,
    coll: mongodb::Collection<Document>,
    stop: Arc<AtomicBool>,
) -> (Vec<(i64, String)>, usize) {
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (seq, coll, stop) = (seq.clone(), coll.clone(), stop.clone());
            tokio::spawn(async move {
                let (mut ok, mut errors) = (Vec::new(), 0);
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let call = format!("{task}-{i}");
                    let outcome = match seq.next().await {
                        Ok(n) => coll
                            .insert_one(doc! { "number": n, "call": &call })
                            .await
                            .map(|_| n)
                            .map_err(mongo_sequence::Error::from),
                        Err(e) => Err(e),
                    };
                    match outcome {
                        Ok(n) => ok.push((n, call)),
                        Err(e) => {
                            assert!(
                                matches!(e, mongo_sequence::Error::Mongo(_)),
                                "a typed error of the driver: {e:?}"
                            );
                            errors += 1;
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }
                (ok, errors)
            })
        })
        .collect();
    let (mut ok, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (o, e) = t.await.unwrap();
        ok.extend(o);
        errors += e;
    }
    (ok, errors)
}

/// The schedule, with the counter updates at `counter_wc`.
async fn run(counter_wc: WriteConcern, label: &str) -> Run {
    let server = support::three_nodes(None).await;
    let name = format!("rollback_{label}");
    let client = common::client_with_app(server.uri(), &name, |o| {
        o.server_selection_timeout = Some(Duration::from_secs(20));
    })
    .await;
    let db = client.database(&name);
    let coll = db.collection_with_options::<Document>(
        "tickets",
        CollectionOptions::builder()
            .write_concern(WriteConcern::majority())
            .build(),
    );
    let seq = Sequence::new(
        &db,
        SequenceOptions::builder("ticket")
            .write_concern(Some(counter_wc))
            .build(),
    )
    .unwrap();
    // The counter and the collection exist everywhere before the fault.
    let first = seq.next().await.unwrap();
    coll.insert_one(doc! { "number": first, "call": "first" })
        .await
        .unwrap();
    let mut acknowledged = vec![(first, "first".to_owned())];

    let (old, term) = support::primary_and_term(&server).await;
    let secondaries: Vec<usize> = (0..3).filter(|&i| i != old).collect();
    for &i in &secondaries {
        hold_replication(&server, i, true).await;
    }

    // Numbers taken on the old primary while its secondaries replicate nothing.
    let stop = Arc::new(AtomicBool::new(false));
    let workload = tokio::spawn(number(seq.clone(), coll.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let on_old = counter_on(&server, old, &name).await;
    for &i in &secondaries {
        let on_secondary = counter_on(&server, i, &name).await;
        assert!(
            on_secondary < on_old,
            "{label}: replication was held back (node {i} has {on_secondary}, the primary {on_old})"
        );
    }
    let s = server.clone();
    let status = tokio::task::spawn_blocking(move || s.kill_node(old))
        .await
        .unwrap();
    // `waitpid`'s word: the running node died of the kill, not of anything else.
    assert_eq!(
        status.and_then(|s| s.signal()),
        Some(libc::SIGKILL),
        "{label}: node {old} was running and died of SIGKILL: {status:?}"
    );
    let (elected, _) = support::elected_instead(&server, old, term).await;
    for &i in &secondaries {
        hold_replication(&server, i, false).await;
    }
    // Numbering continues on the new primary until its counter is past every number the old
    // primary took: at `w: 1` each of those has then been handed out again.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let on_new = counter_on(&server, elected, &name).await;
        if on_new > on_old {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{label}: numbering continues on the new primary (node {elected} has {on_new}, the old primary had {on_old})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::SeqCst);
    let (ok, errors) = workload.await.unwrap();
    acknowledged.extend(ok);

    // The old primary starts again, rolls back what it alone had, and rejoins.
    let s = server.clone();
    tokio::task::spawn_blocking(move || {
        s.restart_node(old)?;
        s.wait_until_ready(Duration::from_secs(60))
    })
    .await
    .unwrap()
    .expect("the old primary rejoins");

    // The checker's reading of the database (majority read concern): each number stored,
    // and which call stored it.
    let stored = Stored::read_calls(&db, "tickets", "number", Some("call")).await;
    let verdict = checker::judge(&acknowledged, &stored, Promise::default());
    let duplicates = verdict.duplicates.len();
    let missing = verdict.lost.len();
    drop(client);
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
    Run {
        acknowledged,
        errors,
        duplicates,
        missing,
        applied: format!("held(replication),numbered_on({old}:{on_old}),kill({old}),elected({elected}),rejoined({old})"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn majority_counter_updates_survive_the_rollback_that_w1_does_not() {
    // The two runs have replica sets of their own, and run at once.
    let (w1, majority) = tokio::join!(
        run(WriteConcern::nodes(1), "w1"),
        run(WriteConcern::majority(), "majority")
    );
    println!(
        "rollback: w1: ids={} duplicates={} missing={} errors={} applied={}",
        w1.acknowledged.len(),
        w1.duplicates,
        w1.missing,
        w1.errors,
        w1.applied
    );
    assert!(
        w1.duplicates > 0,
        "at w: 1 the rollback must reissue acknowledged numbers, stored twice; the checker found none in the database: the scenario did not reproduce the anomaly"
    );
    println!(
        "rollback: majority: ids={} duplicates={} missing={} errors={} applied={}",
        majority.acknowledged.len(),
        majority.duplicates,
        majority.missing,
        majority.errors,
        majority.applied
    );
    assert_eq!(
        majority.duplicates, 0,
        "at w: majority no number is issued twice"
    );
    assert_eq!(
        majority.missing, 0,
        "at w: majority no acknowledged document is lost"
    );
    println!(
        "reliability: rollback-control w1_duplicates={} majority_duplicates=0 majority_missing=0 w1_ids={} w1_missing={} majority_ids={}",
        w1.duplicates,
        w1.acknowledged.len(),
        w1.missing,
        majority.acknowledged.len()
    );
}
