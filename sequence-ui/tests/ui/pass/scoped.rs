#![deny(warnings)]

use mongo_sequence::{options::Layout, Batch, SequentialId};
use serde::{Deserialize, Serialize};

/// One counter per tenant: `number` restarts at 1 for every tenant (the `_id` is the
/// driver's ObjectId).
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(scope = "tenant")]
pub struct Order {
    #[seq(id)]
    pub number: Option<i64>,
    pub tenant: String,
}

/// One counter per shop, each shop in use with a cache of 25 numbers of its own.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(scope = "shop", batch = 25)]
pub struct ShopOrder {
    #[seq(id)]
    pub number: i64,
    pub shop: String,
}

/// One counter per tenant and year, in mongoose-sequence's counters.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket_seq", scope = ["tenant", "year"], layout = "mongoose_sequence")]
pub struct Ticket {
    #[seq(id)]
    pub ticket_number: u64,
    pub tenant: String,
    pub year: i32,
}

/// An unscoped counter shared with a mongoose-sequence model.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(layout = "mongoose_sequence", batch = 10)]
pub struct User {
    #[serde(rename = "_id")]
    pub id: i64,
}

fn main() {
    assert_eq!(<Order as SequentialId>::SEQUENCE.scope, &["tenant"]);
    let shop = <ShopOrder as SequentialId>::SEQUENCE;
    assert_eq!((shop.scope, shop.batch), (&["shop"][..], Batch::Fixed(25)));
    let ticket = <Ticket as SequentialId>::SEQUENCE;
    assert_eq!(ticket.scope, &["tenant", "year"]);
    assert_eq!(ticket.layout, Layout::MongooseSequence);
    assert_eq!(
        <User as SequentialId>::SEQUENCE.layout,
        Layout::MongooseSequence
    );
}
