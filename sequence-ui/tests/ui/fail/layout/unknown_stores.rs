use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(field = "COUNT", stores = "next")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
