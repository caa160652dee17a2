//! What the reliability suite (`reliability_*.rs`) shares: concurrent callers and the checks
//! of their calls, error classification, the count of unconfirmed counter updates, and the
//! 3-node replica sets with their elections (fail points, counter reads and the shared models
//! are in `common`).

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use crate::checker::{self, Promise, Stored};
use crate::common;

use mongo_sequence::Error;
use mongodb::bson::{doc, Bson};
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::WriteConcern;
use mongodb::Client;
use sequence_testkit::{Network, ServerOptions, TestServer};

/// A short name for the kind of an error, for summaries and assertions.
pub fn kind(e: &Error) -> String {
    match e {
        Error::Mongo(m) => match &*m.kind {
            mongodb::error::ErrorKind::Io(_) => "mongo:io".into(),
            mongodb::error::ErrorKind::ServerSelection { .. } => "mongo:server-selection".into(),
            mongodb::error::ErrorKind::ConnectionPoolCleared { .. } => "mongo:pool-cleared".into(),
            mongodb::error::ErrorKind::Command(c) => format!("mongo:command:{}", c.code),
            mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteConcernError(
                w,
            )) => format!("mongo:write-concern:{}", w.code),
            mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(w)) => {
                format!("mongo:write:{}", w.code)
            }
            _ => "mongo:other".into(),
        },
        Error::DuplicateKey { .. } => "duplicate-key".into(),
        Error::Exhausted { .. } => "exhausted".into(),
        Error::CorruptCounter { .. } => "corrupt-counter".into(),
        Error::IdOutOfRange { .. } => "id-out-of-range".into(),
        other => format!("other:{other}"),
    }
}

