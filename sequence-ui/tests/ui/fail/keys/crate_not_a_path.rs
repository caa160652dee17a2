use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(crate = "not a path")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
