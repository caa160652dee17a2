//! Fault injection with the server's `failCommand` fail point, on the counter update
//! (`findAndModify`) and on the insert: dropped connections, a retryable error (91,
//! `ShutdownInProgress`, labelled `RetryableWriteError`) and an unconfirmed write concern (64),
//! a fixed number of times or at random. Never a duplicate; every call that returned `Ok` has
//! exactly one stored document; an insert of unknown outcome is sent again with the same ID;
//! failed calls return typed errors.
//!
//! Every fault is asserted applied, with the commands the client sent counted on the wire: a
//! `{times: n}` point fired exactly `n` times, a random one no less than its expected count
//! less four standard deviations, an `alwaysOn` one on every command it applies to.
//!
//! The fail point is limited to this test's client by its application name. It is one per
//! server, so each test of this file has a server of its own (the shared one, or one it
//! starts) and they run side by side.

use crate::common;

use std::collections::HashSet;

use crate::checker::{self, Promise, Stored};
use crate::common::models::{self, Claimed, Receipt};
use crate::reliability_support::{self as support, Unconfirmed, Until};
use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Bson, Document};
use mongodb::event::EventHandler;
use mongodb::Database;
use sequence_testkit::{unique_db_name, ServerOptions, TestServer};
use serde::{Deserialize, Serialize};

/// The ID is not `_id` and has no unique index, so a document stored twice would show.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket")]
struct Ticket {
    #[seq(id)]
    number: i64,
    call: String,
}

/// The same with a batch cache.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket25", batch = 25)]
struct CachedTicket {
    #[seq(id)]
    number: i64,
    call: String,
}

/// The ID is `_id`.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    call: String,
}

/// The fault a fail point injects.
#[derive(Clone, Copy, Debug)]
enum Fault {
    CloseConnection,
    Retryable91,
    WriteConcern64,
}

impl Fault {
    const ALL: [Fault; 3] = [
        Fault::CloseConnection,
        Fault::Retryable91,
        Fault::WriteConcern64,
    ];

    fn data(self, commands: &[&str], app: &str) -> Document {
        let mut data = doc! { "failCommands": commands, "appName": app };
        match self {
            Fault::CloseConnection => {
                data.insert("closeConnection", true);
            }
            Fault::Retryable91 => {
                data.insert("errorCode", 91);
                data.insert("errorLabels", vec![Bson::from("RetryableWriteError")]);
            }
            Fault::WriteConcern64 => {
                data.insert(
                    "writeConcernError",
                    doc! { "code": 64, "codeName": "WriteConcernFailed", "errmsg": "injected: waiting for replication timed out", "errInfo": { "wtimeout": true } },
                );
            }
        }
        data
    }

    /// Whether the command runs before the fault is reported (and so may consume a number).
    fn applies_the_write(self) -> bool {
        matches!(self, Fault::WriteConcern64)
    }

    /// How many chances the fault had so far among `commands` of the client `wire` watches:
    /// every command sent for a fault that fails it before it runs; every command answered
    /// `ok` for a write concern error, which the server adds only to a command that ran.
    fn chances(self, wire: &Unconfirmed, commands: &[&str]) -> i64 {
        if self.applies_the_write() {
            wire.answered(commands)
        } else {
            wire.sent(commands)
        }
    }
}

/// What one scenario saw.
#[derive(Default)]
struct Outcome {
    ok: Vec<i64>,
    errors: Vec<String>,
    fired: i64,
}

/// A client of the shared server whose connections are named `app`, and the counter updates it
/// saw unconfirmed.
///
/// After an injected error the driver marks the server unknown and waits for its monitor's next
/// check (up to `heartbeatFrequencyMS`, 10 s by default, after error 91) before it selects it
/// again; the smallest frequency keeps that pause at 0.5 s.
async fn app_client(uri: &str, app: &str) -> (mongodb::Client, Unconfirmed) {
    let unconfirmed = Unconfirmed::default();
    let seen = unconfirmed.clone();
    let client = common::client_with_app(uri, app, |o| {
        o.heartbeat_freq = Some(std::time::Duration::from_millis(500));
        o.command_event_handler = Some(EventHandler::callback(move |e| seen.observe(e)));
    })
    .await;
    (client, unconfirmed)
}

