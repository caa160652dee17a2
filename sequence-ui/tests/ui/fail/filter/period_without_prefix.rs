use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(filter(prefix = period as number))]
struct Daily {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
