use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(format = "ACC-{n:08}")]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