/// Asserts that a `{times: n}` fail point fired all its `n` times: the calls after it sent
/// more than `n` of its commands, so a fault that fired less often was not applied.
fn assert_fired_times(label: &str, fired: i64, times: i64) {
    assert_eq!(
        fired, times,
        "{label}: the fail point fired {fired} times, not the {times} it was set to"
    );
}

/// Asserts that a fail point on at `probability` fired at least once and no less than its
/// expected count less four standard deviations: `n` commands it applies to were sent while
/// it was on, so its firings are binomial (`n`, `probability`), and fall that low by chance
/// less than once in ten thousand runs.
fn assert_fired_share(label: &str, fired: i64, sent: i64, probability: f64) {
    let expected = probability * sent as f64;
    let sd = (expected * (1.0 - probability)).sqrt();
    let least = (expected - 4.0 * sd).floor().max(1.0);
    assert!(
        fired as f64 >= least,
        "{label}: the fail point fired {fired} times, expected {expected:.0} ± {sd:.1} ({sent} commands at p={probability}), at least {least}"
    );
}

/// The field that holds the numbers of the collection `coll` of this file's models.
fn number_field(coll: &str) -> &'static str {
    match coll {
        "orders" => "_id",
        _ => "number",
    }
}

/// Checks the invariants of a run with the checker: no number stored twice, every `Ok` stored,
/// no ID returned twice; then only typed errors, and the counter never behind what was stored.
/// Returns (stored documents, stored documents whose call failed, numbers consumed but unused).
async fn check(
    label: &str,
    db: &Database,
    counter_name: &str,
    coll: &str,
    out: &Outcome,
) -> (usize, usize, i64) {
    let ok: HashSet<i64> = out.ok.iter().copied().collect();
    assert_eq!(ok.len(), out.ok.len(), "{label}: an ID was returned twice");
    let stored = Stored::read(db, coll, number_field(coll)).await;
    checker::judge(&out.ok, &stored, Promise::default()).assert_clean(label);
    for e in &out.errors {
        assert!(
            e.starts_with("mongo:"),
            "{label}: untyped or unexpected error {e}"
        );
    }
    let stored_after_error = stored.documents() - ok.len();
    assert!(
        stored_after_error <= out.errors.len(),
        "{label}: {stored_after_error} documents stored by failed calls, only {} failed",
        out.errors.len()
    );
    let last = common::counter(db, counter_name).await.unwrap_or(0);
    let max_stored = stored.highest().unwrap_or(0);
    assert!(
        last >= max_stored,
        "{label}: counter {last} behind stored {max_stored}"
    );
    (
        stored.documents(),
        stored_after_error,
        last - stored.documents() as i64,
    )
}

/// `{times: n}` on each command, for each fault, with sequential calls: the faults on the
/// insert on the shared server, those on the counter update at the same time on a server of
/// their own (the fail point is one per server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_a_fixed_number_of_times() {
    let own = tokio::task::spawn_blocking(|| TestServer::start(ServerOptions::default()))
        .await
        .unwrap()
        .expect("a server for the faults on the counter update starts");
    let (insert, counter) = tokio::join!(
        fixed_faults("insert", TestServer::shared_or_panic().uri()),
        fixed_faults("findAndModify", own.uri())
    );
    let [ok, fired, errors, lost] = [0, 1, 2, 3].map(|i| insert[i] + counter[i]);
    println!(
        "reliability: faults-times ids={ok} duplicates=0 lost={lost} faults={fired} errors={errors}"
    );
    tokio::task::spawn_blocking(move || drop(own))
        .await
        .unwrap();
}

