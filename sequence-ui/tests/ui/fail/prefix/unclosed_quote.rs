use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "'INV-YYMMDD")]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
