//! What the integration tests share: one real server for the test binary and a database per
//! test, the models more than one module inserts (`models`; a model whose configuration is what
//! a test is about stays beside that test), command monitoring, a counter reader, a distinct-IDs
//! check and the fail-point guard.

#![allow(dead_code)]

pub mod models;

use mongodb::{Client, Database};
use sequence_testkit::{unique_db_name, TestServer};

/// Whether the long variants of the load, fault and failover tests run (`SOAK=1`). By default
/// each runs at the smallest size that still finds the bug it is for.
pub fn soak() -> bool {
    std::env::var("SOAK").is_ok_and(|v| v == "1")
}

/// The default value, or the soak value with `SOAK=1`.
pub fn pick<T>(default: T, soak_value: T) -> T {
    if soak() {
        soak_value
    } else {
        default
    }
}

/// A client of the shared test server (started on first use, stopped when the binary exits).
pub async fn client() -> Client {
    TestServer::shared_or_panic().client().await
}

/// A fresh database of its own for the test `name`.
pub async fn database(name: &str) -> Database {
    client().await.database(&unique_db_name(name))
}

/// Counts the commands a client sends to one database, by command name, and keeps them.
#[derive(Clone, Default)]
pub struct Commands(
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
    std::sync::Arc<std::sync::Mutex<Vec<mongodb::bson::Document>>>,
);

impl Commands {
    /// The commands named `name` sent so far, as sent.
    pub fn sent(&self, name: &str) -> Vec<mongodb::bson::Document> {
        let sent = self.1.lock().unwrap();
        sent.iter()
            .filter(|c| c.keys().next().map(String::as_str) == Some(name))
            .cloned()
            .collect()
    }

    /// The commands named `name` sent so far on the collection `coll`, as sent.
    pub fn sent_on(&self, name: &str, coll: &str) -> Vec<mongodb::bson::Document> {
        let mut sent = self.sent(name);
        sent.retain(|c| c.get_str(name) == Ok(coll));
        sent
    }

    /// How many `name` commands were sent.
    pub fn count(&self, name: &str) -> u64 {
        self.0.lock().unwrap().get(name).copied().unwrap_or(0)
    }

    /// How many counter round trips (`findAndModify`) were sent.
    pub fn round_trips(&self) -> u64 {
        self.count("findAndModify")
    }
}

/// A client whose commands on database `db` are counted. Its connections carry `db` as
/// application name, so that a `failCommand` fail point with `appName: db` hits this client only.
pub async fn monitored_client(db: &str) -> (Client, Commands) {
    use mongodb::event::command::CommandEvent;
    use mongodb::event::EventHandler;
    let counter = Commands::default();
    let mut options = mongodb::options::ClientOptions::parse(TestServer::shared_or_panic().uri())
        .await
        .expect("the test server's URI parses");
    options.app_name = Some(db.to_owned());
    let (seen, db) = (counter.clone(), db.to_owned());
    options.command_event_handler = Some(EventHandler::callback(move |event| {
        if let CommandEvent::Started(started) = event {
            if started.db == db {
                seen.1.lock().unwrap().push(started.command.clone());
                *seen
                    .0
                    .lock()
                    .unwrap()
                    .entry(started.command_name)
                    .or_default() += 1;
            }
        }
    }));
    (
        Client::with_options(options).expect("client options are valid"),
        counter,
    )
}

/// Every document of `coll`, in `_id` order.
pub async fn all<T>(coll: &mongodb::Collection<T>) -> Vec<T>
where
    T: serde::de::DeserializeOwned + Send + Sync,
{
    use futures_util::TryStreamExt;
    coll.find(mongodb::bson::doc! {})
        .sort(mongodb::bson::doc! { "_id": 1 })
        .await
        .expect("the documents can be read")
        .try_collect()
        .await
        .expect("the documents can be read")
}

/// A client for `uri` whose connections carry `app` as application name, with the given extra
/// options: a `failCommand` fail point with `appName: app` hits this client only, not the other
/// tests of the binary.
pub async fn client_with_app(
    uri: &str,
    app: &str,
    tweak: impl FnOnce(&mut mongodb::options::ClientOptions),
) -> Client {
    let mut options = mongodb::options::ClientOptions::parse(uri)
        .await
        .expect("the test server's URI parses");
    options.app_name = Some(app.to_owned());
    tweak(&mut options);
    Client::with_options(options).expect("client options are valid")
}

