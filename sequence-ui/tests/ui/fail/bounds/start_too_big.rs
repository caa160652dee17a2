use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(start = 9223372036854775808)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
