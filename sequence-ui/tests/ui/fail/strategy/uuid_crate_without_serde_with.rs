use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "uuid_v7")]
struct Event {
    #[serde(rename = "_id")]
    id: uuid::Uuid,
}

fn main() {}
