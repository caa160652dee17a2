//! Gapless numbering through transactions, and inserts that join the caller's transaction,
//! against real servers (a single-node replica set, and a standalone server):
//!
//! - `dense.rs`: the numbers stay dense around failed inserts and dropped connections, in
//!   bulk, from concurrent tasks, and per period and scope;
//! - `refused.rs`: what gapless numbering refuses (numbers outside an insert, a server without
//!   transactions, a write concern of the caller's);
//! - `groups.rs`: the concurrent inserts of a process committed together in groups;
//! - `held_counter.rs`: transactions that meet their counter held by another;
//! - `callers_transaction.rs`: every action in the caller's transaction, whatever its strategy;
//! - `write_options.rs`: the driver's options and write concern of an action reach its writes.
//!
//! Here: the models more than one file inserts, and the helpers of the tests.

mod callers_transaction;
mod dense;
mod groups;
mod held_counter;
mod refused;
mod write_options;

use crate::common;

use std::sync::Arc;

use mongo_sequence::SequentialId;
use mongodb::bson::doc;
use sequence_testkit::TestServer;
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
