use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(encoding = "crockford32")]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
