use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(width = 300)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    name: String,
}

fn main() {}
