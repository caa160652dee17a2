//! The first values of scope values taken and inserted in rounds: the first inserts of many
//! tenants waiting together share their counter update and their insert, a document refused on
//! its own fails alone, so does a tenant whose counter cannot give a value, a number that meets
//! a stored document skips past it, and a standalone server works the same.

use crate::common;

use mongo_sequence::{Error, Scope, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::options::IndexOptions;
use mongodb::{Collection, IndexModel};
use sequence_testkit::unique_db_name;
use serde::{Deserialize, Serialize};

/// A ticket numbered per tenant, from a cache of the tenant's own from its second insert on;
/// at most 5 per tenant. `code`, when set, is unique across tenants.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", scope = "tenant", batch = 25, max = 5)]
struct Ticket {
    #[seq(id)]
    number: i64,
    tenant: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
}

fn ticket(tenant: &str) -> Ticket {
    Ticket {
        number: 0,
        tenant: tenant.to_owned(),
        code: None,
    }
}

/// The tickets' collection with the model's indexes and a unique `code`.
async fn tickets(db: &mongodb::Database) -> Collection<Ticket> {
    let coll = db.collection::<Ticket>("tickets");
    Ticket::ensure_indexes(&coll).await.unwrap();
    let unique = IndexOptions::builder()
        .unique(true)
        .partial_filter_expression(doc! { "code": { "$type": "string" } })
        .build();
    coll.create_index(
        IndexModel::builder()
            .keys(doc! { "code": 1 })
            .options(unique)
            .build(),
    )
    .await
    .unwrap();
    coll
}

/// Inserts `docs` from a task each, all at once; the results in order.
async fn insert_at_once(coll: &Collection<Ticket>, docs: Vec<Ticket>) -> Vec<Result<i64, Error>> {
    let tasks: Vec<_> = docs
        .into_iter()
        .map(|mut doc| {
            let coll = coll.clone();
            tokio::spawn(async move { doc.insert_with_id(&coll).await })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

/// The last value the counter of `tenant` gave, if it has one.
async fn counter_of(coll: &Collection<Ticket>, tenant: &str) -> Option<i64> {
    let scoped = Ticket::sequence(coll).in_scope(Scope::new().with("tenant", tenant));
    scoped.unwrap().current().await.unwrap()
}

/// 48 tenants' first tickets inserted at once: each is number 1 of its tenant and each counter
/// gave exactly one value, with fewer `insert` commands than tickets and counters moved
/// several at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_values_of_many_tenants_share_rounds() {
    let name = unique_db_name("first_values_shared");
    let (client, commands) = common::monitored_client(&name).await;
    let coll = tickets(&client.database(&name)).await;
    let tenants: Vec<String> = (0..48).map(|i| format!("t{i}")).collect();
    let results = insert_at_once(&coll, tenants.iter().map(|t| ticket(t)).collect()).await;
    for (tenant, result) in tenants.iter().zip(results) {
        assert_eq!(result.unwrap(), 1, "{tenant}'s first ticket");
        assert_eq!(
            counter_of(&coll, tenant).await,
            Some(1),
            "{tenant}'s counter"
        );
    }
    let stored: Vec<Document> = common::all(&coll.clone_with_type()).await;
    assert_eq!(stored.len(), 48);
    assert!(stored.iter().all(|d| d.get_i64("number") == Ok(1)));
    let inserts = commands.count("insert");
    assert!(
        (1..48).contains(&inserts),
        "{inserts} inserts for 48 first tickets"
    );
    let together = commands
        .sent("update")
        .iter()
        .filter(|c| c.get_array("updates").is_ok_and(|u| u.len() > 1))
        .count();
    assert!(together >= 1, "no update moved several counters at once");
}

/// In rounds of first tickets, two whose `code` is taken are refused with the duplicate key;
/// the others, before and after them, are stored with 1. A refused ticket's value is not
/// given again (its tenant's next ticket is 2), as for any refused insert outside gapless
/// numbering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_first_value_fails_alone() {
    let db = common::database("first_values_refused").await;
    let coll = tickets(&db).await;
    let mut taken = ticket("holder");
    taken.code = Some("taken".into());
    taken.insert_with_id(&coll).await.unwrap();
    let docs: Vec<Ticket> = (0..20)
        .map(|i| {
            let mut doc = ticket(&format!("r{i}"));
            if i % 10 == 3 {
                doc.code = Some("taken".into());
            }
            doc
        })
        .collect();
    let results = insert_at_once(&coll, docs).await;
    for (i, result) in results.into_iter().enumerate() {
        let tenant = format!("r{i}");
        if i % 10 == 3 {
            assert!(
                matches!(result, Err(Error::DuplicateKey { .. })),
                "{tenant}: {result:?}"
            );
            assert_eq!(
                counter_of(&coll, &tenant).await,
                Some(1),
                "{tenant}'s counter"
            );
            assert_eq!(ticket(&tenant).insert_with_id(&coll).await.unwrap(), 2);
        } else {
            assert_eq!(result.unwrap(), 1, "{tenant}");
        }
    }
    let stored = coll.count_documents(doc! {}).await.unwrap();
    assert_eq!(stored, 1 + 20);
}

/// A tenant whose counter is at its `max` among first tickets inserted at once gets
/// `Exhausted`; the others are stored with 1, although the round that moved their counters
/// together met the exhausted one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_tenant_fails_alone_among_first_values() {
    let name = unique_db_name("first_values_exhausted");
    let (client, commands) = common::monitored_client(&name).await;
    let coll = tickets(&client.database(&name)).await;
    let full = Ticket::sequence(&coll)
        .in_scope(Scope::new().with("tenant", "full"))
        .unwrap();
    assert_eq!(full.reserve(5).await.unwrap().last(), 5);
    // The first ticket of a tenant goes first alone; the others wait for it and go together.
    assert_eq!(ticket("lead").insert_with_id(&coll).await.unwrap(), 1);
    let mut docs: Vec<Ticket> = (0..24).map(|i| ticket(&format!("e{i}"))).collect();
    docs.insert(12, ticket("full"));
    let results = insert_at_once(&coll, docs).await;
    for (i, result) in results.into_iter().enumerate() {
        if i == 12 {
            assert!(
                matches!(result, Err(Error::Exhausted { .. })),
                "full: {result:?}"
            );
        } else {
            assert_eq!(result.unwrap(), 1, "insert {i}");
        }
    }
    assert_eq!(counter_of(&coll, "full").await, Some(5));
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 1 + 24);
    // `full` went in a round of several counters, which went on without it.
    let with_full = commands.sent("update").into_iter().any(|c| {
        let statements = c.get_array("updates").map(Vec::len).unwrap_or(0);
        statements > 1 && c.to_string().contains("\"full\"")
    });
    assert!(with_full, "`full` was not in a round of several counters");
}

