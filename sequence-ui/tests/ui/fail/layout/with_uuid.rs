use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "uuid", layout = "mongoose_sequence")]
struct User {
    #[serde(rename = "_id")]
    id: mongodb::bson::Uuid,
}

fn main() {}
