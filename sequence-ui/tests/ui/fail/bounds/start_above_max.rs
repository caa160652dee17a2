use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(start = 100, max = 10)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
