//! Counters in the conventions of other libraries and of one's own, against a real server: the
//! documents this crate writes are the ones those libraries read (their fields, types and
//! unique index, in their key order), the documents they wrote are read and continued, and a
//! second document for one counter is refused by name. (The libraries themselves run beside
//! this crate in the interop suite; these tests check this crate's side of the convention.)

use crate::common;

use std::sync::Arc;

use futures_util::TryStreamExt;
use mongo_sequence::clock::ManualClock;
use mongo_sequence::jiff::civil::date;
use mongo_sequence::{Error, SequentialId};
use mongodb::bson::{doc, Bson, Document};
use mongodb::{Collection, Database};
use serde::{Deserialize, Serialize};

/// The documents of `name` in `db`, without their `_id`, sorted by their text.
async fn documents(db: &Database, name: &str) -> Vec<Document> {
    let mut docs: Vec<Document> = db
        .collection::<Document>(name)
        .find(doc! {})
        .projection(doc! { "_id": 0 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.sort_by_key(ToString::to_string);
    docs
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "Ticket", layout = "typegoose", start = 0)]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

/// typegoose's counter: `{ field, modelName, count: Int64 }` in `identitycounters`, its unique
/// index `{ field: 1, modelName: 1 }` under typegoose's name; a counter typegoose created
/// (`count = startAt - incrementBy = -1`) is continued, from 0 as typegoose numbers.
#[tokio::test]
async fn typegoose_counters_are_typegooses() {
    let db = common::database("conv_typegoose").await;
    let tickets = db.collection::<Ticket>("tickets");
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(Ticket { id: -1 }.insert_with_id(&tickets).await.unwrap());
    }
    assert_eq!(ids, [0, 1, 2], "typegoose's numbers, from `startAt` 0");
    assert_eq!(
        documents(&db, "identitycounters").await,
        [doc! { "field": "_id", "modelName": "Ticket", "count": Bson::Int64(2) }]
    );
    assert_eq!(
        common::unique_indexes(&db.collection::<Document>("identitycounters")).await,
        [(
            "field_1_modelName_1".to_owned(),
            doc! { "field": 1, "modelName": 1 }
        )]
    );

    // A counter typegoose created on its first save, before this crate took any number.
    let db = common::database("conv_typegoose_theirs").await;
    db.collection::<Document>("identitycounters")
        .insert_one(doc! { "field": "_id", "modelName": "Ticket", "count": Bson::Int64(-1) })
        .await
        .unwrap();
    let tickets = db.collection::<Ticket>("tickets");
    assert_eq!(Ticket { id: -1 }.insert_with_id(&tickets).await.unwrap(), 0);
    assert_eq!(Ticket::sequence(&tickets).current().await.unwrap(), Some(0));
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "Ticket", layout = "mongoose_auto_increment", start = 0)]
struct AutoTicket {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "Order", layout = "mongoose_auto_increment", scope = "tenant")]
struct AutoOrder {
    #[seq(id)]
    number: Option<i64>,
    tenant: String,
}

/// mongoose-auto-increment's counters: the original plugin's (no `groupingField`) is continued
/// and gains the fork's `groupingField: ""`, a new one has it from the start, a group's holds
/// the group's value, and the fork's unique index is built in its key order.
#[tokio::test]
async fn mongoose_auto_increment_counters_serve_the_original_and_the_fork() {
    let db = common::database("conv_autoinc").await;
    let counters = db.collection::<Document>("identitycounters");
    // What the original plugin creates when it is applied: no `groupingField`.
    counters
        .insert_one(doc! { "model": "Ticket", "field": "_id", "count": 4, "__v": 0 })
        .await
        .unwrap();
    let tickets = db.collection::<AutoTicket>("tickets");
    assert_eq!(
        AutoTicket { id: -1 }
            .insert_with_id(&tickets)
            .await
            .unwrap(),
        5
    );
    let orders = db.collection::<AutoOrder>("orders");
    for (tenant, want) in [("acme", 1), ("acme", 2), ("globex", 1)] {
        let mut order = AutoOrder {
            number: None,
            tenant: tenant.into(),
        };
        assert_eq!(order.insert_with_id(&orders).await.unwrap(), want);
    }
    assert_eq!(
        documents(&db, "identitycounters").await,
        [
            doc! { "field": "number", "groupingField": "acme", "model": "Order", "count": Bson::Int64(2) },
            doc! { "field": "number", "groupingField": "globex", "model": "Order", "count": Bson::Int64(1) },
            doc! { "model": "Ticket", "field": "_id", "count": Bson::Int64(5), "__v": 0, "groupingField": "" },
        ]
    );
    assert_eq!(
        common::unique_indexes(&db.collection::<Document>("identitycounters")).await,
        [(
            "field_1_groupingField_1_model_1".to_owned(),
            doc! { "field": 1, "groupingField": 1, "model": 1 }
        )]
    );
}

