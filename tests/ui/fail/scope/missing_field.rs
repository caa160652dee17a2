use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(scope = "tenant")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    tenat: String,
}

fn main() {}
