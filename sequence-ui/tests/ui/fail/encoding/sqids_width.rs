use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(encoding = "sqids", width = 6)]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
