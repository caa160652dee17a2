//! Adopting existing data: 10,000 orders of a legacy system arrive with their IDs (and no
//! counter); new orders continue after them without a single failed insert, a batch of IDs
//! written by another program is taken in with `sync_counters`, and customers are upserted by
//! email, taking a number only when they are new.
//!
//! `cargo run --example import` starts a throw-away `mongod` when `MONGODB_URI` is not set; with
//! it set, the example works in a database of its own, which it drops at the end. It checks
//! what it prints and exits with an error if a claim does not hold.

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Document};
use mongodb::options::IndexOptions;
use mongodb::IndexModel;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

mod support;
use support::check;

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order", batch = 25)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    customer: String,
    total_cents: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "customer")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    email: String,
    name: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::shared()?;
    let db = server.client().await.database(&unique_db_name("import"));
    let orders = db.collection::<Order>("orders");
    let raw = db.collection::<Document>("orders");

    println!("1. the legacy system's 10,000 orders arrive with their IDs, without a counter");
    let legacy: Vec<Document> = (1..=10_000_i64)
        .map(|i| doc! { "_id": i, "customer": format!("c{}", i % 97), "total_cents": i * 10 })
        .collect();
    raw.insert_many(legacy).await?;
    check(
        Order::sequence(&orders).current().await?.is_none(),
        "there is no counter yet",
    )?;

    println!("2. new orders: 4 clerks, 50 orders each, with `insert_with_id`");
    let clerks: Vec<_> = (0..4)
        .map(|clerk| {
            let orders = orders.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for n in 0..50 {
                    let mut order = Order {
                        id: 0,
                        customer: format!("clerk{clerk}-{n}"),
                        total_cents: 999,
                    };
                    ids.push(order.insert_with_id(&orders).await?);
                }
                Ok::<_, mongo_sequence::Error>(ids)
            })
        })
        .collect();
    let mut ids = Vec::new();
    for clerk in clerks {
        ids.extend(clerk.await??);
    }
    ids.sort_unstable();
    let stats = Order::sequence(&orders).stats();
    println!(
        "  new IDs {}..={}; skipped ahead {} time(s), {} cached value(s) below the stored IDs dropped",
        ids[0],
        ids[ids.len() - 1],
        stats.skipped_ahead,
        stats.wasted
    );
    check(ids.iter().all(|&id| id > 10_000), "no legacy ID was reused")?;
    check(ids.windows(2).all(|w| w[0] != w[1]), "no ID twice")?;
    check(
        stats.skipped_ahead <= 8,
        "a few skips for 10,000 imported orders, not one per order",
    )?;
    check(
        raw.count_documents(doc! {}).await? == 10_200,
        "every order stored once",
    )?;

    println!("3. another program stored orders 50,000..=50,099; `sync_counters` takes them in");
    raw.insert_many(
        (50_000..50_100_i64).map(|i| doc! { "_id": i, "customer": "batch", "total_cents": 1 }),
    )
    .await?;
    let report = Order::sync_counters(&orders).await?;
    for c in &report.counters {
        println!(
            "  counter {}: last issued {:?} -> {} (highest stored {}, {} stored IDs)",
            c.key, c.old, c.new, c.stored, c.ids
        );
    }
    check(
        report.counters.len() == 1 && report.counters[0].new == 50_099,
        "the counter moved to 50,099",
    )?;
    // Values this process cached below 50,099 were dropped: the next order continues above.
    let mut next = Order {
        id: 0,
        customer: "after sync".into(),
        total_cents: 1,
    };
    let id = next.insert_with_id(&orders).await?;
    println!("  the next order is {id}");
    check(id > 50_099, "the next order comes after the synced IDs")?;
    check(
        Order::sequence(&orders).stats().skipped_ahead == stats.skipped_ahead,
        "no skip needed after the sync",
    )?;

    println!("4. customers upserted by email: a number only for a new one");
    let customers = db.collection::<Customer>("customers");
    let unique = IndexOptions::builder().unique(true).build();
    customers
        .create_index(
            IndexModel::builder()
                .keys(doc! { "email": 1 })
                .options(unique)
                .build(),
        )
        .await?;
    let upsert = |email: &str, name: &str| {
        let customers = customers.clone();
        let mut customer = Customer {
            id: 0,
            email: email.into(),
            name: name.into(),
        };
        let filter = doc! { "email": email };
        async move { customer.upsert_with_id(&customers, filter).await }
    };
    let ada = upsert("ada@example.com", "Ada").await?;
    let bob = upsert("bob@example.com", "Bob").await?;
    let ada_again = upsert("ada@example.com", "Ada Lovelace").await?;
    println!("  ada -> {ada}, bob -> {bob}, ada again -> {ada_again}");
    check(ada == ada_again, "an existing customer keeps its ID")?;
    check(
        Customer::sequence(&customers).current().await? == Some(2),
        "two numbers for two customers",
    )?;

    db.drop().await?;
    println!("done: every claim held");
    Ok(())
}