/// The faults on `command` of the server at `uri`, each kind a fixed number of times in turn:
/// returns the calls that succeeded, the faults fired, the failed calls and the numbers lost.
async fn fixed_faults(command: &str, uri: &str) -> [i64; 4] {
    // Enough calls to use up ten faults on the counter update (two sends per call, with the
    // driver's retry) and see the next call succeed.
    let calls_after_first: usize = common::pick(6, 12);
    let admin = mongodb::Client::with_uri_str(uri)
        .await
        .unwrap()
        .database("admin");
    let (mut total_ok, mut total_fired, mut total_errors, mut total_lost) = (0, 0, 0, 0);
    for fault in Fault::ALL {
        // 1: the driver's own retry covers it; 3: this crate's retry of the insert is
        // needed, and more than the two sends of one counter update; 9: more than the
        // eight sends of one insert (4 attempts, each retried once by the driver).
        let all_times: &[i64] = match (command, common::soak()) {
            (_, true) => &[1, 3, 10],
            ("insert", false) => &[1, 3, 9],
            (_, false) => &[1, 3],
        };
        for &times in all_times {
            let label = format!("{command}/{fault:?}/times={times}");
            let name = unique_db_name("faults_times");
            let app = format!("app-{name}");
            let (client, unconfirmed) = app_client(uri, &app).await;
            let db = client.database(&name);
            let coll = db.collection::<Ticket>("tickets");
            // Create the counter and the collection first: the fault hits steady state.
            let mut first = Ticket {
                number: 0,
                call: "first".into(),
            };
            let first_id = first.insert_with_id(&coll).await.unwrap();
            let fail_point = common::fail_point(
                &admin,
                doc! { "times": times },
                fault.data(&[command], &app),
            )
            .await;
            let sent_before = fault.chances(&unconfirmed, &[command]);
            let mut out = Outcome::default();
            out.ok.push(first_id);
            for i in 0..calls_after_first {
                let mut t = Ticket {
                    number: 0,
                    call: format!("call-{i}"),
                };
                match t.insert_with_id(&coll).await {
                    Ok(id) => {
                        assert_eq!(t.number, id);
                        out.ok.push(id);
                    }
                    Err(e) => out.errors.push(support::kind(&e)),
                }
            }
            out.fired = fail_point.off().await;
            let sent = fault.chances(&unconfirmed, &[command]) - sent_before;
            assert!(sent > times, "{label}: only {sent} commands sent");
            assert_fired_times(&label, out.fired, times);
            let (stored, stored_after_error, lost) =
                check(&label, &db, "ticket", "tickets", &out).await;
            let calls = calls_after_first as i64 + 1;
            match (command, fault) {
                ("insert", _) => {
                    // One number per call, whatever happened to the insert.
                    assert_eq!(
                        common::counter(&db, "ticket").await.unwrap_or(0),
                        calls,
                        "{label}"
                    );
                    if times < 8 {
                        assert!(out.errors.is_empty(), "{label}: {:?}", out.errors);
                    }
                    if fault.applies_the_write() {
                        assert!(out.errors.is_empty(), "{label}: {:?}", out.errors);
                        assert_eq!(stored, calls as usize, "{label}");
                    }
                }
                (_, f) if !f.applies_the_write() => {
                    // The counter update never ran when it failed: no number lost.
                    assert_eq!(lost, 0, "{label}");
                    if times == 1 {
                        assert!(out.errors.is_empty(), "{label}: {:?}", out.errors);
                    }
                }
                _ => {
                    // Applied but unconfirmed: the number is skipped, never reissued.
                    assert_eq!(lost, unconfirmed.of("ticket"), "{label}");
                    assert_eq!(lost, out.errors.len() as i64, "{label}");
                }
            }
            assert_eq!(stored_after_error, 0, "{label}");
            println!(
                "faults: {label} ok={} errors={} fired={}/{times} sent={sent} stored={stored} lost={lost} kinds={}",
                out.ok.len(),
                out.errors.len(),
                out.fired,
                support::tally(&out.errors)
            );
            total_ok += out.ok.len() as i64;
            total_errors += out.errors.len() as i64;
            total_fired += out.fired;
            total_lost += lost;
        }
    }
    [total_ok, total_fired, total_errors, total_lost]
}

