use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(layout = "mongoose")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
