use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "INV-", format = "{n:06}")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
