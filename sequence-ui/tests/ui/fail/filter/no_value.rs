use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(filter(m))]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
