use mongo_sequence::SequentialId;
use serde::Serialize;
use mongodb::bson::oid::ObjectId;

#[derive(Serialize, SequentialId)]
struct User {
    #[serde(rename = "_id")]
    id: ObjectId,
}

fn main() {}
