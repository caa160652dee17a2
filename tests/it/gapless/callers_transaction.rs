//! Actions in the caller's transaction: gapless inserts, every action of a `counter` model,
//! the strategies without a counter and the operator's actions take their numbers and write
//! in it; an abort takes everything back, a commit keeps it.

use crate::common;

use mongo_sequence::SequentialId;
use mongodb::bson::doc;
use serde::{Deserialize, Serialize};

use super::{invoice, order, stored_ids, Invoice, Order};

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
