use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(scope = "tenant")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    tenant: String,
}

fn main() {}