/// Two documents for one counter (the plugins find, then create theirs: a race makes two) are
/// refused with an error naming both, before anything is written; so is a collection whose
/// duplicates keep the unique index from being built.
#[tokio::test]
async fn a_second_document_of_one_counter_is_refused_by_name() {
    let db = common::database("conv_twice").await;
    let counters = db.collection::<Document>("identitycounters");
    counters
        .insert_many([
            doc! { "_id": 1, "model": "Ticket", "field": "_id", "count": 3 },
            doc! { "_id": 2, "model": "Ticket", "field": "_id", "groupingField": "", "count": 0 },
        ])
        .await
        .unwrap();
    let tickets = db.collection::<AutoTicket>("tickets");
    let mut ticket = AutoTicket { id: -1 };
    match ticket.insert_with_id(&tickets).await {
        Err(Error::DuplicateCounters { ids, .. }) => {
            assert_eq!(ids, [Bson::Int32(1), Bson::Int32(2)]);
        }
        other => panic!("expected DuplicateCounters, got {other:?}"),
    }

    let db = common::database("conv_twice_index").await;
    let counters = db.collection::<Document>("identitycounters");
    counters
        .insert_many([
            doc! { "_id": "a", "field": "_id", "modelName": "Ticket", "count": Bson::Int64(-1) },
            doc! { "_id": "b", "field": "_id", "modelName": "Ticket", "count": Bson::Int64(-1) },
        ])
        .await
        .unwrap();
    let tickets = db.collection::<Ticket>("tickets");
    let e = Ticket { id: -1 }
        .insert_with_id(&tickets)
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(&e, Error::DuplicateCounters { ids, .. }
            if ids == &[Bson::String("a".into()), Bson::String("b".into())]),
        "{e:?}"
    );
    assert!(
        text.contains("keep the one with the higher count"),
        "{text}"
    );
    for doc in documents(&db, "identitycounters").await {
        assert_eq!(doc.get_i64("count"), Ok(-1), "nothing written");
    }
    assert_eq!(tickets.count_documents(doc! {}).await.unwrap(), 0);
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    counters = "ids",
    field = "count",
    prefix = "YYMMDD",
    filter(prefix = period as number)
)]
struct Daily {
    #[serde(rename = "_id")]
    id: String,
}

