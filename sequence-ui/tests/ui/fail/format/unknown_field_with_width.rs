use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(format = "ACC-{num:08}")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
