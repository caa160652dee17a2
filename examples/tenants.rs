//! One counter per tenant (`scope = "tenant"`): every tenant's tickets are numbered 1, 2, 3…
//! And the same counters shared with a Node service that uses mongoose-sequence
//! (`layout = "mongoose_sequence"`): numbers taken on either side are never taken again on the other.
//!
//! `cargo run --example tenants` starts a throw-away `mongod` when `MONGODB_URI` is not set;
//! with it set, the example works in a database of its own, which it drops at the end. It
//! checks what it prints and exits with an error if a claim does not hold.

use std::collections::BTreeMap;

use futures_util::TryStreamExt;
use mongo_sequence::SequentialId;
use mongodb::bson::{doc, oid::ObjectId, Document};
use mongodb::options::ReturnDocument;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};

mod support;
use support::check;

/// A support ticket, numbered per tenant. The counters are mongoose-sequence's, in its default
/// collection `counters` (the same as this crate's default), as a Node service with
/// `TicketSchema.plugin(AutoIncrement, { id: "ticket", inc_field: "number",
/// reference_fields: ["tenant"] })` keeps them.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", scope = "tenant", layout = "mongoose_sequence")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: i64,
    tenant: String,
    title: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::shared()?;
    let db = server.client().await.database(&unique_db_name("tenants"));
    let tickets = db.collection::<Ticket>("tickets");
    // At startup: the unique index `{ tenant: 1, number: 1 }` by which an insert detects a
    // number already stored in its tenant, and mongoose-sequence's counters index.
    let indexes = Ticket::ensure_indexes(&tickets).await?;
    for index in &indexes.indexes {
        println!(
            "index {} on {}: {}",
            index.keys, index.namespace, index.purpose
        );
    }
    check(
        indexes.created().count() == 2,
        "the tenant's unique index and the counters' index are created",
    )?;
    let ticket = |tenant: &str, title: String| Ticket {
        oid: None,
        number: 0,
        tenant: tenant.into(),
        title,
    };

    println!("1. three tenants open tickets at the same time");
    let tasks: Vec<_> = ["acme", "globex", "initech"]
        .into_iter()
        .flat_map(|tenant| (0..2).map(move |worker| (tenant, worker)))
        .map(|(tenant, worker)| {
            let tickets = tickets.clone();
            tokio::spawn(async move {
                let mut numbers = Vec::new();
                for n in 0..4 {
                    let title = format!("{tenant} issue {worker}.{n}");
                    numbers.push(ticket(tenant, title).insert_with_id(&tickets).await?);
                }
                Ok::<_, mongo_sequence::Error>((tenant, numbers))
            })
        })
        .collect();
    let mut by_tenant: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for task in tasks {
        let (tenant, numbers) = task.await??;
        by_tenant.entry(tenant).or_default().extend(numbers);
    }
    for (tenant, numbers) in &mut by_tenant {
        numbers.sort_unstable();
        println!("  {tenant}: tickets {numbers:?}");
    }
    check(
        by_tenant
            .values()
            .all(|n| *n == (1..=8).collect::<Vec<_>>()),
        "every tenant's tickets are numbered 1 to 8",
    )?;

    println!("2. the Node service takes acme's next number the way mongoose-sequence does");
    let counters = db.collection::<Document>("counters");
    let node = counters
        .find_one_and_update(
            doc! { "id": "ticket", "reference_value": { "tenant": "acme" } },
            doc! { "$inc": { "seq": 1 } },
        )
        .upsert(true)
        .return_document(ReturnDocument::After)
        .await?
        .expect("the counter");
    println!("  Node took acme ticket {}", node.get_i64("seq")?);
    let next = ticket("acme", "after node".into())
        .insert_with_id(&tickets)
        .await?;
    println!("  the next acme ticket from Rust: {next}");
    check(next == 10, "Rust continues after the number Node took")?;

    println!("3. the counter documents, as both services read them");
    let stored: Vec<Document> = counters
        .find(doc! {})
        .sort(doc! { "reference_value.tenant": 1 })
        .await?
        .try_collect()
        .await?;
    for counter in &stored {
        println!(
            "  {{ id: {:?}, reference_value: {}, seq: {} }}",
            counter.get_str("id")?,
            counter.get_document("reference_value")?,
            counter.get_i64("seq")?
        );
    }
    check(stored.len() == 3, "one counter document per tenant")?;

    db.drop().await?;
    println!("done: every claim held");
    Ok(())
}
