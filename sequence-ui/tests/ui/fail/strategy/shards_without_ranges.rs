use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(shards = 8)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
