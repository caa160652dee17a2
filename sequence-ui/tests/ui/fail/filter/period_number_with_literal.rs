use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "INV-YYMMDD", filter(prefix = period as number))]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
