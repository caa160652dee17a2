//! The ID field of a model, as far as the rules need to know it, and the rules about its type.

use crate::key::Key;
use crate::limits;
use crate::strategy::Strategy;

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

/// The ID field of a model, as far as the rules that do not depend on its type need it. The
/// rules about its type ([`IdNeeds::problems`]) run where the type is known: in the compiler,
/// through the type's `IdValue::KIND`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdField<'a> {
    /// Its Rust name.
    pub name: &'a str,
    /// Whether it is stored as the document's `_id`.
    pub is_document_id: bool,
}

/// What a valid configuration asks of its ID field's type: the facts the rules about the type
/// read, worked out by [`check`](crate::check) as [`Checked::id_needs`](crate::Checked).
///
/// [`problems`](Self::problems) is a `const fn`, so that the derive checks a model's ID type
/// in the compiler, through the type's `IdValue::KIND`, whatever the type is named: a newtype
/// over `i32` meets the rules of `i32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdNeeds {
    /// The strategy.
    pub strategy: Strategy,
    /// `digits = d` (without `prefix` or `width`): every ID has `d` digits.
    pub digits: Option<u8>,
    /// `width` without a `prefix`: IDs zero-padded to that many digits.
    pub width_without_prefix: bool,
    /// The `prefix` has literal text (not only date tokens).
    pub literal_prefix: bool,
    /// The digits of an ID with a prefix of date tokens: the prefix's and the counter's `width`.
    pub prefixed_digits: Option<u32>,
    /// For the `ranges` and `random` strategies: the space of values, `start..=max`.
    pub space: Option<(i64, i64)>,
    /// The decimal check digits after the number (0 without `check_digit`).
    pub check_digits: u8,
    /// The key whose IDs only text holds (`encoding`, or a `format` with text or leading
    /// zeros), if any.
    pub text: Option<Key>,
}

/// The rules an ID type breaks, each at the place the derive points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdProblems {
    /// About the type itself (it cannot hold the IDs, or the strategy makes other values).
    pub id_type: Option<Message>,
    /// About `width`.
    pub width: Option<Message>,
    /// About `prefix`.
    pub prefix: Option<Message>,
    /// About the key of [`IdNeeds::text`].
    pub text: Option<Message>,
}

impl IdNeeds {
    /// The needs of `strategy` alone: no `digits`, `width`, `prefix`, space of values, check
    /// digits or text.
    pub const fn new(strategy: Strategy) -> Self {
        IdNeeds {
            strategy,
            digits: None,
            width_without_prefix: false,
            literal_prefix: false,
            prefixed_digits: None,
            space: None,
            check_digits: 0,
            text: None,
        }
    }

    /// The rules an ID field of `kind` breaks under these needs (the first one per place).
    pub const fn problems(&self, kind: IdKind) -> IdProblems {
        let name = kind.name();
        let type_max = kind.integer_max();
        let integer = kind.is_integer();
        let mut id_type = None;
        let mut width = None;
        let mut prefix = None;
        let mut text = None;
        if let (Some(d), Some(t)) = (self.digits, type_max) {
            let total = d + self.check_digits;
            if total > limits::MAX_DIGITS || limits::pow10(total) - 1 > t {
                let checked = if self.check_digits > 0 {
                    " (check digits included)"
                } else {
                    ""
                };
                id_type = Some(
                    Message::new()
                        .code(name)
                        .str(" cannot hold IDs of ")
                        .int(total as i64)
                        .str(" digits")
                        .str(checked)
                        .str("; use `i64` or fewer `digits`"),
                );
            }
        }
        if let (Some(key), true) = (self.text, integer) {
            text = Some(match key {
                Key::Encoding => Message::new()
                    .str("an integer ID field (")
                    .code(name)
                    .str(") cannot hold the codes of `encoding`; use a `String` ID field"),
                _ => Message::new().str("an integer ID field (").code(name).str(
                    ") cannot hold the text or leading zeros of `format`; use a `String` ID \
                     field, or a template of date fields and `{n}` only",
                ),
            });
        }
        if self.width_without_prefix && integer {
            width = Some(
                Message::new()
                    .str(
                        "`width` zero-pads a `String` ID or the counter after a `prefix`; an \
                         integer ID field (",
                    )
                    .code(name)
                    .str(") has no leading zeros: use `digits` or `max`"),
            );
        }
        if integer && self.literal_prefix {
            prefix = Some(Message::new().str("an integer ID field (").code(name).str(
                ") needs a prefix of date tokens only; use a `String` ID field for \
                         literal text",
            ));
        }
        if let (Some(total), true) = (self.prefixed_digits, integer) {
            let fits = total <= limits::MAX_DIGITS as u32
                && match type_max {
                    Some(t) => limits::pow10(total as u8) - 1 <= t,
                    None => false,
                };
            if !fits && id_type.is_none() {
                id_type = Some(
                    Message::new()
                        .code(name)
                        .str(" cannot hold IDs of ")
                        .int(total as i64)
                        .str(" digits (prefix plus `width`); use `i64` or a smaller `width`"),
                );
            }
        }
        let (fits, needs) = match self.strategy {
            Strategy::Uuid | Strategy::UuidV7 => (matches!(kind, IdKind::Uuid), "`Uuid`"),
            Strategy::ObjectId => (matches!(kind, IdKind::ObjectId), "`ObjectId`"),
            _ => (
                integer || matches!(kind, IdKind::String),
                "an integer type or `String`",
            ),
        };
        if !fits && id_type.is_none() {
            id_type = Some(
                Message::new()
                    .str("ID field type ")
                    .code(name)
                    .str(" does not match strategy \"")
                    .str(self.strategy.name())
                    .str("\", which needs ")
                    .str(needs),
            );
        }
        if let (Some((lo, hi)), Some(t)) = (self.space, type_max) {
            if id_type.is_none() && hi > t && self.digits.is_none() {
                id_type = Some(
                    Message::new()
                        .code(name)
                        .str(" cannot hold the IDs of strategy \"")
                        .str(self.strategy.name())
                        .str("\" up to ")
                        .int(hi)
                        .str("; set `digits` or `max` to fit, or use `i64`"),
                );
            } else if id_type.is_none() && lo < 0 && kind.is_unsigned() {
                id_type = Some(
                    Message::new()
                        .code(name)
                        .str(" cannot hold the negative IDs from `start` = ")
                        .int(lo),
                );
            }
        }
        IdProblems {
            id_type,
            width,
            prefix,
            text,
        }
    }
}

