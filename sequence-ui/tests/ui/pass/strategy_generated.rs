#![deny(warnings)]

use mongo_sequence::{SequentialId, Strategy};
use mongodb::bson::oid::ObjectId;
use serde::{Deserialize, Serialize};

/// A login with a version 4 UUID, stored natively as a BSON UUID.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid")]
pub struct Login {
    #[serde(rename = "_id")]
    pub id: mongodb::bson::Uuid,
}

/// An event with a version 7 UUID of the `uuid` crate, stored as a BSON UUID through `uuid_as_binary`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid_v7")]
pub struct Event {
    #[serde(rename = "_id", with = "mongo_sequence::uuid_as_binary")]
    pub id: Option<uuid::Uuid>,
}

/// A log line with an ObjectId.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(strategy = "object_id")]
pub struct Line {
    #[serde(rename = "_id")]
    pub id: ObjectId,
}

fn main() {
    assert_eq!(<Login as SequentialId>::SEQUENCE.strategy, Strategy::Uuid);
    assert_eq!(<Event as SequentialId>::SEQUENCE.strategy, Strategy::UuidV7);
    assert_eq!(
        <Line as SequentialId>::SEQUENCE.strategy,
        Strategy::ObjectId
    );
}
