//! Gapless numbering through transactions, and inserts that join the caller's transaction,
//! against real servers (a single-node replica set, and a standalone server).

use crate::common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mongo_sequence::{Error, SequentialId};
use mongodb::bson::doc;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", gapless)]
struct Invoice {
    #[serde(rename = "_id")]
    id: Option<i64>,
    /// Unique: a repeated code makes the insert fail on purpose.
    code: String,
}

fn invoice(code: impl Into<String>) -> Invoice {
    Invoice {
        id: None,
        code: code.into(),
    }
}

async fn unique_code_index<T: Send + Sync>(coll: &mongodb::Collection<T>) {
    common::unique_index(coll, "code").await;
}

async fn stored_ids(coll: &mongodb::Collection<Invoice>) -> Vec<i64> {
    let docs: Vec<Invoice> = common::all(coll).await;
    let mut ids: Vec<i64> = docs.iter().map(|d| d.id.unwrap()).collect();
    ids.sort_unstable();
    ids
}

/// A transaction of another client that holds the counter of `Invoice` in the database `db`
/// until it ends.
async fn hold_counter(db: &str) -> mongodb::ClientSession {
    let other = common::client().await;
    let mut holder = other.start_session().await.unwrap();
    holder.start_transaction().await.unwrap();
    other
        .database(db)
        .collection::<mongodb::bson::Document>("counters")
        .update_one(doc! { "_id": "invoice" }, doc! { "$set": { "held": true } })
        .session(&mut holder)
        .await
        .unwrap();
    holder
}

/// Every command event a client saw, in order.
type Recorded = Arc<std::sync::Mutex<Vec<mongodb::event::command::CommandEvent>>>;

/// A client of the shared server whose connections carry `app` as application name (for a
/// fail point of its own), and the command events it sees.
async fn recording_client(app: &str) -> (mongodb::Client, Recorded) {
    let events = Recorded::default();
    let seen = events.clone();
    let client = common::client_with_app(TestServer::shared_or_panic().uri(), app, |o| {
        o.command_event_handler = Some(mongodb::event::EventHandler::callback(move |e| {
            seen.lock().unwrap().push(e);
        }));
    })
    .await;
    (client, events)
}

const TASKS: u64 = 8;

