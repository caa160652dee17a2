use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
struct User {
    #[seq(di)]
    id: i64,
    name: String,
}

fn main() {}