/// A tenant with a ticket stored by another writer (number 1, its counter absent): its first
/// ticket inserted among others skips past it to 2; the others get 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_value_skips_past_a_stored_number() {
    let db = common::database("first_values_stored").await;
    let coll = tickets(&db).await;
    coll.clone_with_type::<Document>()
        .insert_one(doc! { "number": 1_i64, "tenant": "imported" })
        .await
        .unwrap();
    let mut docs: Vec<Ticket> = (0..12).map(|i| ticket(&format!("s{i}"))).collect();
    docs.insert(6, ticket("imported"));
    let results = insert_at_once(&coll, docs).await;
    for (i, result) in results.into_iter().enumerate() {
        let expected = if i == 6 { 2 } else { 1 };
        assert_eq!(result.unwrap(), expected, "insert {i}");
    }
    assert_eq!(counter_of(&coll, "imported").await, Some(2));
}

/// On a standalone server (no replica set, no transactions) first tickets inserted at once are
/// numbered as on a replica set (the rounds need no transaction): each tenant's first 1 and
/// its second 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_values_on_a_standalone_server() {
    let server = common::standalone_server().await;
    let client = server.client().await;
    let coll = tickets(&client.database("first_values_standalone")).await;
    let tenants: Vec<String> = (0..12).map(|i| format!("a{i}")).collect();
    for round in 1..=2 {
        let results = insert_at_once(&coll, tenants.iter().map(|t| ticket(t)).collect()).await;
        for (tenant, result) in tenants.iter().zip(results) {
            assert_eq!(result.unwrap(), round, "{tenant}'s ticket {round}");
        }
    }
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 24);
    drop(client);
    tokio::task::spawn_blocking(move || server.stop())
        .await
        .unwrap();
}
