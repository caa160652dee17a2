use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(encoding = "sqids", min_length = 300)]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
