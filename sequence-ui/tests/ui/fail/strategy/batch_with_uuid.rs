use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "uuid", batch = 100)]
struct Session {
    #[serde(rename = "_id")]
    id: mongodb::bson::Uuid,
}

fn main() {}
