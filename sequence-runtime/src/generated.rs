//! The `uuid`, `uuid_v7` and `object_id` strategies: IDs made in the process, without a
//! counter and without a round trip.

use mongodb::bson::oid::ObjectId;
use mongodb::Collection;

use crate::config::Strategy;
use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::model::SequentialId;

/// A value made by a strategy without a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Generated {
    /// A UUID (version 4 or 7), stored as BSON binary subtype 4.
    Uuid(mongodb::bson::Uuid),
    /// An ObjectId.
    ObjectId(ObjectId),
}

impl Generated {
    /// A fresh value of `strategy`, or `None` for strategies that make numbers.
    pub fn new(strategy: Strategy) -> Option<Self> {
        Some(match strategy {
            Strategy::Uuid => Generated::Uuid(bson_uuid(uuid::Uuid::new_v4())),
            Strategy::UuidV7 => Generated::Uuid(bson_uuid(uuid::Uuid::now_v7())),
            Strategy::ObjectId => Generated::ObjectId(ObjectId::new()),
            _ => return None,
        })
    }

    /// What it is, for messages.
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Generated::Uuid(_) => "a UUID",
            Generated::ObjectId(_) => "an ObjectId",
        }
    }

    /// The error for an ID type that cannot hold this value.
    pub fn mismatch(&self, target: &'static str) -> Error {
        Error::IdTypeMismatch {
            made: self.what(),
            target,
        }
    }
}

fn bson_uuid(u: uuid::Uuid) -> mongodb::bson::Uuid {
    mongodb::bson::Uuid::from_bytes(u.into_bytes())
}

fn not_a_number(target: &'static str) -> Error {
    Error::IdTypeMismatch {
        made: "a number",
        target,
    }
}

impl IdValue for mongodb::bson::Uuid {
    const TYPE_NAME: &'static str = "Uuid";

    fn from_counter(_: i64) -> Result<Self> {
        Err(not_a_number(Self::TYPE_NAME))
    }

    fn from_generated(value: Generated) -> Result<Self> {
        match value {
            Generated::Uuid(u) => Ok(u),
            other => Err(other.mismatch(Self::TYPE_NAME)),
        }
    }
}

impl IdValue for uuid::Uuid {
    const TYPE_NAME: &'static str = "uuid::Uuid";

    fn from_counter(_: i64) -> Result<Self> {
        Err(not_a_number(Self::TYPE_NAME))
    }

    fn from_generated(value: Generated) -> Result<Self> {
        match value {
            Generated::Uuid(u) => Ok(uuid::Uuid::from_bytes(u.bytes())),
            other => Err(other.mismatch(Self::TYPE_NAME)),
        }
    }
}

impl IdValue for ObjectId {
    const TYPE_NAME: &'static str = "ObjectId";

    fn from_counter(_: i64) -> Result<Self> {
        Err(not_a_number(Self::TYPE_NAME))
    }

    fn from_generated(value: Generated) -> Result<Self> {
        match value {
            Generated::ObjectId(oid) => Ok(oid),
            other => Err(other.mismatch(Self::TYPE_NAME)),
        }
    }
}

/// ID types that serde stores as a BSON UUID (binary subtype 4) without help.
///
/// `#[derive(SequentialId)]` requires it of a UUID ID field that has no `#[serde(with = ...)]`:
/// `mongodb::bson::Uuid` has it; `uuid::Uuid` does not (serde would store it as binary subtype
/// 0), so such a field needs `#[serde(with = "mongo_sequence::uuid_as_binary")]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not stored as a BSON UUID (binary subtype 4) by serde",
    label = "this ID field would be stored as generic binary (subtype 0)",
    note = "add `#[serde(with = \"mongo_sequence::uuid_as_binary\")]` to the field, or use `mongodb::bson::Uuid`"
)]
pub trait BsonUuid {}

impl BsonUuid for mongodb::bson::Uuid {}

/// Gives each of `docs` a fresh value of the model's strategy and inserts them with one
/// `insert_many`.
pub(crate) async fn insert_many<T: SequentialId>(
    docs: &mut [T],
    coll: &Collection<T>,
) -> Result<Vec<T::Id>> {
    let strategy = T::SEQUENCE.strategy;
    let mut ids = Vec::with_capacity(docs.len());
    for doc in docs.iter_mut() {
        let value = Generated::new(strategy).ok_or_else(|| Error::Unsupported {
            operation: "generate",
            strategy: strategy.name(),
            hint: "",
        })?;
        let id = T::Id::from_generated(value)?;
        doc.set_id(id.clone());
        ids.push(id);
    }
    if !docs.is_empty() {
        coll.insert_many(&*docs).await.map_err(Error::from_driver)?;
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_each_strategy() {
        let Some(Generated::Uuid(v4)) = Generated::new(Strategy::Uuid) else {
            panic!("uuid strategy makes UUIDs")
        };
        assert_eq!(uuid::Uuid::from_bytes(v4.bytes()).get_version_num(), 4);
        let Some(Generated::Uuid(v7)) = Generated::new(Strategy::UuidV7) else {
            panic!("uuid_v7 strategy makes UUIDs")
        };
        assert_eq!(uuid::Uuid::from_bytes(v7.bytes()).get_version_num(), 7);
        assert!(matches!(
            Generated::new(Strategy::ObjectId),
            Some(Generated::ObjectId(_))
        ));
        assert_eq!(Generated::new(Strategy::Counter), None);
        assert_eq!(Generated::new(Strategy::Random), None);
    }

    #[test]
    fn conversions_check_the_kind() {
        let u = Generated::new(Strategy::Uuid).unwrap();
        let oid = Generated::new(Strategy::ObjectId).unwrap();
        let Generated::Uuid(bson) = u else {
            unreachable!()
        };
        assert_eq!(
            uuid::Uuid::from_generated(u).unwrap().into_bytes(),
            bson.bytes()
        );
        assert!(matches!(
            ObjectId::from_generated(u),
            Err(Error::IdTypeMismatch {
                made: "a UUID",
                target: "ObjectId"
            })
        ));
        assert!(mongodb::bson::Uuid::from_generated(oid).is_err());
        assert!(i64::from_generated(u).is_err());
        assert!(String::from_generated(oid).is_err());
        assert!(ObjectId::from_counter(1).is_err());
    }
}
