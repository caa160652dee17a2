use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
struct User {
    #[seq(id, skip)]
    id: i64,
    name: String,
}

fn main() {}
