use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "YYMMDD", width = 0)]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
