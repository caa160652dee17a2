#![deny(warnings)]

use mongo_sequence::{SequentialId, Strategy};
use serde::{Deserialize, Serialize};

/// A voucher with a random 12-digit code.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", digits = 12, retries = 20)]
pub struct Voucher {
    #[serde(rename = "_id")]
    pub code: String,
}

/// A ticket with a random number that fits an `i32`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "random", start = 1, max = 2_000_000_000)]
pub struct Ticket {
    #[serde(rename = "_id")]
    pub number: i32,
}

fn main() {
    let config = <Voucher as SequentialId>::SEQUENCE;
    assert_eq!(config.strategy, Strategy::Random);
    assert_eq!(config.options().retries, 20);
    assert_eq!(<Ticket as SequentialId>::SEQUENCE.options().retries, 10);
}
