//! The `random` strategy: IDs drawn again on a duplicate `_id` until a small space is full
//! (then a typed error), bulk inserts that draw again only their collisions, a duplicate on
//! another unique index returned as it is, `next_id` as a draw, and a collision inside a
//! transaction.

use crate::common;

use std::collections::HashSet;

use mongo_sequence::{Error, SequentialId, Strategy};
use serde::{Deserialize, Serialize};

use super::stored_ids;

/// Two-digit random IDs: 90 values, drawn until free.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "locker", strategy = "random", digits = 2, retries = 10000)]
struct Locker {
    #[serde(rename = "_id")]
    number: i64,
}

/// The same space, giving up sooner.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "locker_impatient",
    strategy = "random",
    digits = 2,
    retries = 5
)]
struct ImpatientLocker {
    #[serde(rename = "_id")]
    number: i64,
}

/// A random 12-digit code as a string, with another unique field.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 12)]
struct Voucher {
    #[serde(rename = "_id")]
    code: String,
    email: String,
}

/// One-digit random IDs: 9 values.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 1)]
struct Seat {
    #[serde(rename = "_id")]
    number: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_ids_fill_a_small_space_then_fail_with_a_typed_error() {
    let db = common::database("random_fill").await;
    let lockers = db.collection::<Locker>("lockers");
    let mut ids = HashSet::new();
    for _ in 0..90 {
        let mut l = Locker { number: 0 };
        let id = l.insert_with_id(&lockers).await.unwrap();
        assert!((10..=99).contains(&id), "{id}");
        assert_eq!(l.number, id);
        assert!(ids.insert(id), "{id} returned twice");
    }
    let stats = Locker::sequence(&lockers).stats();
    assert!(
        stats.collisions > 0,
        "filling all 90 values needs redraws: {stats:?}"
    );
    assert_eq!(stats.issued, 90 + stats.collisions);

    let impatient = db.collection::<ImpatientLocker>("lockers");
    for _ in 0..2 {
        let mut l = ImpatientLocker { number: 0 };
        match l.insert_with_id(&impatient).await {
            Err(e @ Error::RandomIdsExhausted { .. }) => {
                let Error::RandomIdsExhausted {
                    attempts,
                    start,
                    max,
                    ..
                } = &e
                else {
                    unreachable!()
                };
                assert_eq!((*attempts, *start, *max), (6, 10, 99));
                let text = e.to_string();
                assert!(text.contains("raise `retries`"), "{text}");
                assert!(text.contains("widen it"), "{text}");
            }
            other => panic!("expected RandomIdsExhausted, got {other:?}"),
        }
    }
    assert_eq!(ImpatientLocker::sequence(&impatient).stats().collisions, 12);

    let stored = stored_ids(&db, "lockers").await;
    assert_eq!(stored.len(), 90);
    let stored: HashSet<i64> = stored.iter().map(|b| b.as_i64().unwrap()).collect();
    assert_eq!(stored, (10..=99).collect());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bulk_inserts_redraw_only_the_collisions() {
    let db = common::database("random_bulk").await;
    let lockers = db.collection::<Locker>("lockers");
    let mut first: Vec<Locker> = (0..50).map(|_| Locker { number: 0 }).collect();
    let ids = Locker::insert_many_with_ids(&mut first, &lockers)
        .await
        .unwrap();
    assert_eq!(ids.len(), 50);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 50);
    assert!(first.iter().zip(&ids).all(|(l, id)| l.number == *id));

    let collisions_before = Locker::sequence(&lockers).stats().collisions;
    let mut rest: Vec<Locker> = (0..40).map(|_| Locker { number: 0 }).collect();
    let more = Locker::insert_many_with_ids(&mut rest, &lockers)
        .await
        .unwrap();
    assert!(
        Locker::sequence(&lockers).stats().collisions > collisions_before,
        "40 draws into a space 5/9 full collide"
    );
    let all: HashSet<i64> = ids.iter().chain(&more).copied().collect();
    assert_eq!(all, (10..=99).collect());
    assert_eq!(stored_ids(&db, "lockers").await.len(), 90);

    let mut one_more = vec![ImpatientLocker { number: 0 }];
    assert!(matches!(
        ImpatientLocker::insert_many_with_ids(&mut one_more, &db.collection("lockers")).await,
        Err(Error::RandomIdsExhausted { attempts: 6, .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_on_another_unique_index_is_returned_not_retried() {
    let db = common::database("random_other_index").await;
    let vouchers = db.collection::<Voucher>("vouchers");
    common::unique_index(&vouchers, "email").await;
    let mut a = Voucher {
        code: String::new(),
        email: "a@example.com".into(),
    };
    let code = a.insert_with_id(&vouchers).await.unwrap();
    assert_eq!(code.len(), 12);
    assert!(code.bytes().all(|b| b.is_ascii_digit()) && !code.starts_with('0'));

    let mut b = Voucher {
        code: String::new(),
        email: "a@example.com".into(),
    };
    match b.insert_with_id(&vouchers).await {
        Err(Error::DuplicateKey { message, .. }) => {
            assert!(message.contains("email"), "{message}")
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    let stats = Voucher::sequence(&vouchers).stats();
    assert_eq!((stats.issued, stats.collisions), (2, 0), "no redraw");
    assert_eq!(stored_ids(&db, "vouchers").await.len(), 1);

    let mut docs = vec![Voucher {
        code: String::new(),
        email: "a@example.com".into(),
    }];
    assert!(matches!(
        Voucher::insert_many_with_ids(&mut docs, &vouchers).await,
        Err(Error::DuplicateKey { .. })
    ));

    // Through `insert_with_id` in a session, the same rules.
    let mut session = db.client().start_session().await.unwrap();
    let mut c = Voucher {
        code: String::new(),
        email: "c@example.com".into(),
    };
    let code = c
        .insert_with_id(&vouchers)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(c.code, code);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_next_id_is_a_draw_and_counter_operations_are_unsupported() {
    let db = common::database("random_next").await;
    let lockers = db.collection::<Locker>("lockers");
    for _ in 0..20 {
        assert!((10..=99).contains(&Locker::next_id(&lockers).await.unwrap()));
    }
    let seq = Locker::sequence(&lockers);
    assert_eq!(seq.options().strategy, Strategy::Random);
    assert!(matches!(
        seq.reserve(3).await,
        Err(Error::Unsupported {
            operation: "reserve",
            strategy: "random",
            ..
        })
    ));
    assert!(matches!(
        seq.current().await,
        Err(Error::Unsupported { .. })
    ));
    assert!(!db
        .list_collection_names()
        .await
        .unwrap()
        .contains(&"counters".to_owned()));
}

/// In a transaction, the server aborts the transaction on the duplicate key, so the redraw
/// fails with its transient error: a transaction retry loop then starts over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collision_inside_a_transaction_returns_the_transient_error() {
    let db = common::database("random_transaction").await;
    let seats = db.collection::<Seat>("seats");
    seats
        .insert_many((1..=9).map(|number| Seat { number }))
        .await
        .unwrap();
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let mut s = Seat { number: 0 };
    match s.insert_with_id(&seats).session(&mut session).await {
        Err(Error::Mongo(e)) => assert!(
            e.contains_label(mongodb::error::TRANSIENT_TRANSACTION_ERROR),
            "{e}"
        ),
        other => panic!("expected the transaction's transient error, got {other:?}"),
    }
    assert_eq!(Seat::sequence(&seats).stats().collisions, 1);
}
