use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
struct User {
    id: i64,
    name: String,
}

fn main() {}
