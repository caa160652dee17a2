use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "ranges", digits = 12, max = 999_999)]
struct Account {
    #[serde(rename = "_id")]
    number: i64,
}

fn main() {}