/// Tasks calling each model at once, `per_task` calls each.
const TASKS: usize = 4;

/// What the random faults of one kind did, summed over the models.
#[derive(Default)]
struct RandomTotals {
    ok: usize,
    fired: i64,
    errors: usize,
    lost: i64,
    bound: i64,
    /// Gapless groups: acknowledged, refused (a repeated code), errors, faults fired.
    gapless: (usize, usize, usize, i64),
}

/// `{activationProbability: 0.1}` on both commands at once, for each fault, with concurrent
/// callers of three models at the same time: `_id` as ID, another field as ID, and a batch
/// cache (`batch = 25`). The faults run at once, each on a server of its own (the fail point
/// is one per server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_at_random() {
    let per_task = common::pick(8, 100);
    let [a, b, c] = Fault::ALL;
    let (a, b, c) = tokio::join!(
        random_faults(a, per_task),
        random_faults(b, per_task),
        random_faults(c, per_task)
    );
    let mut total = RandomTotals::default();
    for t in [a, b, c] {
        total.ok += t.ok;
        total.fired += t.fired;
        total.errors += t.errors;
        total.lost += t.lost;
        total.bound += t.bound;
        total.gapless.0 += t.gapless.0;
        total.gapless.1 += t.gapless.1;
        total.gapless.2 += t.gapless.2;
        total.gapless.3 += t.gapless.3;
    }
    println!(
        "reliability: faults-random ids={} duplicates=0 lost={} lost_bound={} faults={} errors={}",
        total.ok, total.lost, total.bound, total.fired, total.errors
    );
    println!(
        "reliability: faults-gapless ids={} duplicates=0 gaps=0 refused={} faults={} errors={}",
        total.gapless.0, total.gapless.1, total.gapless.3, total.gapless.2
    );
}