/// Seed 001's daily counters: `{ prefix: 251125, count }` in `ids`, found by the number of the
/// day, with a unique index on `prefix`; a counter the seed wrote is continued; old days are
/// counted and purged by their number.
#[tokio::test]
async fn seed_001s_daily_counters_are_found_by_the_number_of_the_day() {
    let db = common::database("conv_seed001").await;
    // The seed took 7 numbers on Nov 25.
    db.collection::<Document>("ids")
        .insert_one(doc! { "prefix": 251125, "count": 7 })
        .await
        .unwrap();
    let daily: Collection<Daily> = db.collection("daily");
    let clock = Arc::new(ManualClock::new("2025-11-25T12:00:00Z".parse().unwrap()));
    let seq = Daily::sequence(&daily);
    seq.set_clock(clock.clone());
    let take = || async {
        Daily { id: String::new() }
            .insert_with_id(&daily)
            .await
            .unwrap()
    };
    assert_eq!(take().await, "251125000008");
    clock.set("2025-11-26T12:00:00Z".parse().unwrap());
    assert_eq!(take().await, "251126000001");
    assert_eq!(take().await, "251126000002");
    seq.use_system_clock();
    let mut counters = documents(&db, "ids").await;
    counters.sort_by_key(|d| d.get_i32("prefix").unwrap_or_default());
    assert_eq!(
        counters,
        [
            doc! { "prefix": 251125, "count": Bson::Int64(8) },
            doc! { "prefix": 251126, "count": Bson::Int64(2) },
        ]
    );
    assert_eq!(
        common::unique_indexes(&db.collection::<Document>("ids")).await,
        [("prefix_1".to_owned(), doc! { "prefix": 1 })]
    );
    seq.set_clock(clock.clone());
    assert_eq!(
        seq.count_periods_before(date(2025, 11, 26)).await.unwrap(),
        1
    );
    assert_eq!(
        seq.purge_periods_before(date(2025, 11, 26)).await.unwrap(),
        1
    );
    assert_eq!(
        documents(&db, "ids").await,
        [doc! { "prefix": 251126, "count": Bson::Int64(2) }]
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(counters = "idcounters", field = "c", filter(f = id_field, m = "Ticket"))]
struct ReworkedTicket {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket.id", counters = "mongoengine.counters", field = "next")]
struct PyTicket {
    #[serde(rename = "_id")]
    id: i64,
}

/// mongoose-auto-increment-reworked's `{ f, m, c }` (a filter, with its unique index `{ f: 1,
/// m: 1 }`) and MongoEngine's `{ _id: "ticket.id", next }` (a name with a dot) are continued
/// from what the libraries stored.
#[tokio::test]
async fn filters_and_dotted_names_reach_reworked_and_mongoengine() {
    let db = common::database("conv_reworked").await;
    db.collection::<Document>("idcounters")
        .insert_one(doc! { "f": "_id", "m": "Ticket", "c": 3 })
        .await
        .unwrap();
    let tickets = db.collection::<ReworkedTicket>("tickets");
    assert_eq!(
        ReworkedTicket { id: 0 }
            .insert_with_id(&tickets)
            .await
            .unwrap(),
        4
    );
    assert_eq!(
        documents(&db, "idcounters").await,
        [doc! { "f": "_id", "m": "Ticket", "c": Bson::Int64(4) }]
    );
    assert_eq!(
        common::unique_indexes(&db.collection::<Document>("idcounters")).await,
        [("f_1_m_1".to_owned(), doc! { "f": 1, "m": 1 })]
    );

    let db = common::database("conv_mongoengine").await;
    db.collection::<Document>("mongoengine.counters")
        .insert_one(doc! { "_id": "ticket.id", "next": 3 })
        .await
        .unwrap();
    let tickets = db.collection::<PyTicket>("ticket");
    assert_eq!(
        PyTicket { id: 0 }.insert_with_id(&tickets).await.unwrap(),
        4
    );
    assert_eq!(
        documents(&db, "mongoengine.counters").await,
        [doc! { "next": Bson::Int64(4) }]
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "Ticket", layout = "typegoose", start = 0, batch = 10)]
struct CachedTicket {
    #[serde(rename = "_id")]
    id: i64,
}

/// The rest of the crate reads and moves a layout's counter as it does its own: a batch given
/// back on `release`, `sync_counters` over imported documents.
#[tokio::test]
async fn batches_release_and_sync_work_on_a_layouts_counter() {
    let db = common::database("conv_rest").await;
    let tickets = db.collection::<CachedTicket>("tickets");
    for want in 0..3 {
        let id = CachedTicket { id: -1 }
            .insert_with_id(&tickets)
            .await
            .unwrap();
        assert_eq!(id, want);
    }
    let seq = CachedTicket::sequence(&tickets);
    assert!(seq.release().await.unwrap() > 0);
    assert_eq!(seq.current().await.unwrap(), Some(2));
    db.collection::<Document>("tickets")
        .insert_many((100..=120_i64).map(|n| doc! { "_id": n }))
        .await
        .unwrap();
    let report = CachedTicket::sync_counters(&tickets).await.unwrap();
    assert_eq!(
        (report.counters.len(), report.counters[0].new),
        (1, 120),
        "{report:?}"
    );
    assert_eq!(
        documents(&db, "identitycounters").await,
        [doc! { "field": "_id", "modelName": "Ticket", "count": Bson::Int64(120) }]
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "Invoice",
    layout = "mongoose_auto_increment",
    start = 0,
    gapless
)]
struct AutoInvoice {
    #[serde(rename = "_id")]
    id: i64,
    customer: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "Member", layout = "typegoose", start = 0, batch = 5)]
struct Member {
    #[serde(rename = "_id")]
    id: i64,
    email: String,
}

/// Gapless inserts, skip-ahead over imported documents, `upsert_with_id` and the snapshot on
/// the counters of the layouts, as on this crate's own.
#[tokio::test]
async fn gapless_skip_ahead_upsert_and_snapshot_work_on_a_layouts_counter() {
    let db = common::database("conv_parts").await;
    let invoices = db.collection::<AutoInvoice>("invoices");
    for want in 0..3 {
        let mut invoice = AutoInvoice {
            id: -1,
            customer: "acme".into(),
        };
        assert_eq!(invoice.insert_with_id(&invoices).await.unwrap(), want);
    }
    assert_eq!(
        documents(&db, "identitycounters").await,
        [doc! { "count": Bson::Int64(2), "field": "_id", "groupingField": "", "model": "Invoice" }]
    );

    // Documents imported with numbers the counter has not reached yet: skipped.
    let members = db.collection::<Member>("members");
    db.collection::<Document>("members")
        .insert_many((0..=6_i64).map(|n| doc! { "_id": n, "email": format!("old{n}@example.com") }))
        .await
        .unwrap();
    let mut member = Member {
        id: -1,
        email: "new@example.com".into(),
    };
    // Past the stored 0..=6: 7, unless the cache's prefetched range was given up meanwhile
    // (it landed below the stored IDs), which skips at most what the cache held.
    let first = member.insert_with_id(&members).await.unwrap();
    assert!((7..=6 + 2 * 5).contains(&first), "{first}");
    let seq = Member::sequence(&members);
    // Once, or again when the cache's prefetched range landed below the stored IDs meanwhile.
    assert!(seq.stats().skipped_ahead >= 1, "{:?}", seq.stats());

    // An upsert takes a number only when it inserts.
    let filter = doc! { "email": "upserted@example.com" };
    let mut upserted = Member {
        id: -1,
        email: "upserted@example.com".into(),
    };
    let id = upserted
        .upsert_with_id(&members, filter.clone())
        .await
        .unwrap();
    // Past the imported 0..=6 and not the insert's; not necessarily above it: the skip-ahead
    // may have taken a range past the cache's prefetched one, whose numbers come next.
    assert!(id > 6 && id != first, "{id} (the insert's {first})");
    let again = Member {
        id: -1,
        email: "upserted@example.com".into(),
    }
    .upsert_with_id(&members, filter)
    .await
    .unwrap();
    assert_eq!(again, id, "the stored document keeps its number");

    let snapshot = mongo_sequence::observability::snapshot();
    let entry = snapshot
        .sequences
        .iter()
        .find(|s| s.sequence == "Member" && s.location.ends_with(".identitycounters"))
        .expect("the typegoose sequence in the snapshot");
    assert!(entry.stats.skipped_ahead >= 1, "{entry:?}");
    assert!(entry.cache.cached > 0, "{entry:?}");
    let counters = documents(&db, "identitycounters").await;
    let member_counter = counters
        .iter()
        .find(|d| d.get_str("modelName") == Ok("Member"))
        .expect("typegoose's counter");
    assert!(member_counter.get_i64("count").unwrap() >= id);
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "Ticket", layout = "typegoose")]
struct TicketFromOne {
    #[serde(rename = "_id")]
    id: i64,
}

/// A counter typegoose created (at -1) read by a model that numbers from 1: the error says to
/// set `start = 0`, not that the counter is corrupt, and nothing is written.
#[tokio::test]
async fn a_typegoose_counter_at_minus_one_asks_for_start_zero() {
    let db = common::database("conv_start_zero").await;
    let counters = db.collection::<Document>("identitycounters");
    let node = doc! { "field": "_id", "modelName": "Ticket", "count": -1_i64 };
    counters.insert_one(node.clone()).await.unwrap();
    let err = TicketFromOne { id: 0 }
        .insert_with_id(&db.collection("tickets"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "invalid configuration of `start`: counter `Ticket` in \
             `{}.identitycounters` holds -1, where @typegoose/auto-increment creates its \
             counters: it numbers from 0; set `start = 0` (the counter is not corrupt)",
            db.name()
        )
    );
    let stored: Vec<Document> = common::all(&counters).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].get_i64("count"), Ok(-1), "nothing written");
}
