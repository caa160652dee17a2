//! Failover on a 3-node replica set on loopback: during a steady insert workload the primary is
//! stepped down (`replSetStepDown: 5, force: true`) and once killed with `SIGKILL` and started
//! again. Each fault is asserted applied: the step-down acknowledged, and after it and after
//! the kill another node primary in a later election term; the killed node gone and back in
//! the set; the workload's client felt each step-down and kill: a command failed on the wire,
//! or its monitor saw the primary it knew stop being primary (when no command was in flight
//! at that moment, the driver may learn the new topology before it sends one). No ID is issued twice, every acknowledged document is there afterwards (read with
//! majority read concern from the new primary), failed calls return typed errors, and inserts
//! go on after the faults.
//!
//! A third workload numbers an hourly sequence on a clock of the test's own, which crosses
//! into the next hour at the moment of the first step-down: the new hour's counter is created
//! while the primary steps down. Each of its IDs is in the hour the clock said all through its
//! call, no number is stored twice in an hour, and every acknowledged one is stored
//! (`period-failover`).
//!
//! The workload runs 20 s by default and 60 s with `SOAK=1`.

use crate::common;

use std::os::unix::process::ExitStatusExt;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::checker::{self, Promise, Stored};
use crate::common::models::{hour, hourly_key, Event, Hourly, Reading};
use crate::reliability_support::{self as support, Unconfirmed};
use mongo_sequence::clock::{Clock, ManualClock};
use mongo_sequence::jiff::Timestamp;
use mongodb::bson::doc;
use mongodb::event::command::CommandEvent;
use mongodb::event::sdam::SdamEvent;
use mongodb::event::EventHandler;
use mongodb::options::WriteConcern;
use mongodb::ServerType;
use sequence_testkit::TestServer;

/// What happens when, in seconds from the start of the workload.
#[derive(Clone, Copy, Debug)]
enum Fault {
    StepDown,
    KillPrimary,
    RestartKilled,
}

const TASKS_PER_MODEL: usize = 4;

