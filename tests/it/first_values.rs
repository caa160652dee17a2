//! The first values of scope values taken and inserted in rounds: the first inserts of many
//! tenants waiting together share their counter update and their insert, a document refused on
//! its own fails alone, so does a tenant whose counter cannot give a value, a number that meets
//! a stored document skips past it, and a standalone server works the same. A round of several
//! counters leaves a counter that cannot give values as it was.

use crate::common;

use futures_util::TryStreamExt;
use mongo_sequence::id::{Bounds, CounterKey};
use mongo_sequence::options::Layout;
use mongo_sequence::store::{CounterStore, MongoStore, Reservation};
use mongo_sequence::{Error, Scope, SequentialId};
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::IndexOptions;
use mongodb::{Collection, IndexModel};
use sequence_testkit::unique_db_name;
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

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

/// Inserts `doc` from a task of its own, started at once.
fn spawn_insert(coll: &Collection<Ticket>, mut doc: Ticket) -> JoinHandle<Result<i64, Error>> {
    let coll = coll.clone();
    tokio::spawn(async move { doc.insert_with_id(&coll).await })
}

/// Inserts `docs` from a task each, all at once; the results in order.
async fn insert_at_once(coll: &Collection<Ticket>, docs: Vec<Ticket>) -> Vec<Result<i64, Error>> {
    let tasks: Vec<_> = docs
        .into_iter()
        .map(|doc| spawn_insert(coll, doc))
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
    let inserts = commands.sent_on("insert", "tickets").len();
    assert!(
        (1..48).contains(&inserts),
        "{inserts} inserts for 48 first tickets"
    );
    assert!(
        !several_counters_at_once(&commands).is_empty(),
        "no command moved several counters at once"
    );
}

/// The commands that inserted or updated several counters at once.
fn several_counters_at_once(commands: &common::Commands) -> Vec<Document> {
    let statements = |c: &Document, list: &str| c.get_array(list).map_or(0, Vec::len);
    (commands.sent_on("insert", "counters").into_iter())
        .filter(|c| statements(c, "documents") > 1)
        .chain(
            (commands.sent_on("update", "counters").into_iter())
                .filter(|c| statements(c, "updates") > 1),
        )
        .collect()
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
/// together met the exhausted one. The fail point holds the counter updates of the first two
/// rounds (both rounds a process runs at once), so that the tickets started after them, the
/// exhausted one among them, all wait and go in one round.
///
/// Whether `full`'s ticket joins the round of the others or arrives after it depends on when
/// the machine runs its task; the outcome is checked on every attempt, and up to three
/// attempts are made until one shows `full` in a round with other counters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_tenant_fails_alone_among_first_values() {
    let mut seen = Vec::new();
    for _ in 0..3 {
        match exhausted_among_first_values().await {
            Ok(()) => return,
            Err(marks) => seen.push(marks),
        }
    }
    panic!("`full` was in no round of several counters in 3 attempts: {seen:?}");
}

/// One attempt of [`an_exhausted_tenant_fails_alone_among_first_values`]: asserts the
/// outcome; `Err` with the round marks sent when `full` was not in a round of several
/// counters.
async fn exhausted_among_first_values() -> Result<(), String> {
    let name = unique_db_name("first_values_exhausted");
    let (client, commands) = common::monitored_client(&name).await;
    let coll = tickets(&client.database(&name)).await;
    // `full`'s counter at its `max`, copied from another database where it was numbered: this
    // process has never numbered `full` here, so its first ticket is a first value like the
    // others' (numbered here, it would have a cache of its own and go alone).
    let elsewhere = common::client()
        .await
        .database(&format!("{name}_elsewhere"));
    let full = Ticket::sequence(&tickets(&elsewhere).await)
        .in_scope(Scope::new().with("tenant", "full"))
        .unwrap();
    assert_eq!(full.reserve(5).await.unwrap().last(), 5);
    let counters = elsewhere.collection::<Document>("counters");
    let counter = counters
        .find_one(doc! {})
        .await
        .unwrap()
        .expect("full's counter");
    // How the statements of a round name `full`'s counter (an update by its `_id` alone).
    let full_id = counter.get("_id").expect("an `_id`").to_string();
    (client.database(&name).collection::<Document>("counters"))
        .insert_one(counter)
        .await
        .unwrap();
    elsewhere.drop().await.unwrap();
    assert_eq!(ticket("lead").insert_with_id(&coll).await.unwrap(), 1);
    let fault = common::fail_point(
        &client.database("admin"),
        doc! { "times": 2 },
        doc! {
            "failCommands": ["findAndModify", "insert", "update"],
            "blockConnection": true,
            // Long enough for the 25 tickets started meanwhile to queue, on a loaded machine.
            "blockTimeMS": 3000,
            "appName": &name,
        },
    )
    .await;
    let mut held = Vec::new();
    for i in 0..2 {
        held.push(spawn_insert(&coll, ticket(&format!("h{i}"))));
        let started = common::wait_until(std::time::Duration::from_secs(10), || {
            counter_commands(&commands) > i
        });
        assert!(started.await, "round {i} never moved its counter");
    }
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
    for (i, task) in held.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().unwrap(), 1, "held insert {i}");
    }
    assert_eq!(
        fault.off().await,
        2,
        "the fail point held both first rounds"
    );
    assert_eq!(counter_of(&coll, "full").await, Some(5));
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 1 + 2 + 24);
    // `full` went in a round of several counters, which went on without it: a statement of
    // its counter carries the mark of a round that other counters' statements carry too (the
    // round sends the counters it expects missing in an `insert` and the others in an
    // `update`, so `full` may be the only one of its command).
    let sent: Vec<Document> = ["insert", "update"]
        .iter()
        .flat_map(|name| commands.sent_on(name, "counters"))
        .collect();
    let mut marks = Vec::new();
    for command in &sent {
        round_marks(&Bson::Document(command.clone()), &mut marks);
    }
    let full_rounds: Vec<_> = (sent.iter())
        .filter(|c| c.to_string().contains(&full_id))
        .flat_map(|c| {
            let mut of_full = Vec::new();
            round_marks(&Bson::Document(c.clone()), &mut of_full);
            of_full
        })
        .collect();
    let shared =
        (full_rounds.iter()).any(|(round, i)| (marks.iter()).any(|(r, j)| r == round && j != i));
    match shared {
        true => Ok(()),
        false => Err(format!("its marks {full_rounds:?}, all {marks:?}")),
    }
}

