use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
struct User {
    #[seq(id)]
    id: i64,
    #[seq(id)]
    other: i64,
}

fn main() {}
