use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(batch = 10..1000)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
