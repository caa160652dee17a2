//! Invoice numbers as an auditor wants them: `INV-YYMMDD-0001`, a day's numbers in the
//! Europe/Berlin time zone, without a single gap, with several clerks at once.
//!
//! The clock is a `ManualClock`, so the example crosses midnight (in Berlin) without waiting:
//! the numbering starts again at 0001. An invoice that fails (a repeated reference) consumes no
//! number. At the end, the counters of past days are purged.
//!
//! `cargo run --example invoices` starts a throw-away `mongod` when `MONGODB_URI` is not set;
//! with it set, the example works in a database of its own, which it drops at the end. It
//! checks what it prints and exits with an error if a claim does not hold.

use std::sync::Arc;

use futures_util::TryStreamExt;
use mongo_sequence::jiff::{civil::date, Timestamp};
use mongo_sequence::{clock::ManualClock, Error, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::options::IndexOptions;
use mongodb::IndexModel;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

mod support;
use support::check;

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "invoice",
    prefix = "INV-YYMMDD-",
    width = 4,
    tz = "Europe/Berlin",
    gapless
)]
struct Invoice {
    #[serde(rename = "_id")]
    number: String,
    clerk: u32,
    /// The order the invoice is for: unique, so a repeated one is refused.
    reference: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::shared()?;
    let db = server.client().await.database(&unique_db_name("invoices"));
    let invoices = db.collection::<Invoice>("invoices");
    let unique = IndexOptions::builder().unique(true).build();
    invoices
        .create_index(
            IndexModel::builder()
                .keys(doc! { "reference": 1 })
                .options(unique)
                .build(),
        )
        .await?;
    // 21:00 in Berlin on 22 November 2025.
    let clock = Arc::new(ManualClock::new(
        "2025-11-22T20:00:00Z".parse::<Timestamp>()?,
    ));
    Invoice::sequence(&invoices).set_clock(clock.clone());

    println!("1. four clerks invoice at the same time, one of them twice for the same order");
    let clerks: Vec<_> = (1..=4)
        .map(|clerk| {
            let invoices = invoices.clone();
            tokio::spawn(async move {
                let mut numbers = Vec::new();
                for n in 1..=5 {
                    // Clerk 4's third invoice repeats its second's order.
                    let order = if clerk == 4 && n == 3 { 2 } else { n };
                    let mut invoice = Invoice {
                        number: String::new(),
                        clerk,
                        reference: format!("order-{clerk}-{order}"),
                    };
                    match invoice.insert_with_id(&invoices).await {
                        Ok(number) => numbers.push(number),
                        Err(Error::DuplicateKey { .. }) => {
                            println!("  clerk {clerk}: order-{clerk}-{order} is invoiced already")
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(numbers)
            })
        })
        .collect();
    let mut numbers = Vec::new();
    for clerk in clerks {
        numbers.extend(clerk.await??);
    }
    numbers.sort();
    println!(
        "  {} invoices: {} … {}",
        numbers.len(),
        numbers[0],
        numbers[numbers.len() - 1]
    );
    let expected: Vec<String> = (1..=19).map(|n| format!("INV-251122-{n:04}")).collect();
    check(
        numbers == expected,
        "19 invoices, numbered 0001 to 0019 without a gap",
    )?;

    println!("2. midnight in Berlin (23:30 UTC): the numbering starts again");
    clock.set("2025-11-22T23:30:00Z".parse()?);
    let mut late = Invoice {
        number: String::new(),
        clerk: 1,
        reference: "order-late".into(),
    };
    let number = late.insert_with_id(&invoices).await?;
    println!("  the first invoice of 23 November: {number}");
    check(number == "INV-251123-0001", "the new day starts at 0001")?;

    println!("3. housekeeping: the counters of days before 23 November are purged");
    let counters = db.collection::<Document>("counters");
    let stored: Vec<Document> = counters.find(doc! {}).await?.try_collect().await?;
    for counter in stored {
        println!("  counter {}", counter);
    }
    let purged = Invoice::sequence(&invoices)
        .purge_periods_before(date(2025, 11, 23))
        .await?;
    println!("  purged {purged} counter(s)");
    check(purged == 1, "the counter of 22 November is gone")?;
    check(
        invoices.count_documents(doc! {}).await? == 20,
        "the invoices themselves stay",
    )?;

    Invoice::sequence(&invoices).use_system_clock();
    db.drop().await?;
    println!("done: every claim held");
    Ok(())
}
