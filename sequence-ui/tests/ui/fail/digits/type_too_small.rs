use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(digits = 12)]
struct Invoice {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