/// Creates a unique index on `field` of `coll`.
pub async fn unique_index<T: Send + Sync>(coll: &mongodb::Collection<T>, field: &str) {
    let index = mongodb::IndexModel::builder()
        .keys(mongodb::bson::doc! { field: 1 })
        .options(
            mongodb::options::IndexOptions::builder()
                .unique(true)
                .build(),
        )
        .build();
    coll.create_index(index).await.unwrap();
}

/// The unique indexes of `coll`, as (name, keys).
pub async fn unique_indexes<T: Send + Sync>(
    coll: &mongodb::Collection<T>,
) -> Vec<(String, mongodb::bson::Document)> {
    use futures_util::TryStreamExt;
    let indexes: Vec<mongodb::IndexModel> = coll
        .list_indexes()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    indexes
        .into_iter()
        .filter_map(|i| {
            let options = i.options.unwrap_or_default();
            (options.unique == Some(true)).then(|| (options.name.unwrap_or_default(), i.keys))
        })
        .collect()
}

/// The server's `failCommand` fail point, switched on by [`fail_point`]. Switch it off with
/// [`FailPoint::fired`] (which asserts that it fired: a fault test whose fault never happened
/// proves nothing) or [`FailPoint::off`]; if the test panics before, dropping the guard switches
/// it off, so that no other test meets it.
pub struct FailPoint {
    admin: Database,
    /// What the point does when it fires, to arm it again ([`FailPoint::rearm`]).
    data: mongodb::bson::Document,
    entered_before: i64,
    on: bool,
    /// The port of the server the point is set on, to switch it off from `drop`.
    port: Option<i64>,
    /// This test's turn at the server's fail point, given up once the point is off again.
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

/// Waits for the turn at the fail point of `admin`'s server. The fail point is one per server,
/// and the tests of this binary share a server: one test at a time may have it on, otherwise
/// one would switch another's fault off, or count its firings. Tests on servers of their own
/// never wait for each other.
async fn fail_point_turn(admin: &Database) -> (tokio::sync::OwnedMutexGuard<()>, Option<i64>) {
    type Turns = std::collections::HashMap<String, std::sync::Arc<tokio::sync::Mutex<()>>>;
    static TURNS: std::sync::OnceLock<std::sync::Mutex<Turns>> = std::sync::OnceLock::new();
    // The server's command line (its port and data directory) tells one server from another.
    let options = admin
        .run_command(mongodb::bson::doc! { "getCmdLineOpts": 1 })
        .await
        .expect("getCmdLineOpts");
    let server = format!("{:?}", options.get("argv"));
    let port = options
        .get_document("parsed")
        .and_then(|p| p.get_document("net"))
        .ok()
        .and_then(|net| match net.get("port") {
            Some(mongodb::bson::Bson::Int32(p)) => Some(i64::from(*p)),
            Some(mongodb::bson::Bson::Int64(p)) => Some(*p),
            _ => None,
        });
    let turn = TURNS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(server)
        .or_default()
        .clone();
    (turn.lock_owned().await, port)
}

/// Turns the `failCommand` fail point on with `mode` and `data`, through `admin`.
pub async fn fail_point(
    admin: &Database,
    mode: impl Into<mongodb::bson::Bson>,
    data: mongodb::bson::Document,
) -> FailPoint {
    let (turn, port) = fail_point_turn(admin).await;
    let reply = configure(admin, mode.into(), data.clone()).await;
    FailPoint {
        admin: admin.clone(),
        data,
        entered_before: times_entered(&reply),
        on: true,
        port,
        _turn: turn,
    }
}

/// Sets the `failCommand` fail point to `mode` and `data`; the server's answer.
async fn configure(
    admin: &Database,
    mode: mongodb::bson::Bson,
    data: mongodb::bson::Document,
) -> mongodb::bson::Document {
    admin
        .run_command(mongodb::bson::doc! {
            "configureFailPoint": "failCommand",
            "mode": mode,
            "data": data,
        })
        .await
        .expect("configureFailPoint (the server runs with enableTestCommands=1)")
}

/// Arms a fail point again, with the same fault, from anywhere in its test (see
/// [`FailPoint::rearm`]).
#[derive(Clone)]
pub struct Rearm {
    admin: Database,
    data: mongodb::bson::Document,
}

impl Rearm {
    /// Sets the point's mode to `mode` (its firings go on being counted).
    pub async fn with(&self, mode: impl Into<mongodb::bson::Bson>) {
        configure(&self.admin, mode.into(), self.data.clone()).await;
    }
}

/// The command that switches the fail point off.
fn fail_point_off() -> mongodb::bson::Document {
    mongodb::bson::doc! { "configureFailPoint": "failCommand", "mode": "off" }
}

impl FailPoint {
    /// A handle that arms this point again while it is on: for faults at chosen moments
    /// (`{ "times": 1 }` where the test decides) rather than at random ones.
    pub fn rearm(&self) -> Rearm {
        Rearm {
            admin: self.admin.clone(),
            data: self.data.clone(),
        }
    }

