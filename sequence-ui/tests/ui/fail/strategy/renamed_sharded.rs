use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "sharded", shards = 16)]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