/// The marks of the rounds of several counters (`lastRound: { round, i, … }`) in `value`:
/// each round's id and the counter's place in it.
fn round_marks(value: &Bson, found: &mut Vec<(Bson, Bson)>) {
    match value {
        Bson::Document(d) => {
            if let (Some(round @ Bson::ObjectId(_)), Some(i)) = (d.get("round"), d.get("i")) {
                found.push((round.clone(), i.clone()));
            }
            for v in d.values() {
                round_marks(v, found);
            }
        }
        Bson::Array(items) => items.iter().for_each(|v| round_marks(v, found)),
        _ => {}
    }
}

/// How many commands were sent to the counters collection.
fn counter_commands(commands: &common::Commands) -> usize {
    (["findAndModify", "insert", "update"].iter())
        .map(|name| commands.sent_on(name, "counters").len())
        .sum()
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

/// A round of several counters leaves a counter that cannot give its values as it was (a
/// string, a fraction, an array, no counter field, no room left) and that counter gets the
/// error a reservation of it alone gets, while the others of the round are reserved: a new
/// counter from the start, one that exists from where it was. Twice, so that the rounds of
/// this crate's layout (counters found by `_id`) start once by inserting their counters and
/// once by updating them; in mongoose-sequence's layout (found by other fields) they upsert.
#[tokio::test]
async fn a_round_leaves_a_counter_without_room_as_it_was() {
    let db = common::database("round_without_room").await;
    let bounds = Bounds::new(1, 100).unwrap();
    let key = |q: &str| CounterKey::of("job", None, Some(&Scope::new().with("queue", q)));
    let broken: [(&str, Document); 5] = [
        ("string", doc! { "$set": { "seq": "x" } }),
        ("fraction", doc! { "$set": { "seq": 2.5 } }),
        ("array", doc! { "$set": { "seq": [5] } }),
        ("unset", doc! { "$unset": { "seq": "" } }),
        ("full", doc! { "$set": { "seq": 99_i64 } }),
    ];
    for (layout, options) in common::job_by_queue_in_both_layouts() {
        let store = MongoStore::new(&db, &options).unwrap();
        let coll = db.collection::<Document>(&options.counters);
        let find = |q: &str| match layout {
            Layout::MongooseSequence => doc! { "id": "job", "reference_value": { "queue": q } },
            _ => doc! { "_id": key(q).value().clone() },
        };
        for q in ["old"].into_iter().chain(broken.iter().map(|(q, _)| *q)) {
            store.reserve(&key(q), 1, bounds, None).await.unwrap();
        }
        for (q, change) in &broken {
            coll.update_one(find(q), change.clone()).await.unwrap();
        }
        let filter = doc! { "$or": broken.iter().map(|(q, _)| find(q)).collect::<Vec<_>>() };
        let stored = || {
            let all = coll.find(filter.clone()).sort(doc! { "_id": 1 });
            async move {
                all.await
                    .unwrap()
                    .try_collect::<Vec<Document>>()
                    .await
                    .unwrap()
            }
        };
        let before = stored().await;
        assert_eq!(before.len(), broken.len());
        for (round, new) in ["new1", "new2"].into_iter().enumerate() {
            let wanted: Vec<(CounterKey, u64)> = [new, "old"]
                .into_iter()
                .chain(broken.iter().map(|(q, _)| *q))
                .map(|q| (key(q), 3))
                .collect();
            let got = store.reserve_many(&wanted, bounds).await;
            let range = |r: &mongo_sequence::Result<Reservation>| {
                r.as_ref().map(|r| (r.range.first(), r.range.last())).ok()
            };
            let at = format!("{layout:?}, round {round}");
            assert_eq!(range(&got[0]), Some((1, 3)), "{at}: {new}");
            let old = 2 + 3 * round as i64;
            assert_eq!(range(&got[1]), Some((old, old + 2)), "{at}: old");
            for ((q, _), result) in broken.iter().zip(&got[2..]) {
                let alone = store.reserve(&key(q), 3, bounds, None).await;
                match (result, alone) {
                    (Err(Error::Exhausted { .. }), Err(Error::Exhausted { .. })) => {
                        assert_eq!(*q, "full", "{at}");
                    }
                    (
                        Err(Error::CorruptCounter { reason, .. }),
                        Err(Error::CorruptCounter { reason: alone, .. }),
                    ) => assert_eq!(*reason, alone, "{at}: {q}"),
                    (result, alone) => panic!("{at}: {q}: {result:?}, alone {alone:?}"),
                }
            }
            assert_eq!(stored().await, before, "{at}: written");
        }
    }
}
