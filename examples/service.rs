//! A small HTTP service that numbers orders: `POST /orders` with `{ "customer", "total_cents" }`
//! stores the order with the next number and answers `{ "id": … }`; `GET /sequences` shows
//! every sequence of the process as JSON (`mongo_sequence::observability::snapshot`). The
//! example starts the service on a free loopback port, sends it 100 requests at once, checks the
//! answers, shows the sequence's `stats()` and its entry in `/sequences`, and on shutdown gives
//! the unused cached numbers back.
//!
//! With `--features metrics` (`cargo run --example service --features metrics`) it also
//! installs a Prometheus recorder (`metrics-exporter-prometheus`) before the first ID, serves
//! the exposition at `GET /metrics`, and checks its own scrape: every series of
//! `mongo_sequence::observability` is there, with the values of what it did.
//!
//! `cargo run --example service` starts a throw-away `mongod` when `MONGODB_URI` is not set;
//! with it set, the example works in a database of its own, which it drops at the end. It
//! checks what it prints and exits with an error if a claim does not hold.

use std::collections::BTreeSet;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mongo_sequence::{observability, SequentialId};
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

/// `GET /sequences`: every sequence of this process, what it did and what its cache holds.
async fn sequences() -> Json<observability::Snapshot> {
    Json(observability::snapshot())
}

