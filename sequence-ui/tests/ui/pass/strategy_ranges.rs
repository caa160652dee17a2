#![deny(warnings)]

use mongo_sequence::{SequentialId, Strategy};
use serde::{Deserialize, Serialize};

/// A bank account with a 12-digit number from one of 1000 counter documents.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "account",
    strategy = "ranges",
    shards = 1000,
    digits = 12,
    batch = 10
)]
pub struct Account {
    #[serde(rename = "_id")]
    pub number: i64,
    pub owner: String,
}

/// An order number from 16 counter documents over `start..=max`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "ranges", shards = 16, start = 1, max = 999_999)]
pub struct Order {
    #[serde(rename = "_id")]
    pub id: Option<u32>,
}

/// Shards that a Node service using mongoose-sequence's layout can read too.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    strategy = "ranges",
    shards = 4,
    layout = "mongoose_sequence",
    counters = "identitycounters"
)]
pub struct Ticket {
    #[serde(rename = "_id")]
    pub id: i64,
}

fn main() {
    let config = <Account as SequentialId>::SEQUENCE;
    assert_eq!(config.strategy, Strategy::Ranges);
    assert_eq!((config.shards, config.digits), (1000, Some(12)));
    let options = config.options();
    assert_eq!(options.shards, 1000);
    assert_eq!(options.validate().unwrap().start, 100_000_000_000);
    assert_eq!(<Order as SequentialId>::SEQUENCE.options().shards, 16);
    let ticket = <Ticket as SequentialId>::SEQUENCE.options();
    assert_eq!(
        ticket.layout,
        mongo_sequence::options::Layout::MongooseSequence
    );
    assert!(ticket.validate().is_ok());
}
