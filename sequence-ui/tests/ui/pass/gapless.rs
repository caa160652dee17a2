#![deny(warnings)]

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// Invoice numbers without holes.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", gapless, transaction_timeout = "10s")]
pub struct Invoice {
    #[serde(rename = "_id")]
    pub id: Option<i64>,
}

/// `gapless = false` is the default, spelled out.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(gapless = false, batch = 100)]
pub struct Receipt {
    #[serde(rename = "_id")]
    pub id: i64,
}

fn main() {
    let c = <Invoice as SequentialId>::SEQUENCE;
    assert!(c.gapless);
    assert_eq!(c.transaction_timeout, std::time::Duration::from_secs(10));
    const { assert!(!<Receipt as SequentialId>::SEQUENCE.gapless) };
}
