//! Gapless transactions that meet their counter held by another transaction: the waits leave
//! the holder a connection, the inserts queued meanwhile join the round, and the attempts
//! alternate two sessions.

use crate::common;

use std::collections::BTreeSet;

use mongo_sequence::SequentialId;
use mongodb::bson::doc;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

use super::{hold_counter, invoice, recording_client, Invoice};

/// A gapless model of its own for the pool test below (transactions give up after the default
/// 30 s).
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "pool_ticket", gapless)]
struct PoolTicket {
    #[serde(rename = "_id")]
    id: Option<i64>,
    code: String,
}

/// With a connection pool of two and 64 gapless upserts of one counter at once (each in a
/// transaction of its own, most of them meeting the counter held and waiting for its holder),
/// the waits leave the holder a connection to commit with: every upsert gets its number, and
/// the numbers are 1..=64. (When each waiting transaction sent its own wait to the server, the
/// waits took both connections and gave up at the transaction timeout.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_transactions_leave_the_holder_a_connection() {
    let name = unique_db_name("gapless_small_pool");
    let app = format!("small-pool-{name}");
    let uri = TestServer::shared_or_panic().uri();
    let client = common::client_with_app(uri, &app, |o| o.max_pool_size = Some(2)).await;
    let coll = client.database(&name).collection::<PoolTicket>("tickets");
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let code = format!("t{i}");
                let mut ticket = PoolTicket {
                    id: None,
                    code: code.clone(),
                };
                [ticket
                    .upsert_with_id(&coll, doc! { "code": code })
                    .await
                    .unwrap()]
            })
        })
        .collect();
    let ids = common::distinct_ids(tasks).await;
    assert_eq!(ids, (1..=64).collect());
}

