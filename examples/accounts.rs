//! 12-digit account numbers, opened concurrently, two ways side by side:
//!
//! - `strategy = "ranges"` with 1,000 shards: each shard is a counter document owning a slice
//!   of the 12-digit space, so concurrent openings rarely update the same document; numbers
//!   still grow within a slice, which hints at how many accounts a slice has;
//! - `strategy = "random"` with `digits = 12`: numbers drawn at random reveal nothing; the
//!   `_id` index refuses a repeated draw, which is drawn again.
//!
//! `cargo run --example accounts` starts a throw-away `mongod` when `MONGODB_URI` is not set;
//! with it set, the example works in a database of its own, which it drops at the end. It
//! checks what it prints and exits with an error if a claim does not hold.

use std::collections::BTreeSet;
use std::time::Instant;

use mongo_sequence::{observability::Stats, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::{Collection, Database};
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

mod support;
use support::check;

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "account", strategy = "ranges", shards = 1000, digits = 12)]
struct ShardedAccount {
    #[serde(rename = "_id")]
    number: i64,
    owner: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 12)]
struct RandomAccount {
    #[serde(rename = "_id")]
    number: i64,
    owner: String,
}

/// Tasks opening accounts at once, and accounts each.
const TASKS: usize = 8;
const PER_TASK: usize = 25;

/// What opening the accounts cost.
struct Run {
    numbers: BTreeSet<i64>,
    millis: u128,
    stats: Stats,
    counter_documents: u64,
}

/// Opens `TASKS × PER_TASK` accounts of model `T` at once.
async fn open<T>(
    db: &Database,
    coll: &Collection<T>,
    make: fn(String) -> T,
) -> Result<Run, Box<dyn std::error::Error>>
where
    T: SequentialId<Id = i64> + Clone,
{
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut numbers = Vec::new();
                for n in 0..PER_TASK {
                    numbers.push(
                        make(format!("owner-{task}-{n}"))
                            .insert_with_id(&coll)
                            .await?,
                    );
                }
                Ok::<_, mongo_sequence::Error>(numbers)
            })
        })
        .collect();
    let mut numbers = BTreeSet::new();
    for task in tasks {
        numbers.extend(task.await??);
    }
    Ok(Run {
        numbers,
        millis: started.elapsed().as_millis(),
        stats: T::sequence(coll).stats(),
        counter_documents: db
            .collection::<Document>("counters")
            .count_documents(doc! {})
            .await?,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::shared()?;
    let ranges_db = server
        .client()
        .await
        .database(&unique_db_name("accounts_ranges"));
    let random_db = server
        .client()
        .await
        .database(&unique_db_name("accounts_random"));

    println!(
        "opening {} accounts each way, {TASKS} at a time",
        TASKS * PER_TASK
    );
    let ranges = open(&ranges_db, &ranges_db.collection("accounts"), |owner| {
        ShardedAccount { number: 0, owner }
    })
    .await?;
    let random = open(&random_db, &random_db.collection("accounts"), |owner| {
        RandomAccount { number: 0, owner }
    })
    .await?;

    println!();
    println!("| strategy | accounts | ms | counter updates | counter documents | redraws | first numbers |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
    for (name, run) in [
        ("ranges, 1,000 shards", &ranges),
        ("random, 12 digits", &random),
    ] {
        let first: Vec<String> = run
            .numbers
            .iter()
            .take(3)
            .map(ToString::to_string)
            .collect();
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} … |",
            run.numbers.len(),
            run.millis,
            run.stats.reservations,
            run.counter_documents,
            run.stats.collisions,
            first.join(", ")
        );
    }
    println!();
    println!(
        "ranges: at most one counter update per account (openings waiting together share one),"
    );
    println!("         spread over the shards that were picked;");
    println!("         numbers grow within each shard's slice of 900,000,000.");
    println!("random:  no counter at all; a draw that hits an existing number is drawn again.");
    println!();

    let all = TASKS * PER_TASK;
    let twelve = |n: &i64| (100_000_000_000..=999_999_999_999).contains(n);
    for (name, run) in [("ranges", &ranges), ("random", &random)] {
        check(
            run.numbers.len() == all,
            &format!("{name}: {all} distinct numbers"),
        )?;
        check(
            run.numbers.iter().all(twelve),
            &format!("{name}: every number has 12 digits"),
        )?;
    }
    check(
        ranges.stats.reservations <= all as u64,
        "ranges: at most one counter update per account",
    )?;
    check(
        ranges.counter_documents * 4 >= ranges.stats.reservations * 3,
        "ranges: at least three in four counter updates on a shard of their own",
    )?;
    check(
        random.counter_documents == 0 && random.stats.reservations == 0,
        "random: no counter document, no counter update",
    )?;

    ranges_db.drop().await?;
    random_db.drop().await?;
    println!("done: every claim held");
    Ok(())
}
