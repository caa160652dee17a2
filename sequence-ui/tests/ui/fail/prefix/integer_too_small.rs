use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "YYMMDD")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
