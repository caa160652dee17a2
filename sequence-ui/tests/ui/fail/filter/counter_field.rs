use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(field = "c", filter(c = name))]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
