//! The Rust types an ID field may have, and how a counter value becomes one.

use mongodb::bson::oid::ObjectId;
use mongodb::bson::Bson;
use sequence_rules::IdKind;
use serde::de::DeserializeOwned;

use super::generated::Generated;
use super::render::Rendering;
use crate::error::{Error, Result};

/// A type an ID field can have. Implemented for `i64`, `i32`, `u32`, `u64` and `String`, which
/// hold numbers (from counters, or drawn by the random strategy), and for `mongodb::bson::Uuid`,
/// `uuid::Uuid` and `mongodb::bson::oid::ObjectId`, which hold [`Generated`] values.
///
/// A type of one's own implements it by standing for one of those: `#[derive(IdValue)]` on a
/// one-field tuple struct (`struct OrderNo(i64);`) forwards every method to the field's type,
/// and `#[derive(SequentialId)]` checks the model's configuration against [`KIND`](Self::KIND)
/// at compile time (a `prefix` with text needs a `String`, twelve `digits` do not fit an
/// `i32`, …).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the type of an ID field: it does not implement `IdValue`",
    label = "not an ID type",
    note = "ID fields hold `i64`, `i32`, `u32`, `u64`, `String`, a UUID or an `ObjectId`, or \
            `Option` of one of them",
    note = "for a type of your own, add `#[derive(IdValue)]` to a one-field tuple struct over one \
            of those (`struct OrderNo(i64);`), or implement `IdValue` by hand"
)]
pub trait IdValue:
    Clone + std::fmt::Debug + DeserializeOwned + Send + Sync + Sized + 'static
{
    /// The type's name, for messages.
    const TYPE_NAME: &'static str;

    /// Which of the supported ID types this one stands for: what the configuration rules
    /// about the ID's type check.
    const KIND: IdKind;

    /// Whether the documents store this type as text (`String`); numbers otherwise. Inserts
    /// that meet stored IDs look for stored IDs of this form.
    const STORED_AS_TEXT: bool = matches!(Self::KIND, IdKind::String);

    /// What a field of this type needs to be stored as the strategy's BSON type, if serde's
    /// own serialization of the type does not do it (`uuid::Uuid`, which serde stores as
    /// generic binary). The derive refuses such a field without a `serde(with = ...)`.
    const SERIALIZER_NEEDED: Option<&'static str> = None;

    /// The ID for counter value `value`, or [`Error::IdOutOfRange`] if the type cannot hold it.
    fn from_counter(value: i64) -> Result<Self>;

    /// The ID for a value made without a counter (strategies `uuid`, `uuid_v7`, `object_id`),
    /// or [`Error::IdTypeMismatch`] if the type cannot hold it (the default).
    fn from_generated(value: Generated) -> Result<Self> {
        Err(value.mismatch(Self::TYPE_NAME))
    }

    /// The ID stored as `value` in a document (as the driver deserializes it), or
    /// [`Error::IdTypeMismatch`] if it is of another type.
    fn from_stored(value: Bson) -> Result<Self> {
        mongodb::bson::from_bson(value).map_err(|_| Error::IdTypeMismatch {
            made: "a stored ID of another BSON type",
            target: Self::TYPE_NAME,
        })
    }

    /// The ID for counter value `value` rendered with `rendering` (a period's prefix, the
    /// counter's zero-padding): for numbers, the digits of the prefix followed by the counter's;
    /// for a plain rendering, [`from_counter`](Self::from_counter).
    fn render(value: i64, rendering: &Rendering) -> Result<Self> {
        Self::from_counter(rendering.number(value, Self::TYPE_NAME)?)
    }
}

macro_rules! integer_ids {
    ($($t:ty => $kind:ident),*) => {$(
        impl IdValue for $t {
            const TYPE_NAME: &'static str = stringify!($t);

            const KIND: IdKind = IdKind::$kind;

            fn from_counter(value: i64) -> Result<Self> {
                <$t>::try_from(value).map_err(|_| Error::IdOutOfRange {
                    value,
                    target: Self::TYPE_NAME,
                })
            }
        }
    )*};
}

integer_ids!(i64 => I64, i32 => I32, u32 => U32, u64 => U64);

impl IdValue for String {
    const TYPE_NAME: &'static str = "String";

    const KIND: IdKind = IdKind::String;

    fn from_counter(value: i64) -> Result<Self> {
        Ok(value.to_string())
    }

    fn render(value: i64, rendering: &Rendering) -> Result<Self> {
        rendering.text(value)
    }
}

fn not_a_uuid() -> Error {
    Error::IdTypeMismatch {
        made: "a stored ID that is not a BSON UUID",
        target: "uuid::Uuid",
    }
}

fn not_a_number(target: &'static str) -> Error {
    Error::IdTypeMismatch {
        made: "a number",
        target,
    }
}

impl IdValue for mongodb::bson::Uuid {
    const TYPE_NAME: &'static str = "Uuid";

    const KIND: IdKind = IdKind::Uuid;

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

    const KIND: IdKind = IdKind::Uuid;

    const SERIALIZER_NEEDED: Option<&'static str> = Some(
        "serde stores a `uuid::Uuid` as generic binary, not as a BSON UUID: add \
         `#[serde(with = \"mongo_sequence::uuid_as_binary\")]` to the field (or \
         `bson::serde_helpers::uuid_1_as_binary`), or use `mongodb::bson::Uuid`",
    );

    /// A BSON UUID (binary subtype 4), as `uuid_as_binary` stores it.
    fn from_stored(value: Bson) -> Result<Self> {
        match value {
            Bson::Binary(b) if b.subtype == mongodb::bson::spec::BinarySubtype::Uuid => {
                uuid::Uuid::from_slice(&b.bytes).map_err(|_| not_a_uuid())
            }
            _ => Err(not_a_uuid()),
        }
    }

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

    const KIND: IdKind = IdKind::ObjectId;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_check_the_range() {
        assert_eq!(i32::from_counter(7).unwrap(), 7);
        assert!(matches!(
            i32::from_counter(i64::from(i32::MAX) + 1),
            Err(Error::IdOutOfRange { target: "i32", .. })
        ));
        assert!(u32::from_counter(-1).is_err());
        assert!(u64::from_counter(-1).is_err());
        assert_eq!(u64::from_counter(i64::MAX).unwrap(), i64::MAX as u64);
        assert_eq!(String::from_counter(42).unwrap(), "42");
    }

    #[test]
    fn stored_ids_come_back_as_their_type() {
        assert_eq!(i64::from_stored(Bson::Int64(7)).unwrap(), 7);
        assert_eq!(i32::from_stored(Bson::Int32(7)).unwrap(), 7);
        assert_eq!(String::from_stored(Bson::String("a".into())).unwrap(), "a");
        let u = uuid::Uuid::now_v7();
        let stored = Bson::Binary(mongodb::bson::Binary {
            subtype: mongodb::bson::spec::BinarySubtype::Uuid,
            bytes: u.as_bytes().to_vec(),
        });
        assert_eq!(uuid::Uuid::from_stored(stored).unwrap(), u);
        let bson_uuid = mongodb::bson::Uuid::new();
        assert_eq!(
            mongodb::bson::Uuid::from_stored(Bson::from(bson_uuid)).unwrap(),
            bson_uuid
        );
        assert!(matches!(
            i64::from_stored(Bson::String("7".into())),
            Err(Error::IdTypeMismatch { target: "i64", .. })
        ));
    }

    #[test]
    fn conversions_check_the_kind() {
        let u = Generated::new(sequence_rules::Strategy::Uuid).unwrap();
        let oid = Generated::new(sequence_rules::Strategy::ObjectId).unwrap();
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