/// 8 tasks × 60 gapless inserts (× 500 with `SOAK=1`); one in ten hits a unique index on
/// purpose, and the server drops the connection on some inserts. The stored IDs are exactly
/// 1..=N.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_inserts_leave_no_gap() {
    let per_task: u64 = common::pick(60, 500);
    let name = unique_db_name("gapless_faults");
    let app = format!("faults-{name}");
    let client = common::client_with_app(TestServer::shared_or_panic().uri(), &app, |_| {}).await;
    let db = client.database(&name);
    let coll = db.collection::<Invoice>("invoices");
    unique_code_index(&coll).await;

    // Connection drops on 3% of this client's inserts, until switched off.
    let admin = common::client().await.database("admin");
    let fault = common::fail_point(
        &admin,
        doc! { "activationProbability": 0.03 },
        doc! { "failCommands": ["insert"], "closeConnection": true, "appName": &app },
    )
    .await;

    let ok = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (coll, ok, refused) = (coll.clone(), ok.clone(), refused.clone());
            tokio::spawn(async move {
                for i in 0..per_task {
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

/// A caller's transaction that aborts after `insert_with_id` in a session leaves neither the
/// document nor a consumed number; one that commits keeps both.
#[tokio::test]
async fn joining_the_callers_transaction() {
    let db = common::database("join_transaction").await;
    let coll = db.collection::<Invoice>("invoices");
    let mut first = invoice("a");
    assert_eq!(first.insert_with_id(&coll).await.unwrap(), 1);

    let client = db.client();
    let mut session = client.start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let mut aborted = invoice("b");
    let id = aborted
        .insert_with_id(&coll)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(id, 2);
    session.abort_transaction().await.unwrap();
    assert_eq!(stored_ids(&coll).await, vec![1], "the document is gone");
    assert_eq!(
        common::counter(&db, "invoice").await,
        Some(1),
        "the number is back"
    );

    session.start_transaction().await.unwrap();
    let mut committed = invoice("c");
    let id = committed
        .insert_with_id(&coll)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(id, 2, "the aborted number is issued again");
    session.commit_transaction().await.unwrap();
    assert_eq!(stored_ids(&coll).await, vec![1, 2]);
    assert_eq!(common::counter(&db, "invoice").await, Some(2));

    // Outside a transaction the session is used as is.
    let mut plain = invoice("d");
    assert_eq!(
        plain
            .insert_with_id(&coll)
            .session(&mut session)
            .await
            .unwrap(),
        3
    );
    assert_eq!(stored_ids(&coll).await, vec![1, 2, 3]);
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

#[tokio::test]
async fn next_id_is_refused_for_gapless_sequences() {
    let db = common::database("gapless_next_id").await;
    let coll = db.collection::<Invoice>("invoices");
    match Invoice::next_id(&coll).await {
        Err(e @ Error::Unsupported { .. }) => {
            let message = e.to_string();
            assert!(message.contains("`gapless` sequences"), "{message}");
            assert!(message.contains("insert_with_id"), "{message}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    // Nor does the model's sequence hand out numbers outside a session.
    let seq = Invoice::sequence(&coll);
    assert!(matches!(
        seq.next().await,
        Err(Error::Unsupported {
            strategy: "gapless",
            ..
        })
    ));
    assert!(matches!(
        seq.reserve(2).await,
        Err(Error::Unsupported {
            strategy: "gapless",
            ..
        })
    ));
    assert_eq!(common::counter(&db, "invoice").await, None);
}

/// On a standalone server the first call fails with a typed error and nothing is written.
#[tokio::test]
async fn a_standalone_server_gets_a_typed_error() {
    let server = common::standalone_server().await;
    let client = server.client().await;
    let db = client.database("gapless_standalone");
    let coll = db.collection::<Invoice>("invoices");
    match invoice("a").insert_with_id(&coll).await {
        Err(e @ Error::TransactionsUnsupported { .. }) => {
            let message = e.to_string();
            assert!(
                message.starts_with("gapless numbering needs transactions")
                    && message.contains("replica set"),
                "{message}"
            );
        }
        other => panic!("expected TransactionsUnsupported, got {other:?}"),
    }
    let names = db.list_collection_names().await.unwrap();
    assert!(names.is_empty(), "nothing was written: {names:?}");
    drop(client);
    tokio::task::spawn_blocking(move || server.stop())
        .await
        .unwrap();
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

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "receipt",
    gapless,
    prefix = "R-YYYY-",
    width = 5,
    scope = "shop"
)]
struct Receipt {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<mongodb::bson::oid::ObjectId>,
    #[seq(id)]
    number: Option<String>,
    shop: String,
    /// Unique: a repeated code makes the insert fail on purpose.
    code: String,
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

/// A counter model with a batch: outside a session its numbers come from this process's cache.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order", batch = 25)]
struct Order {
    #[serde(rename = "_id")]
    id: Option<i64>,
    email: String,
}

fn order(email: &str) -> Order {
    Order {
        id: None,
        email: email.into(),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid_v7")]
struct Event {
    #[serde(rename = "_id")]
    id: Option<mongodb::bson::Uuid>,
    kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 9)]
struct Ticket {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

/// Every action of a `counter` model takes its numbers in the caller's transaction: an abort
/// leaves no document and gives every number back, a commit keeps both; the batch cache is
/// not touched in a session.
#[tokio::test]
async fn every_action_takes_its_numbers_in_the_callers_transaction() {
    let db = common::database("actions_in_transaction").await;
    let coll = db.collection::<Order>("orders");
    common::unique_index(&coll, "email").await;
    let mut session = db.client().start_session().await.unwrap();

    for commit in [false, true] {
        session.start_transaction().await.unwrap();
        let mut one = order("one@example.com");
        let first = one
            .insert_with_id(&coll)
            .session(&mut session)
            .await
            .unwrap();
        let mut many = vec![order("two@example.com"), order("three@example.com")];
        let bulk = Order::insert_many_with_ids(&mut many, &coll)
            .session(&mut session)
            .await
            .unwrap();
        let mut upserted = order("four@example.com");
        let filter = doc! { "email": "four@example.com" };
        let fourth = upserted
            .upsert_with_id(&coll, filter)
            .session(&mut session)
            .await
            .unwrap();
        let taken = Order::next_id(&coll).session(&mut session).await.unwrap();
        let range = Order::sequence(&coll)
            .reserve(3)
            .session(&mut session)
            .await
            .unwrap();
        assert_eq!(
            (first, bulk, fourth, taken, range.first(), range.last()),
            (1, vec![2, 3], 4, 5, 6, 8),
            "numbers follow each other in the transaction (commit: {commit})"
        );
        if commit {
            session.commit_transaction().await.unwrap();
        } else {
            session.abort_transaction().await.unwrap();
            assert_eq!(common::all(&coll).await.len(), 0, "no document after abort");
            assert_eq!(
                common::counter(&db, "order").await,
                None,
                "every number is back"
            );
        }
    }
    let stored: Vec<Order> = common::all(&coll).await;
    let mut ids: Vec<i64> = stored.iter().map(|o| o.id.unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![1, 2, 3, 4]);
    assert_eq!(common::counter(&db, "order").await, Some(8));
    let stats = Order::sequence(&coll).stats();
    assert_eq!(stats.waits, 0, "nothing came from the cache: {stats:?}");
}

/// Strategies without a counter write in the caller's transaction too: an abort stores nothing.
#[tokio::test]
async fn other_strategies_write_in_the_callers_transaction() {
    let db = common::database("strategies_in_transaction").await;
    let events = db.collection::<Event>("events");
    let tickets = db.collection::<Ticket>("tickets");
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let mut batch = vec![
        Event {
            id: None,
            kind: "a".into(),
        },
        Event {
            id: None,
            kind: "b".into(),
        },
    ];
    let ids = Event::insert_many_with_ids(&mut batch, &events)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(ids.len(), 2);
    let mut ticket = Ticket { id: None };
    let drawn = ticket
        .insert_with_id(&tickets)
        .session(&mut session)
        .await
        .unwrap();
    assert!((100_000_000..=999_999_999).contains(&drawn));
    session.abort_transaction().await.unwrap();
    assert_eq!(common::all(&events).await.len(), 0);
    assert_eq!(common::all(&tickets).await.len(), 0);

    session.start_transaction().await.unwrap();
    let mut ticket = Ticket { id: None };
    let drawn = ticket
        .insert_with_id(&tickets)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    let stored: Vec<Ticket> = common::all(&tickets).await;
    assert_eq!(
        stored.iter().map(|t| t.id).collect::<Vec<_>>(),
        [Some(drawn)]
    );
}

/// The driver's options reach the write underneath: a document the collection's validator
/// refuses goes in with `bypass_document_validation`, and an impossible write concern is the
/// server's error, for each action.
#[tokio::test]
async fn options_reach_the_write_underneath() {
    use mongodb::options::{InsertManyOptions, InsertOneOptions};
    let db = common::database("action_options").await;
    db.create_collection("orders")
        .validator(doc! { "email": { "$regex": "@example\\.com$" } })
        .await
        .unwrap();
    let coll = db.collection::<Order>("orders");

    let mut refused = order("not-an-address");
    let e = refused.insert_with_id(&coll).await.unwrap_err();
    assert!(e.to_string().contains("failed validation"), "{e}");
    let bypass = InsertOneOptions::builder()
        .bypass_document_validation(true)
        .build();
    let mut admitted = order("not-an-address");
    admitted
        .insert_with_id(&coll)
        .with_options(bypass)
        .await
        .unwrap();
    let mut many = vec![order("x"), order("y")];
    Order::insert_many_with_ids(&mut many, &coll)
        .with_options(
            InsertManyOptions::builder()
                .bypass_document_validation(true)
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(common::all(&coll).await.len(), 3);
}

/// A write concern given to an action is the one its writes of documents carry; the counter
/// update keeps `majority`.
#[tokio::test]
async fn a_write_concern_reaches_the_documents_writes() {
    use mongodb::options::{Acknowledgment, WriteConcern};
    let name = sequence_testkit::unique_db_name("action_write_concern");
    let (client, commands) = common::monitored_client(&name).await;
    let db = client.database(&name);
    let coll = db.collection::<Order>("orders");
    let wc = || {
        WriteConcern::builder()
            .w(Acknowledgment::Nodes(1))
            .journal(true)
            .build()
    };
    let mut one = order("one@example.com");
    one.insert_with_id(&coll).write_concern(wc()).await.unwrap();
    let mut many = vec![order("two@example.com")];
    Order::insert_many_with_ids(&mut many, &coll)
        .write_concern(wc())
        .await
        .unwrap();
    let mut up = order("three@example.com");
    up.upsert_with_id(&coll, doc! { "email": "three@example.com" })
        .write_concern(wc())
        .await
        .unwrap();
    let ours = doc! { "w": 1, "j": true };
    let inserts = commands.sent("insert");
    assert_eq!(inserts.len(), 2, "{inserts:?}");
    for command in &inserts {
        assert_eq!(
            command.get_document("writeConcern").ok(),
            Some(&ours),
            "{command}"
        );
    }
    let updates = commands.sent("findAndModify");
    let (documents, counters): (Vec<_>, Vec<_>) = updates
        .iter()
        .partition(|c| c.get_str("findAndModify") == Ok("orders"));
    assert_eq!(
        documents.len(),
        2,
        "the update, then the upsert: {updates:?}"
    );
    for command in documents {
        assert_eq!(
            command.get_document("writeConcern").ok(),
            Some(&ours),
            "{command}"
        );
    }
    assert!(!counters.is_empty());
    for command in counters {
        assert_eq!(
            command
                .get_document("writeConcern")
                .and_then(|wc| wc.get_str("w")),
            Ok("majority"),
            "{command}"
        );
    }
}

/// A gapless insert commits its own transaction with `majority`: a write concern of its own is
/// refused before anything is written.
#[tokio::test]
async fn gapless_inserts_refuse_a_write_concern_of_their_own() {
    let db = common::database("gapless_write_concern").await;
    let coll = db.collection::<Invoice>("invoices");
    let mut doc = invoice("a");
    let e = doc
        .insert_with_id(&coll)
        .write_concern(mongodb::options::WriteConcern::nodes(1))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::InvalidArgument {
                argument: "write_concern",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("remove `write_concern`"), "{e}");
    assert_eq!(common::all(&coll).await.len(), 0);
    assert_eq!(common::counter(&db, "invoice").await, None);
}

/// The operator's actions take the caller's transaction too: what they write is seen inside it,
/// and an abort takes it back.
#[tokio::test]
async fn admin_actions_take_the_callers_transaction() {
    let db = common::database("admin_in_transaction").await;
    let coll = db.collection::<Order>("orders");
    let seq = Order::sequence(&coll);
    seq.set_next(10).await.unwrap();
    let mut session = db.client().start_session().await.unwrap();

    session.start_transaction().await.unwrap();
    seq.set_next(100).session(&mut session).await.unwrap();
    let inside = seq.current().session(&mut session).await.unwrap();
    assert_eq!(inside, Some(99), "the transaction sees its own write");
    assert_eq!(
        seq.current().await.unwrap(),
        Some(9),
        "nobody else does yet"
    );
    session.abort_transaction().await.unwrap();
    assert_eq!(
        seq.current().await.unwrap(),
        Some(9),
        "the move was taken back"
    );

    session.start_transaction().await.unwrap();
    assert!(seq.delete().session(&mut session).await.unwrap());
    assert_eq!(seq.current().session(&mut session).await.unwrap(), None);
    session.abort_transaction().await.unwrap();
    assert_eq!(
        seq.current().await.unwrap(),
        Some(9),
        "the delete was taken back"
    );

    session.start_transaction().await.unwrap();
    seq.reset().session(&mut session).await.unwrap();
    session.commit_transaction().await.unwrap();
    assert_eq!(seq.current().await.unwrap(), Some(0), "the reset committed");
    let mut order = order("after-reset@example.com");
    assert_eq!(order.insert_with_id(&coll).await.unwrap(), 1);
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
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
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

    let mut holder = hold_counter(&name).await;
    let mut doc = invoice("a");
    let insert = tokio::spawn(async move { doc.insert_with_id(&coll).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    holder.abort_transaction().await.unwrap();
    assert_eq!(insert.await.unwrap().unwrap(), 2);

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
    // An abort still in flight when a later attempt's counter update started.
    let overlapped = started("abortTransaction").any(|(at, (_, _, request, _))| {
        let ended = events
            .iter()
            .position(|(start, _, r, _)| !start && r == request)
            .expect("every abort ends");
        updates.iter().any(|(u, _)| *u > at && *u < ended)
    });
    assert!(
        overlapped,
        "an attempt started while an abort was in flight"
    );
}
