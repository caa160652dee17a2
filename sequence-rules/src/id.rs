//! The ID field of a model, as far as the rules need to know it.

/// The Rust type of an ID field (for `Option<T>`, of `T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdKind {
    /// `i64`.
    I64,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `String`.
    String,
    /// A UUID: `mongodb::bson::Uuid` or `uuid::Uuid`.
    Uuid,
    /// `mongodb::bson::oid::ObjectId`.
    ObjectId,
}

impl IdKind {
    /// The ID field types accepted, for messages.
    pub const EXPECTED: &'static str =
        "`i64`, `i32`, `u32`, `u64`, `String`, `Uuid`, `ObjectId`, or `Option` of one of them";

    /// The kind of the type whose last path segment is `ident`.
    pub fn from_type_name(ident: &str) -> Option<Self> {
        Some(match ident {
            "i64" => IdKind::I64,
            "i32" => IdKind::I32,
            "u32" => IdKind::U32,
            "u64" => IdKind::U64,
            "String" => IdKind::String,
            "Uuid" => IdKind::Uuid,
            "ObjectId" => IdKind::ObjectId,
            _ => return None,
        })
    }

    /// Whether the type is an integer.
    pub const fn is_integer(self) -> bool {
        matches!(self, IdKind::I64 | IdKind::I32 | IdKind::U32 | IdKind::U64)
    }

    /// The largest value an integer type holds (`i64::MAX` for `u64`: counters are `i64`).
    pub const fn integer_max(self) -> Option<i64> {
        Some(match self {
            IdKind::I64 | IdKind::U64 => i64::MAX,
            IdKind::I32 => i32::MAX as i64,
            IdKind::U32 => u32::MAX as i64,
            _ => return None,
        })
    }

    /// Whether the type holds no negative number.
    pub const fn is_unsigned(self) -> bool {
        matches!(self, IdKind::U32 | IdKind::U64)
    }

    /// The type's name, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            IdKind::I64 => "i64",
            IdKind::I32 => "i32",
            IdKind::U32 => "u32",
            IdKind::U64 => "u64",
            IdKind::String => "String",
            IdKind::Uuid => "Uuid",
            IdKind::ObjectId => "ObjectId",
        }
    }
}

/// The ID field of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdField<'a> {
    /// Its Rust name.
    pub name: &'a str,
    /// Its type.
    pub kind: IdKind,
    /// Whether it is stored as the document's `_id`.
    pub is_document_id: bool,
}