/// The random faults of one kind, on a server of their own: the three models at once, then
/// gapless groups.
async fn random_faults(fault: Fault, per_task: usize) -> RandomTotals {
    let server = tokio::task::spawn_blocking(|| TestServer::start(ServerOptions::default()))
        .await
        .unwrap()
        .expect("a server for the random faults starts");
    let admin = mongodb::Client::with_uri_str(server.uri())
        .await
        .unwrap()
        .database("admin");
    let mut total = RandomTotals::default();
    let name = unique_db_name("faults_random");
    let app = format!("app-{name}");
    let (client, unconfirmed) = app_client(server.uri(), &app).await;
    let db = client.database(&name);
    let fail_point = common::fail_point(
        &admin,
        doc! { "activationProbability": 0.1 },
        fault.data(&["findAndModify", "insert"], &app),
    )
    .await;
    let sent_before = fault.chances(&unconfirmed, &["findAndModify", "insert"]);
    let started = std::time::Instant::now();
    let orders = db.collection::<Order>("orders");
    let tickets = db.collection::<Ticket>("tickets");
    let cached = db.collection::<CachedTicket>("cached_tickets");
    let (o, t, c) = tokio::join!(
        support::concurrent(TASKS, Until::Calls(per_task), move |call| {
            let coll = orders.clone();
            async move { Order { id: 0, call }.insert_with_id(&coll).await }
        }),
        support::concurrent(TASKS, Until::Calls(per_task), move |call| {
            let coll = tickets.clone();
            async move { Ticket { number: 0, call }.insert_with_id(&coll).await }
        }),
        support::concurrent(TASKS, Until::Calls(per_task), move |call| {
            let coll = cached.clone();
            async move { CachedTicket { number: 0, call }.insert_with_id(&coll).await }
        }),
    );
    let fired = fail_point.off().await;
    let sent = fault.chances(&unconfirmed, &["findAndModify", "insert"]) - sent_before;
    assert_fired_share(&format!("{fault:?}/p=0.1"), fired, sent, 0.1);
    let elapsed = started.elapsed();
    let mut lines = Vec::new();
    for ((counter_name, coll), calls) in [
        ("order", "orders"),
        ("ticket", "tickets"),
        ("ticket25", "cached_tickets"),
    ]
    .into_iter()
    .zip([o, t, c])
    {
        let (ok, errors) = support::outcomes(&calls);
        let out = Outcome {
            ok,
            errors,
            fired: 0,
        };
        let label = format!("{counter_name}/{fault:?}/p=0.1");
        let (stored, stored_after_error, lost) = check(&label, &db, counter_name, coll, &out).await;
        assert_eq!(stored_after_error, 0, "{label}");
        assert_eq!(out.ok.len() + out.errors.len(), TASKS * per_task, "{label}");
        // Numbers are lost only by counter updates whose outcome was not confirmed (each
        // may have consumed the values it reserved: a range, or one per caller waiting
        // for it), and with a cache by the values it still holds at the end (current and
        // prefetched ranges) or dropped.
        let batch = if counter_name == "ticket25" { 25 } else { 1 };
        let bound = unconfirmed.of(counter_name)
            + common::held_by_cache(&db, counter_name, batch).await as i64;
        assert!(
            lost <= bound,
            "{label}: lost {lost}, bound {bound}, errors {}",
            out.errors.len()
        );
        lines.push(format!(
            "{counter_name}: ok={} errors={} stored={stored} lost={lost} (bound {bound}) kinds={}",
            out.ok.len(),
            out.errors.len(),
            support::tally(&out.errors)
        ));
        total.ok += out.ok.len();
        total.errors += out.errors.len();
        total.lost += lost;
        total.bound += bound;
    }
    let (line, ok, errors, fired_gapless) =
        gapless_under(fault, server.uri(), &admin, per_task).await;
    lines.push(line);
    total.gapless = (
        ok,
        errors.iter().filter(|e| *e == "duplicate-code").count(),
        errors.len(),
        fired_gapless,
    );
    total.fired = fired;
    println!(
        "faults: {fault:?} p=0.1 fired={} sent={sent} ms={} | {}",
        fired + fired_gapless,
        elapsed.as_millis(),
        lines.join(" | ")
    );
    drop((admin, client));
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
    total
}

/// Gapless inserts committed in groups under `fault` at `{activationProbability: 0.2}` on
/// `findAndModify`, `insert` and `commitTransaction`, with one call in eight repeating a code
/// (a unique index) from 16 tasks: every `Ok` stored once, the stored numbers exactly 1..=N,
/// only typed errors. Returns the summary, the `Ok` count, the errors' kinds and the faults
/// fired.
///
/// Groups send few commands (about 80 here), so the probability is twice the other runs': at
/// 0.1 the point would miss all of them about once in 2,500 runs, at 0.2 once in millions.
async fn gapless_under(
    fault: Fault,
    uri: &str,
    admin: &Database,
    per_task: usize,
) -> (String, usize, Vec<String>, i64) {
    const GROUP_TASKS: usize = 16;
    let name = unique_db_name("faults_gapless");
    let app = format!("app-{name}");
    let (client, wire) = app_client(uri, &app).await;
    let coll = client.database(&name).collection::<Receipt>("receipts");
    common::unique_index(&coll, "code").await;
    let commands = ["findAndModify", "insert", "commitTransaction"];
    const PROBABILITY: f64 = 0.2;
    let fail_point = common::fail_point(
        admin,
        doc! { "activationProbability": PROBABILITY },
        fault.data(&commands, &app),
    )
    .await;
    let sent_before = fault.chances(&wire, &commands);
    let tasks: Vec<_> = (0..GROUP_TASKS)
        .map(|task| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut out = Vec::new();
                for i in 0..per_task as u64 {
                    let (mut receipt, repeats) = models::receipt(&task.to_string(), i);
                    out.push((repeats, receipt.insert_with_id(&coll).await));
                }
                out
            })
        })
        .collect();
    let (mut ok, mut errors) = (Vec::new(), Vec::new());
    for t in tasks {
        for (repeated, outcome) in t.await.unwrap() {
            match outcome {
                Ok(id) => ok.push(id),
                Err(mongo_sequence::Error::DuplicateKey { .. }) if repeated => {
                    errors.push("duplicate-code".to_owned())
                }
                Err(e) => errors.push(support::kind(&e)),
            }
        }
    }
    let fired = fail_point.off().await;
    let label = format!("receipt/{fault:?}/p={PROBABILITY}");
    let sent = fault.chances(&wire, &commands) - sent_before;
    assert_fired_share(&label, fired, sent, PROBABILITY);
    let stored = Stored::read(&client.database(&name), "receipts", "_id").await;
    let dense = Promise {
        dense: true,
        ..Promise::default()
    };
    checker::judge(&ok, &stored, dense).assert_clean(&label);
    let ok_set: HashSet<i64> = ok.iter().copied().collect();
    assert_eq!(ok_set.len(), ok.len(), "{label}: an ID was returned twice");
    for e in &errors {
        assert!(
            e == "duplicate-code" || e.starts_with("mongo:") || e.starts_with("other:gapless"),
            "{label}: untyped or unexpected error {e}"
        );
    }
    let line = format!(
        "receipt (gapless): ok={} errors={} stored={} fired={fired} sent={sent} kinds={}",
        ok.len(),
        errors.len(),
        stored.documents(),
        support::tally(&errors)
    );
    (line, ok.len(), errors, fired)
}

