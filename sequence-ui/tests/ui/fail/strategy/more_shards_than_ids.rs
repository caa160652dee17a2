use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "ranges", shards = 100, digits = 1)]
struct Desk {
    #[serde(rename = "_id")]
    number: i64,
}

fn main() {}
