use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "ranges", retries = 3)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