/// Gapless documents whose transactions give up soon.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "slip", gapless, transaction_timeout = "300ms")]
struct Slip {
    #[serde(rename = "_id")]
    id: i64,
    note: String,
}

/// Every `commitTransaction` commits and then answers with a write concern error, until past
/// the transaction timeout: the commit's outcome stays unknown. The documents are read back,
/// so a lone insert and each insert of a group return their numbers, stored once each and
/// exactly `1..=N`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_commits_of_unknown_outcome_are_read_back() {
    // A server of its own: the fail point is one per server.
    let server = tokio::task::spawn_blocking(|| TestServer::start(ServerOptions::default()))
        .await
        .unwrap()
        .expect("a server for the unknown commits starts");
    let admin = mongodb::Client::with_uri_str(server.uri())
        .await
        .unwrap()
        .database("admin");
    let name = unique_db_name("faults_unknown_commit");
    let app = format!("app-{name}");
    let (client, wire) = app_client(server.uri(), &app).await;
    let coll = client.database(&name).collection::<Slip>("slips");
    let slip = |note: &str| Slip {
        id: 0,
        note: note.into(),
    };
    // The counter and the collection exist before the fault.
    let mut returned = vec![slip("first").insert_with_id(&coll).await.unwrap()];
    let fail_point = common::fail_point(
        &admin,
        "alwaysOn",
        Fault::WriteConcern64.data(&["commitTransaction"], &app),
    )
    .await;
    let commits_before = wire.sent(&["commitTransaction"]);
    let mut lone = slip("lone");
    let lone_id = lone.insert_with_id(&coll).await;
    let group: Vec<_> = (0..8)
        .map(|i| {
            let coll = coll.clone();
            tokio::spawn(async move { slip(&format!("group-{i}")).insert_with_id(&coll).await })
        })
        .collect();
    let mut outcomes = vec![lone_id];
    for task in group {
        outcomes.push(task.await.unwrap());
    }
    let fired = fail_point.off().await;
    // Every commit sent while the point was on got the fault: the lone insert's and at least
    // one group's, each sent again until the transaction timeout.
    let commits = wire.sent(&["commitTransaction"]) - commits_before;
    assert_eq!(
        fired, commits,
        "every commit sent got the write concern error"
    );
    assert!(
        fired >= 2,
        "the lone insert's and a group's commits failed: {fired}"
    );
    for outcome in outcomes {
        returned.push(outcome.expect("a commit that took effect returns its number"));
    }
    let stored = Stored::read(&client.database(&name), "slips", "_id").await;
    let dense = Promise {
        dense: true,
        ..Promise::default()
    };
    checker::judge(&returned, &stored, dense).assert_clean("faults-unknown-commit");
    assert_eq!(
        (returned.len(), stored.documents()),
        (10, 10),
        "each returned number stored once"
    );
    println!(
        "reliability: faults-unknown-commit ids={} fired={fired} commits={commits}",
        stored.documents()
    );
}

