use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
struct User {
    #[seq(id)]
    id: f64,
    name: String,
}

fn main() {}
