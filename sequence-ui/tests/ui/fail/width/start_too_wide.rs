use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "YYMMDD", width = 3, start = 1000)]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
