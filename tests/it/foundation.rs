//! The first end-to-end slice against a real server: counter creation, continuation, and
//! concurrent inserts.

use crate::common;

use std::collections::HashSet;

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Document};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "userid")]
struct User {
    #[serde(rename = "_id")]
    #[seq(id)]
    id: i64,
    name: String,
}

fn user(name: &str) -> User {
    User {
        id: 0,
        name: name.to_owned(),
    }
}

#[tokio::test]
async fn first_insert_creates_the_counter() {
    let db = common::database("first_insert").await;
    let users = db.collection::<User>("users");

    let mut sarah = user("Sarah C.");
    let id = sarah.insert_with_id(&users).await.unwrap();
    assert_eq!(id, 1);
    assert_eq!(sarah.id, 1);

    let counter = db
        .collection::<Document>("counters")
        .find_one(doc! { "_id": "userid" })
        .await
        .unwrap()
        .expect("the counter document was created");
    assert_eq!(counter.get_i64("seq").unwrap(), 1);

    let stored = users.find_one(doc! { "_id": 1 }).await.unwrap().unwrap();
    assert_eq!(stored.name, "Sarah C.");

    let mut bob = user("Bob D.");
    assert_eq!(bob.insert_with_id(&users).await.unwrap(), 2);
}

#[tokio::test]
async fn an_existing_counter_continues_where_it_is() {
    let db = common::database("existing_counter").await;
    // As in the MongoDB documentation: a counter created by other code, as a 32-bit integer.
    db.collection::<Document>("counters")
        .insert_one(doc! { "_id": "userid", "seq": 41_i32 })
        .await
        .unwrap();
    let users = db.collection::<User>("users");

    let mut u = user("Forty-two");
    assert_eq!(u.insert_with_id(&users).await.unwrap(), 42);
    assert_eq!(User::next_id(&users).await.unwrap(), 43);
    let mut u = user("Forty-four");
    assert_eq!(u.insert_with_id(&users).await.unwrap(), 44);
    assert_eq!(User::sequence(&users).current().await.unwrap(), Some(44));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_get_distinct_ids() {
    let db = common::database("concurrent_inserts").await;
    let users = db.collection::<User>("users");

    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let users = users.clone();
            tokio::spawn(async move {
                let mut u = user(&format!("user {i}"));
                [u.insert_with_id(&users).await.unwrap()]
            })
        })
        .collect();
    let ids = common::distinct_ids(tasks).await;
    assert_eq!(ids, (1..=64).collect::<HashSet<i64>>());

    let stored: Vec<User> = common::all(&users).await;
    assert_eq!(stored.len(), 64);
    let stored_ids: HashSet<i64> = stored.iter().map(|u| u.id).collect();
    assert_eq!(stored_ids, ids);
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "orderid", batch = 25)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

/// A batched model takes its IDs from the process's cache of the counter, shared with every
/// `Sequence` handle of that counter: admin operations on a handle apply to the model's next
/// IDs, each database has its own counter, and every round trip reserves whole batches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batched_models_share_the_counters_cache() {
    let name = sequence_testkit::unique_db_name("batched_model");
    let (client, round_trips) = common::monitored_client(&name).await;
    let db = client.database(&name);
    let orders = db.collection::<Order>("orders");

    for expected in 1..=60 {
        assert_eq!(Order::next_id(&orders).await.unwrap(), expected);
    }
    let seq = Order::sequence(&orders);
    let stats = seq.stats();
    assert_eq!(stats.issued, 60);
    // Whole batches: IDs taken back to back outrun a round trip, so the cache may reserve
    // several batches at once.
    common::wait_until(std::time::Duration::from_secs(5), || {
        round_trips.round_trips() == seq.stats().reservations
    })
    .await;
    assert_eq!(round_trips.round_trips(), seq.stats().reservations);
    assert_eq!(seq.stats().reserved % 25, 0, "whole batches");

    // Moving the counter drops the cached values: the model's next ID is the new one.
    seq.set_next(1000).await.unwrap();
    assert_eq!(Order::next_id(&orders).await.unwrap(), 1000);
    let mut order = Order { id: 0 };
    assert_eq!(order.insert_with_id(&orders).await.unwrap(), 1001);
    seq.reset().await.unwrap();
    assert_eq!(Order::next_id(&orders).await.unwrap(), 1);

    // The same model in another database counts on its own.
    let other = common::database("batched_model_other").await;
    let other_orders = other.collection::<Order>("orders");
    assert_eq!(Order::next_id(&other_orders).await.unwrap(), 1);
    assert_eq!(Order::next_id(&orders).await.unwrap(), 2);
    assert_eq!(Order::next_id(&other_orders).await.unwrap(), 2);

    // Many tasks on both threads: distinct IDs, all issued and counted.
    let before = seq.stats().issued;
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let orders = orders.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..500 {
                    ids.push(Order::next_id(&orders).await.unwrap());
                }
                ids
            })
        })
        .collect();
    let all = common::distinct_ids(tasks).await;
    assert_eq!(all.len(), 16 * 500);
    assert_eq!(seq.stats().issued - before, 16 * 500);
}