/// Steps the current primary down through a direct connection, asserts that the server
/// acknowledged it and that another node was elected in a later term; returns the old and the
/// new primary and the new term.
async fn step_down(server: &Arc<TestServer>) -> (usize, usize, i64) {
    let (primary, term) = support::primary_and_term(server).await;
    let direct = mongodb::Client::with_uri_str(server.nodes()[primary].direct_uri())
        .await
        .unwrap();
    direct
        .database("admin")
        .run_command(doc! { "replSetStepDown": 5, "force": true })
        .await
        .expect("replSetStepDown is acknowledged");
    let (elected, new_term) = support::elected_instead(server, primary, term).await;
    println!("failover: stepped down node {primary} (term {term}); node {elected} elected in term {new_term}");
    (primary, elected, new_term)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_loses_no_acknowledged_document() {
    let server = support::three_nodes(None).await;

    let duration = common::pick(20, 60);
    let schedule: Vec<(u64, Fault)> = if common::soak() {
        vec![
            (10, Fault::StepDown),
            (20, Fault::StepDown),
            (30, Fault::KillPrimary),
            (35, Fault::RestartKilled),
            (42, Fault::StepDown),
        ]
    } else {
        vec![
            (3, Fault::StepDown),
            (7, Fault::KillPrimary),
            (10, Fault::RestartKilled),
            (13, Fault::StepDown),
        ]
    };
    // Commands that failed (or whose write concern failed) on the wire: the faults the workload
    // felt, whether or not a retry then hid them from the caller.
    // The counter updates whose outcome the client did not learn bound the gaps.
    let failed_commands = Arc::new(AtomicU64::new(0));
    let seen = failed_commands.clone();
    // The times the client's monitor saw a primary stop being primary.
    let primaries_lost = Arc::new(AtomicU64::new(0));
    let lost = primaries_lost.clone();
    let unconfirmed = Unconfirmed::default();
    let watched = unconfirmed.clone();
    let client = common::client_with_app(server.uri(), "failover", |o| {
        o.write_concern = Some(WriteConcern::majority());
        o.command_event_handler = Some(EventHandler::callback(move |e| {
            let failed = match &e {
                CommandEvent::Failed(_) => true,
                CommandEvent::Succeeded(s) => s.reply.contains_key("writeConcernError"),
                _ => false,
            };
            if failed {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            watched.observe(e);
        }));
        o.sdam_event_handler = Some(EventHandler::callback(move |e| {
            if let SdamEvent::ServerDescriptionChanged(change) = &e {
                if change.previous_description.server_type() == ServerType::RsPrimary
                    && change.new_description.server_type() != ServerType::RsPrimary
                {
                    lost.fetch_add(1, Ordering::SeqCst);
                }
            }
        }));
    })
    .await;
    let db = client.database("failover");
    let events = db.collection::<Event>("events");
    let readings = db.collection::<Reading>("readings");
    let stamps = db.collection::<Hourly>("stamps");
    let at = |s: &str| -> Timestamp { s.parse().unwrap() };
    let clock = Arc::new(ManualClock::new(at("2026-11-28T10:59:00Z")));
    Hourly::sequence(&stamps).set_clock(clock.clone());
    let next_hour = at("2026-11-28T11:00:00Z");

    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let event_calls = tokio::spawn(support::workload(
        TASKS_PER_MODEL,
        stop.clone(),
        start,
        move |call| {
            let coll = events.clone();
            async move { Event { id: 0, call }.insert_with_id(&coll).await }
        },
    ));
    let reading_calls = tokio::spawn(support::workload(
        TASKS_PER_MODEL,
        stop.clone(),
        start,
        move |call| {
            let coll = readings.clone();
            async move { Reading { number: 0, call }.insert_with_id(&coll).await }
        },
    ));

    let stamp_clock = clock.clone();
    let stamp_calls = tokio::spawn(support::workload(
        TASKS_PER_MODEL,
        stop.clone(),
        start,
        move |call| {
            let (coll, clock) = (stamps.clone(), stamp_clock.clone());
            async move {
                let before = hour(clock.now());
                let mut stamp = Hourly {
                    id: String::new(),
                    call,
                };
                let id = stamp.insert_with_id(&coll).await?;
                // The clock only moves forward, once: a call that began and ended in one hour
                // ran all in it.
                if hour(clock.now()) == before {
                    assert!(id.starts_with(&before), "{id} taken at hour {before}");
                }
                Ok(hourly_key(&id))
            }
        },
    ));

    let mut killed = None;
    let mut applied = Vec::new();
    // What the client had felt (failed commands, primaries lost) when each fault began, and
    // when the last election was observed ("after the faults" starts there).
    let felt = || {
        (
            failed_commands.load(Ordering::SeqCst),
            primaries_lost.load(Ordering::SeqCst),
        )
    };
    let mut failed_at = Vec::new();
    let mut quiet_from = 0;
    let scheduled = schedule.len();
    for (at, fault) in schedule {
        let wait = Duration::from_secs(at).saturating_sub(start.elapsed());
        tokio::time::sleep(wait).await;
        failed_at.push((fault, felt()));
        match fault {
            Fault::StepDown => {
                // The next hour begins as the first step-down does.
                if clock.now() < next_hour {
                    clock.set(next_hour);
                }
                let (old, new, term) = step_down(&server).await;
                quiet_from = start.elapsed().as_millis() as u64;
                applied.push(format!("stepdown:{old}->{new}@{term}"));
            }
            Fault::KillPrimary => {
                let (primary, term) = support::primary_and_term(&server).await;
                let s = server.clone();
                let status = tokio::task::spawn_blocking(move || s.kill_node(primary))
                    .await
                    .unwrap();
                // `waitpid`'s word: the running node died of the kill, not of anything else.
                assert_eq!(
                    status.and_then(|s| s.signal()),
                    Some(libc::SIGKILL),
                    "node {primary} was running and died of SIGKILL: {status:?}"
                );
                let (elected, new_term) = support::elected_instead(&server, primary, term).await;
                quiet_from = start.elapsed().as_millis() as u64;
                println!(
                    "failover: killed node {primary} with SIGKILL (term {term}); node {elected} elected in term {new_term}"
                );
                killed = Some(primary);
                applied.push(format!("kill:{primary}->{elected}@{new_term}"));
            }
            Fault::RestartKilled => {
                let node = killed.take().expect("a killed node");
                let s = server.clone();
                tokio::task::spawn_blocking(move || s.restart_node(node))
                    .await
                    .unwrap()
                    .expect("the killed node starts again");
                let s = server.clone();
                tokio::task::spawn_blocking(move || s.wait_until_ready(Duration::from_secs(60)))
                    .await
                    .unwrap()
                    .expect("the restarted node rejoins as a secondary");
                assert!(server.nodes()[node].is_running(), "node {node} is back");
                println!("failover: restarted node {node}, back in the set");
                applied.push(format!("restart:{node}"));
            }
        }
    }
    assert_eq!(applied.len(), scheduled, "every fault applied: {applied:?}");
    // The client felt each step-down and kill before the next fault began: a command of the
    // workload failed on the wire, or its monitor saw the primary go (a restart does neither).
    failed_at.push((Fault::RestartKilled, felt()));
    for (k, pair) in failed_at.windows(2).enumerate() {
        let ((fault, before), (_, after)) = (pair[0], pair[1]);
        if !matches!(fault, Fault::RestartKilled) {
            assert!(
                after.0 > before.0 || after.1 > before.1,
                "fault {k} ({fault:?}) failed no command of the workload and its client did not \
                 see the primary go: it missed it"
            );
        }
    }
    let wait = Duration::from_secs(duration).saturating_sub(start.elapsed());
    tokio::time::sleep(wait).await;
    stop.store(true, Ordering::SeqCst);
    let event_calls = event_calls.await.unwrap();
    let reading_calls = reading_calls.await.unwrap();
    let stamp_calls = stamp_calls.await.unwrap();

    // Read everything back from the primary with majority read concern once all nodes are up.
    let s = server.clone();
    let primary = tokio::task::spawn_blocking(move || s.wait_until_ready(Duration::from_secs(60)))
        .await
        .unwrap()
        .expect("the replica set recovers");
    let reader = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let rdb = reader.database("failover");
    let mut summary = Vec::new();
    let (mut total_ok, mut total_errors, mut total_lost, mut total_after) = (0, 0, 0, 0);
    for (label, calls, coll, field, counter_name, batch) in [
        ("batch=1", &event_calls, "events", "_id", "event", 1_u64),
        (
            "batch=25",
            &reading_calls,
            "readings",
            "number",
            "reading",
            25,
        ),
    ] {
        let stored = Stored::read(&rdb, coll, field).await;
        let (ok, errors, after) = support::check_calls(label, calls, &stored, quiet_from);
        let counter = common::counter(&rdb, counter_name).await.unwrap_or(0);
        let lost = counter - stored.documents() as i64;
        // Each counter update whose outcome the client did not learn may have consumed what
        // it reserved; a cache holds or dropped the rest; a failed insert skipped its number.
        let bound = unconfirmed.of(counter_name) as u64
            + common::held_by_cache(&rdb, counter_name, batch).await
            + errors.len() as u64;
        let gaps = Promise {
            gaps_at_most: Some((counter, bound)),
            dense: false,
        };
        checker::judge(&ok, &stored, gaps).assert_clean(label);
        summary.push(format!(
            "{label}: ok={} errors={} stored={} lost={lost} (bound {bound}) ok_after_faults={after} kinds={}",
            ok.len(),
            errors.len(),
            stored.documents(),
            support::tally(&errors)
        ));
        total_ok += ok.len();
        total_errors += errors.len();
        total_lost += lost;
        total_after += after;
    }
    // The hourly stamps, per hour: (hour, number) as one key.
    let stored = Stored::read_hourly(&rdb, "stamps").await;
    let (ok, errors, after) = support::check_calls("hourly", &stamp_calls, &stored, quiet_from);
    let next = hour(next_hour).parse::<i64>().unwrap() * 1_000_000;
    let in_next = ok.iter().filter(|&&k| k > next).count();
    assert!(
        in_next > 0 && in_next < ok.len(),
        "IDs of both hours: {in_next} of {} in the next",
        ok.len()
    );
    summary.push(format!(
        "hourly: ok={} errors={} stored={} next_hour={in_next} ok_after_faults={after} kinds={}",
        ok.len(),
        errors.len(),
        stored.documents(),
        support::tally(&errors)
    ));
    let period_line = format!(
        "reliability: period-failover ids={} hours=2 next_hour_ids={in_next} duplicates=0 lost=0",
        ok.len()
    );
    for line in &summary {
        println!("failover: {line}");
    }
    let failed = failed_commands.load(Ordering::SeqCst);
    assert!(
        failed > 0,
        "the workload's commands never failed on the wire: the faults missed it"
    );
    println!(
        "reliability: failover seconds={duration} faults={} ({}) ids={total_ok} duplicates=0 missing=0 lost={total_lost} errors={total_errors} ok_after_faults={total_after} failed_commands={} primaries_lost={} primary_at_end={primary}",
        applied.len(),
        applied.join(","),
        failed,
        primaries_lost.load(Ordering::SeqCst)
    );
    println!("{period_line}");
    drop(reader);
    drop(client);
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}