    /// Turns the fail point off; returns how many times it fired while it was on.
    pub async fn off(mut self) -> i64 {
        self.on = false;
        let reply = self
            .admin
            .run_command(fail_point_off())
            .await
            .expect("configureFailPoint off");
        times_entered(&reply) - self.entered_before
    }

    /// Turns the fail point off and asserts that it fired; returns how many times.
    pub async fn fired(self) -> i64 {
        let fired = self.off().await;
        assert!(
            fired > 0,
            "the fail point never fired: the fault was not exercised"
        );
        fired
    }
}

impl Drop for FailPoint {
    fn drop(&mut self) {
        if !self.on {
            return;
        }
        // A test that panicked with the point on: switch it off on its server, from a runtime
        // of its own, since this one may be unwinding.
        let Some(port) = self.port else {
            return;
        };
        let uri = format!("mongodb://127.0.0.1:{port}/?directConnection=true");
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                if let Ok(client) = Client::with_uri_str(&uri).await {
                    let _ = client.database("admin").run_command(fail_point_off()).await;
                }
            });
        })
        .join();
    }
}

/// `configureFailPoint` answers with how many times the fail point fired since the server
/// started.
fn times_entered(reply: &mongodb::bson::Document) -> i64 {
    match reply.get("count") {
        Some(mongodb::bson::Bson::Int32(n)) => i64::from(*n),
        Some(mongodb::bson::Bson::Int64(n)) => *n,
        other => panic!("configureFailPoint answered without a count: {other:?}"),
    }
}

