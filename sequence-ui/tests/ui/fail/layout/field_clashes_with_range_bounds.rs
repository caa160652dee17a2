use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "ranges", field = "lo")]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
