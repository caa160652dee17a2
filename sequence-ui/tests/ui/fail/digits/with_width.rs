use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(digits = 8, width = 4)]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