/// Sleeps in short steps until `done` holds or `limit` passes; returns whether it held (a wait
/// for background work to land, instead of a sleep of a guessed length).
pub async fn wait_until(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A standalone `mongod` of the test's own (no replica set, so no transactions), stopped when
/// dropped.
pub async fn standalone_server() -> sequence_testkit::TestServer {
    tokio::task::spawn_blocking(|| {
        sequence_testkit::TestServer::start(sequence_testkit::ServerOptions::default().standalone())
    })
    .await
    .unwrap()
    .expect("a standalone mongod starts")
}

/// `db`'s `counters` collection (the default name), as plain documents.
pub fn counters(db: &Database) -> mongodb::Collection<mongodb::bson::Document> {
    db.collection("counters")
}

/// The last value issued by the counter `name` in `db`'s `counters` collection (default
/// layout), or `None` if it does not exist.
pub async fn counter(db: &Database, name: &str) -> Option<i64> {
    counters(db)
        .find_one(mongodb::bson::doc! { "_id": name })
        .await
        .expect("the counter can be read")
        .map(|d| match d.get("seq") {
            Some(mongodb::bson::Bson::Int64(n)) => *n,
            Some(mongodb::bson::Bson::Int32(n)) => i64::from(*n),
            other => panic!("counter `{name}` holds {other:?}"),
        })
}

/// Waits for `tasks`, each returning the IDs it was given (a `Vec`, or `[id]` for one), and
/// asserts that no ID was given twice; returns them all.
pub async fn distinct_ids<I, T>(
    tasks: Vec<tokio::task::JoinHandle<I>>,
) -> std::collections::HashSet<T>
where
    I: IntoIterator<Item = T>,
    T: std::hash::Hash + Eq + std::fmt::Debug,
{
    let mut all = std::collections::HashSet::new();
    for task in tasks {
        for id in task.await.expect("the task ran to its end") {
            assert!(!all.contains(&id), "ID {id:?} was issued twice");
            all.insert(id);
        }
    }
    all
}

/// Options of a sequence named `name`, every other option at its default.
pub fn opts(name: &str) -> mongo_sequence::options::SequenceOptionsBuilder {
    mongo_sequence::SequenceOptions::builder(name)
}

/// Sequence `job` scoped by `queue`, in this crate's layout (collection `counters`) and in
/// mongoose-sequence's (`mongoose_counters`).
pub fn job_by_queue_in_both_layouts() -> [(
    mongo_sequence::options::Layout,
    mongo_sequence::SequenceOptions,
); 2] {
    use mongo_sequence::options::Layout;
    [
        (Layout::Default, "counters"),
        (Layout::MongooseSequence, "mongoose_counters"),
    ]
    .map(|(layout, counters)| {
        let options = opts("job")
            .scope(["queue"])
            .layout(layout)
            .counters(counters)
            .build();
        (layout, options)
    })
}

/// With `unique = "proxy"`: every document of `docs` has its claim in `claims` (its key the
/// document's `number`, its `doc` the document's `_id`) and every claim its document. Returns
/// the documents. `label` starts the messages.
pub async fn claims_match(
    label: &str,
    docs: &mongodb::Collection<mongodb::bson::Document>,
    claims: &mongodb::Collection<mongodb::bson::Document>,
) -> Vec<mongodb::bson::Document> {
    let docs = all(docs).await;
    let claims = all(claims).await;
    assert_eq!(claims.len(), docs.len(), "{label}: one claim per document");
    for d in &docs {
        let number = d.get_i64("number").unwrap();
        let claim = claims
            .iter()
            .find(|c| c.get_i64("_id").ok() == Some(number))
            .unwrap_or_else(|| panic!("{label}: no claim of {number}"));
        assert_eq!(
            claim.get("doc"),
            d.get("_id"),
            "{label}: the claim of {number}"
        );
    }
    docs
}

/// The most values a process's cache of a sequence with `batch` holds at a time: the range in
/// use and the next one, each a batch, or from `Batch::AHEAD_FROM` on up to
/// `Batch::MAX_AHEAD` batches each (a busy cache reserving ahead).
pub fn held_at_most(batch: u64) -> u64 {
    use mongo_sequence::Batch;
    if batch <= 1 {
        0
    } else if batch >= Batch::AHEAD_FROM {
        2 * Batch::MAX_AHEAD * batch
    } else {
        2 * batch
    }
}

/// The one snapshot entry of the sequence `name` whose counters are at `location`, once no
/// refill of its cache is in flight.
pub async fn settled(
    location: &str,
    name: &str,
) -> mongo_sequence::observability::SequenceSnapshot {
    for _ in 0..1000 {
        let snapshot = mongo_sequence::observability::snapshot();
        let found: Vec<_> = snapshot
            .named(name)
            .filter(|s| s.location == location)
            .cloned()
            .collect();
        assert_eq!(found.len(), 1, "{name} at {location}: {found:?}");
        if !found[0].cache.refilling {
            return found.into_iter().next().unwrap();
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the refill of {name} at {location} never landed");
}

/// The values of the sequence `name` (counters in `db`) that this process reserved and that no
/// document can hold, however its calls went: those its cache holds now (once no refill is in
/// flight) and those it dropped (`Stats::wasted`). Checks that the cache holds no more than
/// [`held_at_most`] of `batch`.
pub async fn held_by_cache(db: &Database, name: &str, batch: u64) -> u64 {
    let entry = settled(&format!("{}.counters", db.name()), name).await;
    assert!(
        entry.cache.cached <= held_at_most(batch),
        "{name}: the cache holds {} values, more than {} at batch {batch}",
        entry.cache.cached,
        held_at_most(batch)
    );
    entry.cache.cached + entry.stats.wasted
}
