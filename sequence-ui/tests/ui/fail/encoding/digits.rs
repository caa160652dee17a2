use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(encoding = "crockford32", digits = 6)]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