/// `unique = "proxy"` under faults: `{times: n}` on `insert` (the claim's and the document's:
/// the fault hits whichever comes first, and with `n` = 2 the other one of the retry too) and
/// on `commitTransaction`, for each fault, with inserts from several tasks at once (alone and
/// committed in groups). Whatever happens: no number stored twice, every
/// document has its claim and every claim its document, and every acknowledged insert is
/// stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_claims_stay_whole_under_faults() {
    let per_task: usize = common::pick(2, 5);
    let calls = TASKS * per_task;
    let admin = common::client().await.database("admin");
    let (mut total_ok, mut total_fired, mut total_errors) = (0, 0, 0);
    for command in ["insert", "commitTransaction"] {
        for fault in Fault::ALL {
            for times in [1_i64, 2] {
                let label = format!("proxy/{command}/{fault:?}/times={times}");
                let name = unique_db_name("faults_proxy");
                let app = format!("app-{name}");
                let (client, wire) = app_client(TestServer::shared_or_panic().uri(), &app).await;
                let db = client.database(&name);
                let coll = db.collection::<Claimed>("claimed");
                // The collections and the counter exist before the fault: it hits steady state.
                let mut first = Claimed {
                    oid: None,
                    number: None,
                    call: "first".into(),
                };
                let mut ok = vec![first.insert_with_id(&coll).await.unwrap()];
                let fail_point = common::fail_point(
                    &admin,
                    doc! { "times": times },
                    fault.data(&[command], &app),
                )
                .await;
                let sent_before = fault.chances(&wire, &[command]);
                // From `TASKS` tasks at once, so that inserts commit in groups too.
                let inserts = coll.clone();
                let records = support::concurrent(TASKS, Until::Calls(per_task), move |call| {
                    let coll = inserts.clone();
                    async move {
                        let mut claimed = Claimed {
                            oid: None,
                            number: None,
                            call,
                        };
                        let id = claimed.insert_with_id(&coll).await?;
                        assert_eq!(claimed.number, Some(id));
                        Ok(id)
                    }
                })
                .await;
                let (acknowledged, errors) = support::outcomes(&records);
                ok.extend(acknowledged);
                let fired = fail_point.off().await;
                let sent = fault.chances(&wire, &[command]) - sent_before;
                assert!(sent > times, "{label}: only {sent} commands sent");
                assert_fired_times(&label, fired, times);
                let docs = common::claims_match(
                    &label,
                    &db.collection("claimed"),
                    &db.collection("claimed.claims.number"),
                )
                .await;
                let stored = Stored::read(&db, "claimed", "number").await;
                checker::judge(&ok, &stored, Promise::default()).assert_clean(&label);
                assert_eq!(stored.documents(), docs.len(), "{label}");
                assert_eq!(ok.len() + errors.len(), calls + 1, "{label}");
                println!(
                    "faults: {label} ok={} errors={} fired={fired}/{times} sent={sent} stored={} kinds={}",
                    ok.len(),
                    errors.len(),
                    docs.len(),
                    support::tally(&errors)
                );
                total_ok += ok.len();
                total_errors += errors.len();
                total_fired += fired;
            }
        }
    }
    println!(
        "reliability: proxy-faults ids={total_ok} duplicates=0 unclaimed=0 orphans=0 lost=0 faults={total_fired} errors={total_errors}"
    );
}
