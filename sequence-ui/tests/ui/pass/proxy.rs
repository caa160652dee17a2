#![deny(warnings)]

use mongo_sequence::options::Unique;
use mongo_sequence::SequentialId;
use mongodb::bson::oid::ObjectId;
use serde::{Deserialize, Serialize};

/// Random numbers in a field that is not `_id`: a proxy collection holds their uniqueness
/// (without it, the random strategy needs `_id`, whose index catches a colliding draw).
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 9, unique = "proxy")]
pub struct Lot {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub oid: Option<ObjectId>,
    #[seq(id)]
    pub number: Option<i64>,
}

/// Counted numbers with a proxy collection of its own name.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "order", batch = 25, unique = "proxy", proxy = "order_numbers")]
pub struct Order {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub oid: Option<ObjectId>,
    #[seq(id)]
    pub number: Option<i64>,
}

fn main() {
    let lot = <Lot as SequentialId>::SEQUENCE;
    assert_eq!((lot.unique, lot.proxy), (Unique::Proxy, None));
    let order = <Order as SequentialId>::SEQUENCE;
    assert_eq!(order.proxy, Some("order_numbers"));
}
