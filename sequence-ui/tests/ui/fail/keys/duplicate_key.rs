use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(name = "userid")]
#[seq(batch = 5, name = "other")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
