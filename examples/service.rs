//! A small HTTP service that numbers orders: `POST /orders` with `{ "customer", "total_cents" }`
//! stores the order with the next number and answers `{ "id": … }`. The example starts the
//! service on a free loopback port, sends it 100 requests at once, checks the answers, shows
//! the sequence's `stats()`, and on shutdown gives the unused cached numbers back.
//!
//! `cargo run --example service` starts a throw-away `mongod` when `MONGODB_URI` is not set;
//! with it set, the example works in a database of its own, which it drops at the end. It
//! checks what it prints and exits with an error if a claim does not hold.

use std::collections::BTreeSet;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mongo_sequence::SequentialId;
use mongodb::Collection;
use sequence_testkit::{unique_db_name, TestServer};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

mod support;
use support::check;

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order", batch = 20)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    customer: String,
    total_cents: i64,
}

/// The body of `POST /orders`.
#[derive(Deserialize)]
struct NewOrder {
    customer: String,
    total_cents: i64,
}

/// `POST /orders`: stores the order with the next number.
async fn create_order(
    State(orders): State<Collection<Order>>,
    Json(new): Json<NewOrder>,
) -> Result<Json<Value>, (StatusCode, String)> {
    let mut order = Order {
        id: 0,
        customer: new.customer,
        total_cents: new.total_cents,
    };
    match order.insert_with_id(&orders).await {
        Ok(id) => Ok(Json(json!({ "id": id }))),
        Err(e) => Err((StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::shared()?;
    let db = server.client().await.database(&unique_db_name("service"));
    let orders = db.collection::<Order>("orders");

    let app = Router::new()
        .route("/orders", post(create_order))
        .with_state(orders.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let service = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    println!("the service listens on http://{address}");

    println!("1. 100 requests at once: POST /orders");
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let requests: Vec<_> = (0..100)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move {
                let body = json!({ "customer": format!("customer-{n}"), "total_cents": 100 + n });
                let request = hyper::Request::post(format!("http://{address}/orders"))
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(body.to_string())))?;
                let response = client.request(request).await?;
                let status = response.status();
                let bytes = response.into_body().collect().await?.to_bytes();
                if !status.is_success() {
                    return Err(format!("{status}: {}", String::from_utf8_lossy(&bytes)).into());
                }
                let answer: Value = serde_json::from_slice(&bytes)?;
                answer["id"]
                    .as_i64()
                    .ok_or_else(|| format!("no id in {answer}").into())
            })
        })
        .collect();
    let mut ids = BTreeSet::new();
    for request in requests {
        let id: Result<i64, Box<dyn std::error::Error + Send + Sync>> = request.await?;
        ids.insert(id.map_err(|e| e.to_string())?);
    }
    println!(
        "  answered ids {} … {}",
        ids.first().unwrap(),
        ids.last().unwrap()
    );
    check(
        ids == (1..=100).collect(),
        "100 answers, ids 1 to 100, none twice",
    )?;
    check(
        orders.count_documents(mongodb::bson::doc! {}).await? == 100,
        "100 orders stored",
    )?;

    println!("2. what the sequence did in this process");
    let seq = Order::sequence(&orders);
    let stats = seq.stats();
    println!(
        "  issued {}, reserved {} in {} round trips, {} calls waited for a round trip",
        stats.issued, stats.reserved, stats.reservations, stats.waits
    );
    check(stats.issued == 100, "100 ids issued")?;
    check(
        stats.reservations <= 7,
        "a round trip per 20 ids at most, not one per order",
    )?;

    println!("3. shutdown: the service stops, the unused cached numbers go back to the counter");
    let _ = stop.send(());
    service.await??;
    let given_back = seq.release().await?;
    let next = seq.current().await?.unwrap_or(0) + 1;
    println!("  gave back {given_back} number(s); the next order will be {next}");
    check(
        next == 101,
        "after a graceful shutdown, the numbering goes on without a gap",
    )?;

    db.drop().await?;
    println!("done: every claim held");
    Ok(())
}
