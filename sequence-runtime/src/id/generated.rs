//! The values of the `uuid`, `uuid_v7` and `object_id` strategies: made in the process, without
//! a counter and without a round trip.

use mongodb::bson::oid::ObjectId;
use sequence_rules::Strategy;

use crate::error::Error;

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
}
