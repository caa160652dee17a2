//! Stores a `uuid::Uuid` (or `Option<uuid::Uuid>`) field as a BSON UUID: binary subtype 4.
//!
//! Plain serde stores a `uuid::Uuid` as generic binary (subtype 0) through the driver, which
//! other MongoDB tools do not show as a UUID and which does not equal the same UUID written as
//! `mongodb::bson::Uuid` in queries. Put this module on the field instead (through the
//! `mongo-sequence` crate: `#[serde(with = "mongo_sequence::uuid_as_binary")]`):
//!
//! ```
//! use mongodb::bson::{spec::BinarySubtype, Bson};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Event {
//!     #[serde(rename = "_id", with = "sequence_runtime::uuid_as_binary")]
//!     id: uuid::Uuid,
//! }
//!
//! let event = Event { id: uuid::Uuid::now_v7() };
//! let doc = mongodb::bson::to_document(&event).unwrap();
//! let Some(Bson::Binary(binary)) = doc.get("_id") else { panic!() };
//! assert_eq!(binary.subtype, BinarySubtype::Uuid);
//! let back: Event = mongodb::bson::from_document(doc).unwrap();
//! assert_eq!(back.id, event.id);
//! ```
//!
//! Deserialization reads what it writes (binary subtype 4).

use mongodb::bson;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The field types this module handles: `uuid::Uuid` and `Option<uuid::Uuid>`.
pub trait UuidField: Sized + sealed::Sealed {
    #[doc(hidden)]
    fn to_bson(&self) -> Option<bson::Uuid>;
    #[doc(hidden)]
    fn from_bson(value: Option<bson::Uuid>) -> Option<Self>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for uuid::Uuid {}
    impl Sealed for Option<uuid::Uuid> {}
}

impl UuidField for uuid::Uuid {
    fn to_bson(&self) -> Option<bson::Uuid> {
        Some(bson::Uuid::from_bytes(self.into_bytes()))
    }

    fn from_bson(value: Option<bson::Uuid>) -> Option<Self> {
        value.map(|u| uuid::Uuid::from_bytes(u.bytes()))
    }
}

impl UuidField for Option<uuid::Uuid> {
    fn to_bson(&self) -> Option<bson::Uuid> {
        self.as_ref().and_then(UuidField::to_bson)
    }

    fn from_bson(value: Option<bson::Uuid>) -> Option<Self> {
        Some(value.map(|u| uuid::Uuid::from_bytes(u.bytes())))
    }
}

/// Serializes the field as a BSON UUID (or null for `None`).
pub fn serialize<T: UuidField, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    value.to_bson().serialize(serializer)
}

/// Deserializes the field from a BSON UUID (or null for an `Option`).
pub fn deserialize<'de, T: UuidField, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    T::from_bson(Option::<bson::Uuid>::deserialize(deserializer)?)
        .ok_or_else(|| serde::de::Error::custom("expected a UUID, found null"))
}