/// A message built in a `const fn` (where `format!` is not available), at most
/// [`Message::CAPACITY`] bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Message {
    bytes: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    /// The longest message, in bytes.
    pub const CAPACITY: usize = 320;

    const fn new() -> Self {
        Message {
            bytes: [0; Message::CAPACITY],
            len: 0,
        }
    }

    const fn str(mut self, s: &str) -> Self {
        let s = s.as_bytes();
        let mut i = 0;
        while i < s.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = s[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// `name` in backticks.
    const fn code(self, name: &str) -> Self {
        self.str("`").str(name).str("`")
    }

    const fn int(mut self, value: i64) -> Self {
        if value < 0 {
            self = self.str("-");
        }
        let mut digits = [0_u8; 20];
        let mut n = value.unsigned_abs();
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 && self.len < Message::CAPACITY {
            count -= 1;
            self.bytes[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    /// The message.
    pub const fn as_str(&self) -> &str {
        let (text, _) = self.bytes.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(text) => text,
            // Only whole `str`s are appended, and none is cut short by the capacity in use.
            Err(_) => "invalid ID field type",
        }
    }
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_hold_text_and_numbers() {
        let m = Message::new()
            .code("i32")
            .str(" up to ")
            .int(-1_234_567_890_123);
        assert_eq!(m.as_str(), "`i32` up to -1234567890123");
        assert_eq!(Message::new().int(0).as_str(), "0");
        assert_eq!(
            Message::new().int(i64::MIN).as_str(),
            "-9223372036854775808"
        );
    }

    #[test]
    fn integer_types_meet_their_ranges() {
        let twelve = IdNeeds {
            digits: Some(12),
            ..IdNeeds::new(Strategy::Counter)
        };
        assert_eq!(
            twelve.problems(IdKind::I32).id_type.unwrap().as_str(),
            "`i32` cannot hold IDs of 12 digits; use `i64` or fewer `digits`"
        );
        assert_eq!(twelve.problems(IdKind::I64).id_type, None);
        let drawn = IdNeeds {
            space: Some((-5, 10)),
            ..IdNeeds::new(Strategy::Random)
        };
        assert!(drawn
            .problems(IdKind::U32)
            .id_type
            .unwrap()
            .as_str()
            .contains("negative"));
        assert_eq!(drawn.problems(IdKind::I32).id_type, None);
    }

    #[test]
    fn strategies_need_their_kinds() {
        let uuid = IdNeeds::new(Strategy::UuidV7);
        assert!(uuid.problems(IdKind::I64).id_type.is_some());
        assert_eq!(uuid.problems(IdKind::Uuid).id_type, None);
        let counter = IdNeeds::new(Strategy::Counter);
        assert!(counter.problems(IdKind::ObjectId).id_type.is_some());
        assert_eq!(counter.problems(IdKind::String).id_type, None);
    }

    #[test]
    fn prefixes_and_widths_need_text_or_room() {
        let padded = IdNeeds {
            width_without_prefix: true,
            literal_prefix: true,
            prefixed_digits: Some(12),
            ..IdNeeds::new(Strategy::Counter)
        };
        let p = padded.problems(IdKind::I32);
        assert!(p.width.is_some() && p.prefix.is_some());
        assert!(p.id_type.unwrap().as_str().contains("12 digits"));
        assert_eq!(
            padded.problems(IdKind::String),
            IdProblems {
                id_type: None,
                width: None,
                prefix: None,
                text: None
            }
        );
    }
}
