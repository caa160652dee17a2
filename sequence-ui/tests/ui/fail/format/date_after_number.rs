use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(format = "{n:05}/{YYYY}")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
