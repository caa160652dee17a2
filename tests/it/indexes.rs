//! The indexes a model needs, created on request (`ensure_indexes`), and the warning of the
//! first insert into a collection that lacks the unique index of its ID field, against a real
//! server.

use crate::common;

use std::io::Write;
use std::sync::{Mutex, OnceLock};

use mongo_sequence::{Error, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::options::IndexOptions;
use mongodb::{Collection, IndexModel};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order", scope = "tenant")]
struct Order {
    #[seq(id)]
    number: Option<i64>,
    tenant: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "Ticket", layout = "typegoose", start = 0)]
struct Ticket {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

/// The keys of the unique indexes of `coll`.
async fn unique_indexes<T: Send + Sync>(coll: &Collection<T>) -> Vec<Document> {
    common::unique_indexes(coll)
        .await
        .into_iter()
        .map(|(_, keys)| keys)
        .collect()
}

/// A scoped model needs `{ tenant: 1, number: 1 }` unique; a typegoose model its counters'
/// index. `ensure_indexes` creates them once, then finds them.
#[tokio::test]
async fn ensure_indexes_creates_what_the_model_needs_once() {
    let db = common::database("indexes").await;
    let orders = db.collection::<Order>("orders");
    let report = Order::ensure_indexes(&orders).await.unwrap();
    assert_eq!(report.indexes.len(), 1, "{report:?}");
    let index = &report.indexes[0];
    assert_eq!(index.keys, doc! { "tenant": 1, "number": 1 });
    assert!(index.unique && index.created);
    assert_eq!(index.namespace, format!("{}.orders", db.name()));
    assert_eq!(
        unique_indexes(&orders).await,
        [doc! { "tenant": 1, "number": 1 }]
    );
    let again = Order::ensure_indexes(&orders).await.unwrap();
    assert_eq!(again.created().count(), 0, "idempotent: {again:?}");

    // With the index, a number stored by another writer is detected and skipped.
    db.collection::<Document>("orders")
        .insert_one(doc! { "tenant": "acme", "number": 1_i64 })
        .await
        .unwrap();
    let mut order = Order {
        number: None,
        tenant: "acme".into(),
    };
    assert_eq!(order.insert_with_id(&orders).await.unwrap(), 2);

    let tickets = db.collection::<Ticket>("tickets");
    let report = Ticket::ensure_indexes(&tickets).await.unwrap();
    let created: Vec<_> = report.created().map(|i| i.keys.clone()).collect();
    assert_eq!(created, [doc! { "field": 1, "modelName": 1 }]);
    assert_eq!(
        unique_indexes(&db.collection::<Document>("identitycounters")).await,
        [doc! { "field": 1, "modelName": 1 }]
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "shipment", scope = "tenant")]
struct Shipment {
    #[seq(id)]
    number: Option<i64>,
    tenant: String,
}

/// An index of the needed keys without `unique` is left as it is, and the unique one made
/// beside it; documents that already break the uniqueness are a conflict, and nothing is made.
#[tokio::test]
async fn a_non_unique_index_is_kept_and_duplicates_are_a_conflict() {
    let db = common::database("indexes_conflict").await;
    let shipments = db.collection::<Shipment>("shipments");
    shipments
        .create_index(
            IndexModel::builder()
                .keys(doc! { "tenant": 1, "number": 1 })
                .options(IndexOptions::builder().name("by_tenant".to_owned()).build())
                .build(),
        )
        .await
        .unwrap();
    let raw = db.collection::<Document>("shipments");
    raw.insert_many([
        doc! { "tenant": "acme", "number": 7_i64 },
        doc! { "tenant": "acme", "number": 7_i64 },
    ])
    .await
    .unwrap();
    match Shipment::ensure_indexes(&shipments).await {
        Err(e @ Error::IndexConflict { .. }) => {
            assert!(
                e.to_string()
                    .contains("two documents already hold the same values"),
                "{e}"
            );
        }
        other => panic!("expected IndexConflict, got {other:?}"),
    }
    assert_eq!(unique_indexes(&shipments).await, Vec::<Document>::new());

    raw.delete_one(doc! { "number": 7_i64 }).await.unwrap();
    let report = Shipment::ensure_indexes(&shipments).await.unwrap();
    assert_eq!(report.created().count(), 1, "{report:?}");
    assert_eq!(
        unique_indexes(&shipments).await,
        [doc! { "tenant": 1, "number": 1 }]
    );
    let again = Shipment::ensure_indexes(&shipments).await.unwrap();
    assert_eq!(
        again.created().count(),
        0,
        "the unique one is found: {again:?}"
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "parcel", scope = "tenant")]
struct Parcel {
    #[seq(id)]
    number: Option<i64>,
    tenant: String,
}

/// Every warning of this test binary, as a `fmt` subscriber writes them.
///
/// The subscriber is the process's global one, installed on first use. A subscriber set for
/// one thread only (`set_default`) can miss an event: while it is the only one set, a callsite
/// first reached on another thread caches the interest of that thread, which has none, and
/// stays disabled everywhere. Tests read only the lines of their own database.
fn warnings() -> &'static Mutex<Vec<u8>> {
    #[derive(Clone, Copy)]
    struct Captured(&'static Mutex<Vec<u8>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    static WARNINGS: OnceLock<&'static Mutex<Vec<u8>>> = OnceLock::new();
    WARNINGS.get_or_init(|| {
        let buffer: &'static Mutex<Vec<u8>> = Box::leak(Box::default());
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || Captured(buffer))
            .with_ansi(false)
            .with_max_level(tracing::Level::WARN)
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other test of this binary sets a global subscriber");
        tracing::callsite::rebuild_interest_cache();
        buffer
    })
}

/// The first insert into a collection without the needed unique index warns, naming it, and
/// inserts; the next ones do not warn again.
#[tokio::test]
async fn the_first_insert_without_the_needed_index_warns_once() {
    let db = common::database("indexes_warn").await;
    let parcels = db.collection::<Parcel>("parcels");
    let captured = warnings();
    for _ in 0..3 {
        let mut parcel = Parcel {
            number: None,
            tenant: "acme".into(),
        };
        parcel.insert_with_id(&parcels).await.unwrap();
    }
    let text = String::from_utf8(captured.lock().unwrap().clone()).unwrap();
    let ours = format!("collection={}", parcels.namespace());
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Unique index missing") && l.contains(&ours))
        .collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(
        warnings[0].contains(r#"index={ "tenant": 1, "number": 1 }"#),
        "{text}"
    );
    assert_eq!(
        parcels.count_documents(doc! {}).await.unwrap(),
        3,
        "the inserts went on"
    );
}
