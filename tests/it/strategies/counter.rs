//! The `counter` strategy with ID types of one's own (`#[derive(IdValue)]` newtypes over a
//! number or a text): issued, stored as their inner values, read back by skip-ahead, and
//! numbered in bulk.

use crate::common;

use mongo_sequence::SequentialId;
use mongodb::bson::{doc, Bson, Document};
use serde::{Deserialize, Serialize};

/// An order number of its own type: a newtype over `i64` with `#[derive(IdValue)]`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, mongo_sequence::IdValue,
)]
#[serde(transparent)]
struct OrderNo(i64);

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "orders", batch = 25)]
struct TypedOrder {
    #[serde(rename = "_id")]
    id: OrderNo,
    total: i64,
}

/// A text ID of its own type, with a prefix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, mongo_sequence::IdValue)]
#[serde(transparent)]
struct TicketNo(String);

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "tickets", prefix = "T-", width = 4)]
struct TypedTicket {
    #[seq(id)]
    number: Option<TicketNo>,
}

/// Newtype IDs work end to end: the inserts return them, the documents store the inner
/// values, skip-ahead reads stored IDs back as the newtype's kind, and bulk inserts number them.
#[tokio::test]
async fn newtype_ids_are_issued_stored_and_read_back() {
    let db = common::database("newtype_ids").await;
    let orders = db.collection::<TypedOrder>("orders");
    let mut first = TypedOrder {
        id: OrderNo(0),
        total: 10,
    };
    let id: OrderNo = first.insert_with_id(&orders).await.unwrap();
    assert_eq!((id, first.id), (OrderNo(1), OrderNo(1)));
    // A document stored by someone else with the next number: the insert skips ahead of it.
    db.collection::<Document>("orders")
        .insert_one(doc! { "_id": 2_i64, "total": 0_i64 })
        .await
        .unwrap();
    TypedOrder::sequence(&orders).release().await.unwrap();
    let mut batch = vec![
        TypedOrder {
            id: OrderNo(0),
            total: 20,
        },
        TypedOrder {
            id: OrderNo(0),
            total: 30,
        },
    ];
    let ids = TypedOrder::insert_many_with_ids(&mut batch, &orders)
        .await
        .unwrap();
    // The range [2, 3] met the stored 2; the documents from it on were numbered again above
    // the counter, which had moved past 3 already.
    assert_eq!(ids, [OrderNo(4), OrderNo(5)]);
    let stored = db
        .collection::<Document>("orders")
        .find_one(doc! { "total": 30_i64 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get("_id"),
        Some(&Bson::Int64(5)),
        "stored as the inner number"
    );

    let tickets = db.collection::<TypedTicket>("tickets");
    let mut ticket = TypedTicket { number: None };
    let number = ticket.insert_with_id(&tickets).await.unwrap();
    assert_eq!(number, TicketNo("T-0001".into()));
    assert_eq!(ticket.number, Some(number));
    let stored = db
        .collection::<Document>("tickets")
        .find_one(doc! {})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_str("number"), Ok("T-0001"));
}
