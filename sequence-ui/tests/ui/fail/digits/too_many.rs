use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(digits = 19)]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