/// An HTTP client of the example's service.
type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// `GET url`: the body, if the status is a success.
async fn get_text(client: &HttpClient, url: &str) -> Result<String, Box<dyn std::error::Error>> {
    let request = hyper::Request::get(url).body(Full::new(Bytes::new()))?;
    let response = client.request(request).await?;
    let status = response.status();
    let bytes = response.into_body().collect().await?.to_bytes();
    let text = String::from_utf8(bytes.to_vec())?;
    if !status.is_success() {
        return Err(format!("GET {url}: {status}: {text}").into());
    }
    Ok(text)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The recorder goes in before the first ID: a sequence registers its series with the
    // recorder installed when the process first uses it.
    #[cfg(feature = "metrics")]
    let prometheus = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;

    let server = TestServer::shared()?;
    let db = server.client().await.database(&unique_db_name("service"));
    let orders = db.collection::<Order>("orders");

    let app = Router::new()
        .route("/orders", post(create_order))
        .route("/sequences", get(sequences));
    #[cfg(feature = "metrics")]
    let app = {
        let prometheus = prometheus.clone();
        app.route(
            "/metrics",
            get(move || async move {
                (
                    [("content-type", "text/plain; version=0.0.4")],
                    prometheus.render(),
                )
            }),
        )
    };
    let app = app.with_state(orders.clone());
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
    let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
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

    println!("3. GET /sequences: every sequence of the process, as JSON");
    let location = format!("{}.counters", db.name());
    let url = format!("http://{address}/sequences");
    // A prefetch of the next range may still be in flight: ask again once it has landed.
    let mut order = Value::Null;
    for _ in 0..200 {
        let listed: Value = serde_json::from_str(&get_text(&client, &url).await?)?;
        order = listed["sequences"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["sequence"] == "order" && s["location"] == location.as_str())
            .cloned()
            .ok_or("no entry for the sequence order")?;
        if order["cache"]["refilling"] == false {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    println!("  {order}");
    let (listed, cache) = (&order["stats"], &order["cache"]);
    let number = |v: &Value| v.as_u64().unwrap_or(u64::MAX);
    check(
        listed["issued"] == 100 && order["strategy"] == "counter",
        "the sequence order is listed, with 100 ids issued",
    )?;
    check(
        // The next reservation: whole batches of 20, several when the cache is busy (at most
        // 16, `Batch::MAX_AHEAD`).
        (20..=20 * 16).contains(&number(&cache["batch"]))
            && number(&cache["batch"]) % 20 == 0
            && number(&cache["values_left"])
                == cache["current"].get("last").map_or(0, |last| {
                    number(last) + 1 - number(&cache["current"]["first"])
                }),
        "its cache shows its next reservation (whole batches) and what is left of the range in use",
    )?;
    check(
        number(&listed["reserved"])
            == number(&listed["issued"]) + number(&cache["cached"]) + number(&listed["wasted"]),
        "every value reserved was issued, is cached, or was wasted",
    )?;

    #[cfg(feature = "metrics")]
    {
        println!("4. GET /metrics: the Prometheus scrape holds what the service did");
        let scrape = get_text(&client, &format!("http://{address}/metrics")).await?;
        check_scrape(&scrape, &seq.stats(), cache)?;
    }

    let step = if cfg!(feature = "metrics") { 5 } else { 4 };
    println!(
        "{step}. shutdown: the service stops, the unused cached numbers go back to the counter"
    );
    let _ = stop.send(());
    service.await??;
    let given_back = seq.release().await?;
    let next = seq.current().await?.unwrap_or(0) + 1;
    println!("  gave back {given_back} number(s); the next order will be {next}");
    check(
        next == 101,
        "after a graceful shutdown, the numbering goes on without a gap",
    )?;
    #[cfg(feature = "metrics")]
    {
        let scrape = prometheus.render();
        let order = [("sequence", "order"), ("strategy", "counter")];
        check(
            sample(&scrape, "mongo_sequence_ids_released_total", &order) == Some(given_back as f64)
                && sample(&scrape, "mongo_sequence_cached_ids", &order) == Some(0.0),
            "the scrape counts the numbers given back, and no value is cached any more",
        )?;
    }

    db.drop().await?;
    println!("done: every claim held");
    Ok(())
}

/// The value of the series `name` whose labels include `labels`, in a Prometheus exposition.
#[cfg(feature = "metrics")]
fn sample(scrape: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape
        .lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (series_name, series_labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let has = |(k, v): &(&str, &str)| {
                series_labels
                    .split(',')
                    .any(|pair| pair == format!("{k}=\"{v}\""))
            };
            (series_name == name && labels.iter().all(has)).then(|| value.parse().ok())?
        })
}

/// Checks that the scrape holds every documented series of the sequence `order`, with the
/// values of its `stats()` and of its cache as `/sequences` showed it.
#[cfg(feature = "metrics")]
fn check_scrape(
    scrape: &str,
    stats: &observability::Stats,
    cache: &Value,
) -> Result<(), Box<dyn std::error::Error>> {
    let order = [("sequence", "order"), ("strategy", "counter")];
    let ok = [order[0], order[1], ("outcome", "ok")];
    let value = |name: &str| sample(scrape, name, &order);
    for line in scrape
        .lines()
        .filter(|l| l.contains("\"order\"") && !l.contains("quantile="))
    {
        println!("  {line}");
    }
    let documented = [
        "mongo_sequence_ids_issued_total",
        "mongo_sequence_reservations_total",
        "mongo_sequence_reservation_duration_seconds_count",
        "mongo_sequence_reservation_retries_total",
        "mongo_sequence_waits_total",
        "mongo_sequence_wait_duration_seconds_count",
        "mongo_sequence_ids_per_reservation_count",
        "mongo_sequence_skipped_ahead_total",
        "mongo_sequence_collisions_total",
        "mongo_sequence_transaction_retries_total",
        "mongo_sequence_group_size_count",
        "mongo_sequence_ids_released_total",
        "mongo_sequence_ids_abandoned_total",
        "mongo_sequence_cached_ids",
    ];
    let missing: Vec<_> = documented.iter().filter(|n| value(n).is_none()).collect();
    check(
        missing.is_empty(),
        &format!("every documented series of the sequence order is scraped (missing: {missing:?})"),
    )?;
    let n = |v: u64| Some(v as f64);
    check(
        value("mongo_sequence_ids_issued_total") == Some(100.0),
        "mongo_sequence_ids_issued_total = 100, the orders created",
    )?;
    check(
        sample(scrape, "mongo_sequence_reservations_total", &ok) == n(stats.reservations)
            && value("mongo_sequence_ids_per_reservation_count") == n(stats.reservations)
            && value("mongo_sequence_ids_per_reservation_sum") == n(stats.reserved),
        &format!(
            "{} reservations of {} values in all, as stats() counts",
            stats.reservations, stats.reserved
        ),
    )?;
    check(
        value("mongo_sequence_waits_total") == n(stats.waits)
            && value("mongo_sequence_wait_duration_seconds_count") == n(stats.waits),
        &format!(
            "{} calls waited for a round trip, as stats() counts",
            stats.waits
        ),
    )?;
    check(
        value("mongo_sequence_cached_ids") == cache["cached"].as_u64().map(|c| c as f64),
        "mongo_sequence_cached_ids = the values cached that /sequences shows",
    )?;
    check(
        [
            "mongo_sequence_skipped_ahead_total",
            "mongo_sequence_collisions_total",
            "mongo_sequence_transaction_retries_total",
            "mongo_sequence_group_size_count",
            "mongo_sequence_ids_released_total",
            "mongo_sequence_ids_abandoned_total",
        ]
        .iter()
        .all(|name| value(name) == Some(0.0)),
        "no skip ahead, collision, gapless retry, release or gap yet: all zero",
    )?;
    Ok(())
}