/// A group round whose counter update meets the counter held by another transaction takes in
/// the inserts that queued meanwhile: they commit in its transaction, numbered after its own.
///
/// The `failCommand` fail point holds the first two counter updates of this test's client for
/// 300 ms each before the server runs them: the insert that leads the idle group (A), then the
/// round of the insert that queued behind it (B). While the round's update is held, another
/// client's transaction takes the counter and a third insert (C) queues; the round's update
/// then meets that transaction, and C joins the round before it starts again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_queued_while_a_round_meets_the_counter_held_join_it() {
    let name = unique_db_name("gapless_join");
    let app = format!("app-{name}");
    let (client, events) = recording_client(&app).await;
    // The commands named `command` this test's client sent on the collection `target` (on any,
    // if empty).
    let sent = |command: &str, target: &str| {
        let events = events.lock().unwrap();
        events
            .iter()
            .filter(|e| match e {
                mongodb::event::command::CommandEvent::Started(s) => {
                    s.command_name == command
                        && (target.is_empty() || s.command.get_str(command) == Ok(target))
                }
                _ => false,
            })
            .count()
    };
    let db = client.database(&name);
    let coll = db.collection::<Invoice>("invoices");
    invoice("warm-up").insert_with_id(&coll).await.unwrap();
    let counted = || {
        [
            sent("findAndModify", "counters"),
            sent("insert", "invoices"),
            sent("commitTransaction", ""),
        ]
    };
    let before = counted();
    let waits_before = sent("update", "counters");

    let admin = common::client().await.database("admin");
    let fail_point = common::fail_point(
        &admin,
        doc! { "times": 2 },
        doc! {
            "failCommands": ["findAndModify"],
            "blockConnection": true,
            "blockTimeMS": 300,
            "appName": &app,
        },
    )
    .await;
    let insert = |code: &str| {
        let coll = coll.clone();
        let mut doc = invoice(code);
        tokio::spawn(async move { doc.insert_with_id(&coll).await })
    };
    // The counter updates this test's client has sent since the fail point went on.
    let updates_sent = || sent("findAndModify", "counters") - before[0];
    let until = |n: usize| async move {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while updates_sent() < n {
            assert!(
                std::time::Instant::now() < deadline,
                "no counter update {n}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    };
    let a = insert("a");
    until(1).await;
    let b = insert("b");
    until(2).await;
    // The round's update is held on the server: another transaction takes the counter.
    let mut holder = hold_counter(&name).await;
    let c = insert("c");
    // The round's held update met the holder, and the round waits for it on the server (an
    // `update` of the counter, outside any transaction): then the holder goes, and the round
    // starts again with C, which queued while the update was held.
    let limit = std::time::Duration::from_secs(10);
    let waiting = || sent("update", "counters") > waits_before;
    assert!(
        common::wait_until(limit, waiting).await,
        "the round waits for the holder"
    );
    holder.abort_transaction().await.unwrap();
    let (a, b, c) = (
        a.await.unwrap().unwrap(),
        b.await.unwrap().unwrap(),
        c.await.unwrap().unwrap(),
    );
    assert_eq!(fail_point.off().await, 2, "both counter updates were held");
    assert_eq!(
        (a, b, c),
        (2, 3, 4),
        "numbered in the order they were called"
    );
    let after = counted();
    assert_eq!(
        (after[1] - before[1], after[2] - before[2]),
        (2, 2),
        "A alone, then B and C in one round: one insert and one commit each"
    );
}

/// A transaction whose counter update meets another transaction's starts again at once: the
/// abort of each attempt goes in the background while the next attempt runs in a second
/// session. The attempts alternate between two sessions (not one new session per attempt),
/// every attempt that met the holder is aborted, and the insert takes the next number once the
/// holder is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attempts_that_meet_the_counter_held_alternate_two_sessions() {
    use mongodb::event::command::CommandEvent;

    /// One command event: whether it started (or ended), its name, its request, and for a
    /// command started in a transaction, the session.
    type Event = (bool, String, i32, Option<mongodb::bson::Bson>);
    let name = unique_db_name("gapless_spare");
    let (client, recorded) = recording_client(&name).await;
    let coll = client.database(&name).collection::<Invoice>("invoices");
    invoice("warm-up").insert_with_id(&coll).await.unwrap();
    recorded.lock().unwrap().clear();

    // Each abort of this client is held on the server for 300 ms: an abort sent in the
    // background is then in flight while a later attempt runs, however late the machine runs
    // the task that sends it; an abort waited for before the next attempt never is.
    let admin = common::client().await.database("admin");
    let slow_aborts = common::fail_point(
        &admin,
        "alwaysOn",
        doc! {
            "failCommands": ["abortTransaction"],
            "blockConnection": true,
            "blockTimeMS": 300,
            "appName": &name,
        },
    )
    .await;
    let mut holder = hold_counter(&name).await;
    let mut doc = invoice("a");
    let insert = tokio::spawn(async move { doc.insert_with_id(&coll).await });
    // The holder goes once three attempts met it (each one aborted).
    let met = || {
        let recorded = recorded.lock().unwrap();
        let started = |name: &str| {
            (recorded.iter())
                .filter(|e| matches!(e, CommandEvent::Started(s) if s.command_name == name))
                .count()
        };
        started("findAndModify") >= 3 && started("abortTransaction") >= 2
    };
    let limit = std::time::Duration::from_secs(10);
    assert!(
        common::wait_until(limit, met).await,
        "three attempts met the holder"
    );
    holder.abort_transaction().await.unwrap();
    assert_eq!(insert.await.unwrap().unwrap(), 2);
    slow_aborts.fired().await;

    let events: Vec<Event> = recorded
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            CommandEvent::Started(s) => {
                let in_transaction = s.command.contains_key("txnNumber");
                let session = s.command.get_document("lsid").ok().map(|l| l.get("id"));
                let session = session.flatten().filter(|_| in_transaction).cloned();
                Some((true, s.command_name.clone(), s.request_id, session))
            }
            CommandEvent::Succeeded(s) => Some((false, s.command_name.clone(), s.request_id, None)),
            CommandEvent::Failed(f) => Some((false, f.command_name.clone(), f.request_id, None)),
            _ => None,
        })
        .collect();
    let started = |command: &'static str| {
        events
            .iter()
            .enumerate()
            .filter(move |(_, (start, c, _, _))| *start && c == command)
    };
    let updates: Vec<_> = started("findAndModify").collect();
    let sessions: BTreeSet<String> = updates
        .iter()
        .filter_map(|(_, (_, _, _, s))| s.as_ref().map(|s| s.to_string()))
        .collect();
    assert!(updates.len() >= 3, "attempts met the holder: {updates:?}");
    assert_eq!(
        sessions.len(),
        2,
        "the attempts alternate between two sessions"
    );
    assert_eq!(
        started("abortTransaction").count(),
        updates.len() - 1,
        "every attempt but the one that committed is aborted"
    );
    // An abort in flight while another attempt's counter update was: the abort went in the
    // background (the update of the attempt it aborts ended before it started).
    let ended = |request: i32| {
        (events.iter())
            .position(|(start, _, r, _)| !start && *r == request)
            .expect("every command ends")
    };
    let overlapped = started("abortTransaction").any(|(at, (_, _, abort, _))| {
        let abort_ended = ended(*abort);
        (updates.iter()).any(|(u, (_, _, update, _))| *u < abort_ended && at < ended(*update))
    });
    let order: Vec<String> = (events.iter())
        .map(|(start, name, request, _)| match start {
            true => format!("{name}#{request}"),
            false => format!("/#{request}"),
        })
        .collect();
    assert!(
        overlapped,
        "an abort was in flight while another attempt's counter update was: {order:?}"
    );
}
