use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(format = "ACC-{n}", width = 8)]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