/// Counts per kind, for summary lines: `io=3,command:91=2`.
pub fn tally(kinds: &[String]) -> String {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for k in kinds {
        *counts.entry(k.as_str()).or_default() += 1;
    }
    if counts.is_empty() {
        return "none".into();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k}={n}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Counter updates whose outcome the client did not see confirmed (failed, or answered with a
/// write concern error), per counter: each may have consumed the values it reserved without
/// handing them out. Counts those values, every command the client sent, by name (each one a
/// chance for a fail point that fails it before it runs to fire), and the commands answered
/// `ok` (each one a chance for a fail point that adds a write concern error: the server
/// evaluates that point only after the command ran, so not for a command that failed, such as
/// a counter update that met a write conflict).
#[derive(Clone, Default)]
pub struct Unconfirmed {
    started: Arc<StdMutex<HashMap<i32, (String, i64)>>>,
    counts: Arc<StdMutex<HashMap<String, i64>>>,
    sent: Arc<StdMutex<HashMap<String, i64>>>,
    answered: Arc<StdMutex<HashMap<String, i64>>>,
}

/// How many values a counter update reserves: the `n` of its `{ $add: [v, n] }`.
fn reserved_by(update: &Bson) -> Option<i64> {
    match update {
        Bson::Document(d) => d.iter().find_map(|(k, v)| match (k.as_str(), v) {
            ("$add", Bson::Array(a)) => a.get(1).and_then(Bson::as_i64),
            _ => reserved_by(v),
        }),
        Bson::Array(a) => a.iter().find_map(reserved_by),
        _ => None,
    }
}

impl Unconfirmed {
    pub fn of(&self, counter: &str) -> i64 {
        self.counts
            .lock()
            .unwrap()
            .get(counter)
            .copied()
            .unwrap_or(0)
    }

    /// How many of `commands` the client sent (retries included).
    pub fn sent(&self, commands: &[&str]) -> i64 {
        let sent = self.sent.lock().unwrap();
        commands.iter().filter_map(|c| sent.get(*c)).sum()
    }

    /// How many of `commands` the server answered `ok` (retries included).
    pub fn answered(&self, commands: &[&str]) -> i64 {
        let answered = self.answered.lock().unwrap();
        commands.iter().filter_map(|c| answered.get(*c)).sum()
    }

    pub fn observe(&self, event: CommandEvent) {
        if let CommandEvent::Started(e) = &event {
            *self
                .sent
                .lock()
                .unwrap()
                .entry(e.command_name.clone())
                .or_default() += 1;
        }
        if let CommandEvent::Succeeded(e) = &event {
            *self
                .answered
                .lock()
                .unwrap()
                .entry(e.command_name.clone())
                .or_default() += 1;
        }
        let unconfirmed = match event {
            CommandEvent::Started(e) if e.command_name == "findAndModify" => {
                let counter = e
                    .command
                    .get_document("query")
                    .ok()
                    .and_then(|q| q.get_str("_id").ok())
                    .unwrap_or_default()
                    .to_owned();
                let n = e.command.get("update").and_then(reserved_by).unwrap_or(1);
                self.started
                    .lock()
                    .unwrap()
                    .insert(e.request_id, (counter, n));
                return;
            }
            CommandEvent::Succeeded(e) if e.command_name == "findAndModify" => {
                let counter = self.started.lock().unwrap().remove(&e.request_id);
                counter.filter(|_| e.reply.contains_key("writeConcernError"))
            }
            CommandEvent::Failed(e) if e.command_name == "findAndModify" => {
                self.started.lock().unwrap().remove(&e.request_id)
            }
            _ => None,
        };
        if let Some((counter, n)) = unconfirmed {
            *self.counts.lock().unwrap().entry(counter).or_default() += n;
        }
    }
}

/// A 3-node replica set with an election timeout of 2 s, on loopback or on `network`.
pub async fn three_nodes(network: Option<Arc<Network>>) -> Arc<TestServer> {
    three_nodes_with(network, ServerOptions::default()).await
}

/// [`three_nodes`], its nodes started with `options` otherwise.
pub async fn three_nodes_with(
    network: Option<Arc<Network>>,
    options: ServerOptions,
) -> Arc<TestServer> {
    let server = tokio::task::spawn_blocking(move || {
        let options = options.nodes(3).election_timeout(Duration::from_secs(2));
        TestServer::start(match network {
            Some(network) => options.network(network),
            None => options,
        })
    })
    .await
    .unwrap()
    .expect("a 3-node replica set starts");
    Arc::new(server)
}

/// The primary (waiting up to 30 s for one) and its election term.
pub async fn primary_and_term(server: &Arc<TestServer>) -> (usize, i64) {
    let s = server.clone();
    let primary = tokio::task::spawn_blocking(move || s.wait_for_primary(Duration::from_secs(30)))
        .await
        .unwrap()
        .expect("a primary");
    let direct = mongodb::Client::with_uri_str(server.nodes()[primary].direct_uri())
        .await
        .unwrap();
    let status = direct
        .database("admin")
        .run_command(doc! { "replSetGetStatus": 1 })
        .await
        .expect("replSetGetStatus");
    (primary, status.get_i64("term").expect("a term"))
}

/// Whether node `i` says it is a writable primary (`hello`, through a direct connection);
/// `false` when it does not answer within a second (a killed node).
pub async fn claims_primary(server: &TestServer, i: usize) -> bool {
    let uri = format!(
        "{}&serverSelectionTimeoutMS=1000&connectTimeoutMS=1000",
        server.nodes()[i].direct_uri()
    );
    let Ok(direct) = mongodb::Client::with_uri_str(uri).await else {
        return false;
    };
    match direct
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .await
    {
        Ok(hello) => hello.get_bool("isWritablePrimary").unwrap_or(false),
        Err(_) => false,
    }
}

/// Waits up to 30 s until node `old` (stepped down, cut off from the majority or killed) no
/// longer says it is primary and another node is, elected in a term after `old_term`; returns
/// it and its term. Fails the test otherwise: the fault did not take effect.
pub async fn elected_instead(server: &Arc<TestServer>, old: usize, old_term: i64) -> (usize, i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while claims_primary(server, old).await {
        assert!(
            Instant::now() < deadline,
            "node {old} (term {old_term}) is still primary"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    loop {
        let (primary, term) = primary_and_term(server).await;
        if primary != old && term > old_term {
            return (primary, term);
        }
        assert!(
            Instant::now() < deadline,
            "no other node was elected: node {primary} is primary in term {term} (before: node {old}, term {old_term})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// When each task of `concurrent` stops.
#[derive(Clone)]
pub enum Until {
    /// After this many calls.
    Calls(usize),
    /// After a call that failed with an error of this kind (see `kind`); other errors do not
    /// stop it.
    Failed(&'static str),
    /// Once the flag is set (read before each call); a failed call is followed by a pause of
    /// 100 ms.
    Stopped(Arc<AtomicBool>),
}

/// One call made by `concurrent`: its label, its ID or its error's kind, and when it ended.
#[derive(Clone, Debug)]
pub struct Record {
    pub call: String,
    pub outcome: Result<i64, String>,
    pub at: Instant,
}

/// `tasks` tasks call `insert`, each with labels of its own (`task-i`, `i` from 0), until
/// `until`; returns every call, task by task and in order within a task.
pub async fn concurrent<F, Fut>(tasks: usize, until: Until, insert: F) -> Vec<Record>
where
    F: Fn(String) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = mongo_sequence::Result<i64>> + Send,
{
    let tasks: Vec<_> = (0..tasks)
        .map(|task| {
            let (insert, until) = (insert.clone(), until.clone());
            tokio::spawn(async move {
                let mut calls = Vec::new();
                for i in 0.. {
                    match &until {
                        Until::Calls(n) if i == *n => break,
                        Until::Stopped(stop) if stop.load(Ordering::SeqCst) => break,
                        _ => {}
                    }
                    let call = format!("{task}-{i}");
                    let outcome = insert(call.clone()).await.map_err(|e| kind(&e));
                    let at = Instant::now();
                    let failed = outcome.as_ref().err().cloned();
                    calls.push(Record { call, outcome, at });
                    match (&until, failed) {
                        (Until::Failed(stop), Some(e)) if e == *stop => break,
                        (Until::Stopped(_), Some(_)) => {
                            tokio::time::sleep(Duration::from_millis(100)).await
                        }
                        _ => {}
                    }
                }
                calls
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all
}

/// The IDs `calls` returned and the kinds of their errors, in order.
pub fn outcomes(calls: &[Record]) -> (Vec<i64>, Vec<String>) {
    let (mut ok, mut errors) = (Vec::new(), Vec::new());
    for c in calls {
        match &c.outcome {
            Ok(n) => ok.push(*n),
            Err(e) => errors.push(e.clone()),
        }
    }
    (ok, errors)
}

/// The result of one call of a workload: when it ended (ms from the start) and its ID or
/// error kind.
pub type Call = (u64, Result<i64, String>);

/// `tasks` tasks call `insert` until `stop` (`concurrent`, a failed call followed by a pause),
/// each call bounded by 30 s; every failure must be a typed error of the server or the driver.
pub async fn workload<F, Fut>(
    tasks: usize,
    stop: Arc<AtomicBool>,
    start: Instant,
    insert: F,
) -> Vec<Call>
where
    F: Fn(String) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = mongo_sequence::Result<i64>> + Send,
{
    concurrent(tasks, Until::Stopped(stop), move |call| {
        let call = tokio::time::timeout(Duration::from_secs(30), insert(call));
        async move {
            let outcome = call
                .await
                .expect("a call returns within 30 s, whatever the fault");
            if let Err(e) = &outcome {
                assert!(
                    matches!(e, Error::Mongo(_)),
                    "a typed error of the server or the driver: {e:?}"
                );
            }
            outcome
        }
    })
    .await
    .into_iter()
    .map(|r| (r.at.duration_since(start).as_millis() as u64, r.outcome))
    .collect()
}

/// The calls of a workload checked against the numbers `stored`, by the checker (no number
/// stored twice, every acknowledged one stored), with no ID returned twice and some call
/// succeeded from `from_ms` on. Returns the acknowledged IDs, the errors' kinds and the calls
/// that succeeded from `from_ms`.
pub fn check_calls(
    label: &str,
    calls: &[Call],
    stored: &Stored,
    from_ms: u64,
) -> (Vec<i64>, Vec<String>, usize) {
    let ok: Vec<i64> = calls
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok().copied())
        .collect();
    let errors: Vec<String> = calls
        .iter()
        .filter_map(|(_, r)| r.as_ref().err().cloned())
        .collect();
    let unique: HashSet<i64> = ok.iter().copied().collect();
    assert_eq!(unique.len(), ok.len(), "{label}: an ID was returned twice");
    checker::judge(&ok, stored, Promise::default()).assert_clean(label);
    let after = calls
        .iter()
        .filter(|(at, r)| *at >= from_ms && r.is_ok())
        .count();
    assert!(after > 0, "{label}: no insert succeeded after the faults");
    (ok, errors, after)
}

/// A client of the workload `app`: short timeouts and polled checks, so that a cut-off call
/// fails in seconds;
/// counts its commands that failed on the wire and its unconfirmed counter updates.
pub async fn workload_client(uri: &str, app: &str) -> (Client, Unconfirmed, Arc<AtomicU64>) {
    let unconfirmed = Unconfirmed::default();
    let failed = Arc::new(AtomicU64::new(0));
    let (seen, failures) = (unconfirmed.clone(), failed.clone());
    let client = common::client_with_app(uri, app, |o| {
        o.server_selection_timeout = Some(Duration::from_secs(4));
        o.connect_timeout = Some(Duration::from_secs(2));
        o.heartbeat_freq = Some(Duration::from_millis(500));
        // Polled checks time out after the connect timeout, and a timed-out check interrupts
        // the calls in flight on that server (a streamed check would wait for its next reply).
        o.server_monitoring_mode = Some(mongodb::options::ServerMonitoringMode::Poll);
        o.write_concern = Some(WriteConcern::majority());
        o.command_event_handler = Some(EventHandler::callback(move |e| {
            let failure = match &e {
                CommandEvent::Failed(_) => true,
                CommandEvent::Succeeded(s) => s.reply.contains_key("writeConcernError"),
                _ => false,
            };
            if failure {
                failures.fetch_add(1, Ordering::SeqCst);
            }
            seen.observe(e);
        }));
    })
    .await;
    (client, unconfirmed, failed)
}

/// What the checker found for one model.
pub struct Checked {
    pub ok: usize,
    pub errors: usize,
    pub lost: i64,
    pub bound: i64,
    pub line: String,
}

/// No ID returned twice or stored twice, every acknowledged one stored, numbers lost within
/// the bound, and calls succeeded after the last heal.
#[allow(clippy::too_many_arguments)]
pub async fn check_model(
    label: &str,
    calls: &[Call],
    db: &mongodb::Database,
    coll: &str,
    field: &str,
    counter: &str,
    batch: i64,
    unconfirmed: &Unconfirmed,
    healed_at: u64,
) -> Checked {
    let stored = Stored::read(db, coll, field).await;
    let (ok, errors, after) = check_calls(label, calls, &stored, healed_at);
    let counter_value = common::counter(db, counter).await.unwrap_or(0);
    let lost = counter_value - stored.documents() as i64;
    // Each counter update whose outcome the client did not learn may have consumed what it
    // reserved; a cache holds or dropped the rest; an insert that failed skipped its number.
    // A gapless counter (`batch` 0 here) loses nothing.
    let bound = if batch == 0 {
        0
    } else {
        unconfirmed.of(counter)
            + common::held_by_cache(db, counter, batch as u64).await as i64
            + errors.len() as i64
    };
    let gaps = Promise {
        gaps_at_most: Some((counter_value, bound as u64)),
        dense: false,
    };
    checker::judge(&ok, &stored, gaps).assert_clean(label);
    let line = format!(
        "{label}: ok={} errors={} stored={} lost={lost} (bound {bound}) ok_after={after} kinds={}",
        ok.len(),
        errors.len(),
        stored.documents(),
        tally(&errors)
    );
    Checked {
        ok: ok.len(),
        errors: errors.len(),
        lost,
        bound,
        line,
    }
}
