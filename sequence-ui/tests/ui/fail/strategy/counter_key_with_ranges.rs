use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "ranges", prefix = "YYMMDD")]
struct Invoice {
    #[serde(rename = "_id")]
    number: i64,
}

fn main() {}
