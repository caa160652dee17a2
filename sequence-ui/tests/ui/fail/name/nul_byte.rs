use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(name = "user\0id")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
