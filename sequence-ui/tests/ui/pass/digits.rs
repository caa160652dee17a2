#![deny(warnings)]

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// Every ID has exactly 12 digits.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(digits = 12)]
pub struct Account {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// Eight digits as text, starting further in.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(digits = 8, start = 50_000_000)]
pub struct Member {
    #[serde(rename = "_id")]
    pub id: String,
}

/// A zero-padded String ID without a prefix: `000042`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(width = 6)]
pub struct Badge {
    #[serde(rename = "_id")]
    pub id: String,
}

fn main() {
    let account = <Account as SequentialId>::SEQUENCE;
    assert_eq!(account.digits, Some(12));
    assert_eq!(
        (account.start, account.max),
        (100_000_000_000, 999_999_999_999)
    );
    let member = <Member as SequentialId>::SEQUENCE;
    assert_eq!((member.start, member.max), (50_000_000, 99_999_999));
    assert_eq!(<Badge as SequentialId>::SEQUENCE.width, Some(6));
}
