use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(counters = "system.counters")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
