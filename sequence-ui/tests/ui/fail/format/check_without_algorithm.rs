use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(format = "ACC-{n:08}-{check}")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
