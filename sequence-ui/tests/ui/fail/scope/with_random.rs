use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "random", scope = "tenant")]
struct Invoice {
    #[serde(rename = "_id")]
    number: i64,
    tenant: String,
}

fn main() {}
