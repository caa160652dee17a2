use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
enum User {
    A,
    B,
}

fn main() {}
