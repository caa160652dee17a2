use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "MMDD")]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
