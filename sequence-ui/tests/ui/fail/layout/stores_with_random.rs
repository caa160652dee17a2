use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "random", stores = "next_free")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
