use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "ranges", shards = 5_000_000_000)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
