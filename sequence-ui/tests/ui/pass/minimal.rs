#![deny(warnings)]

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// A user.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "userid")]
pub struct User {
    #[serde(rename = "_id")]
    #[seq(id)]
    pub id: i64,
    pub name: String,
}

fn main() {
    assert_eq!(<User as SequentialId>::SEQUENCE.name, "userid");
}
