//! The names MongoDB would reject or misread: counter names, collection names and field names.

use std::fmt;

use crate::limits::MAX_NAME_BYTES;

/// Which kind of name is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameKind {
    /// The name of a counter (`name = "..."`): the `_id` of its counter document, or part of it.
    Counter,
    /// The name of a collection (`counters = "..."`).
    Collection,
    /// The name of a field of a counter document or of a `scope`.
    Field,
}

impl NameKind {
    /// The kind, for messages (`counter name`, `collection name`, `field name`).
    pub const fn what(self) -> &'static str {
        match self {
            NameKind::Counter => "counter name",
            NameKind::Collection => "collection name",
            NameKind::Field => "field name",
        }
    }
}

/// A rejected name and why it is rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameError {
    /// Which kind of name it is.
    pub kind: NameKind,
    /// The name, with NUL bytes written as `\0`.
    pub name: String,
    /// Why it is rejected.
    pub reason: &'static str,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&describe(self.kind.what(), &self.name, self.reason))
    }
}

/// The message of a rejected name: `` invalid counter name `user.id`: it contains `.` ``
/// (without the name when it is empty).
pub fn describe(what: &str, name: &str, reason: &str) -> String {
    if name.is_empty() {
        format!("invalid {what}: {reason}")
    } else {
        format!("invalid {what} `{name}`: {reason}")
    }
}

/// Checks a name of `kind`:
///
/// - every name: not empty, no NUL byte;
/// - a counter name: no `$` (which an aggregation reads as a field path wherever the name is
///   a value in it), at most 255 bytes; a `.` is allowed, since a counter name is always a value
///   (MongoEngine's counters are named `"<collection>.<field>"`);
/// - a collection name: no `$`, not `system.`-prefixed;
/// - a field name: no `.`, not `$`-prefixed.
///
/// ```
/// use sequence_rules::names::{check, NameKind};
/// assert!(check(NameKind::Counter, "ticket.id").is_ok());
/// let e = check(NameKind::Counter, "$user").unwrap_err();
/// assert_eq!(e.to_string(), "invalid counter name `$user`: it contains `$`");
/// ```
pub fn check(kind: NameKind, name: &str) -> Result<(), NameError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.contains('\0') {
        Some("it contains a NUL byte")
    } else {
        match kind {
            NameKind::Counter if name.contains('$') => Some("it contains `$`"),
            NameKind::Counter if name.len() > MAX_NAME_BYTES => Some("it is longer than 255 bytes"),
            NameKind::Collection if name.contains('$') => Some("it contains `$`"),
            NameKind::Collection if name.starts_with("system.") => {
                Some("`system.` collections are reserved")
            }
            NameKind::Field if name.contains('.') => Some("it contains `.`"),
            NameKind::Field if name.starts_with('$') => Some("it starts with `$`"),
            _ => None,
        }
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(NameError {
            kind,
            name: name.replace('\0', "\\0"),
            reason,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(kind: NameKind, name: &str) -> Option<&'static str> {
        check(kind, name).err().map(|e| e.reason)
    }

    #[test]
    fn counter_names() {
        for ok in ["userid", "with space", "zähler", "a-b_c", "ticket.id"] {
            assert_eq!(reason(NameKind::Counter, ok), None, "{ok}");
        }
        assert_eq!(reason(NameKind::Counter, ""), Some("it is empty"));
        assert_eq!(reason(NameKind::Counter, "$inc"), Some("it contains `$`"));
        assert_eq!(reason(NameKind::Counter, "x$inc"), Some("it contains `$`"));
        assert_eq!(reason(NameKind::Counter, &"x".repeat(255)), None);
        assert!(reason(NameKind::Counter, &"x".repeat(256))
            .unwrap()
            .contains("255 bytes"));
        let e = check(NameKind::Counter, "a\0b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid counter name `a\\0b`: it contains a NUL byte"
        );
    }

    #[test]
    fn collection_and_field_names() {
        assert_eq!(reason(NameKind::Collection, "counters"), None);
        assert_eq!(reason(NameKind::Collection, "a.b"), None);
        assert!(reason(NameKind::Collection, "system.users").is_some());
        assert!(reason(NameKind::Collection, "a$b").is_some());
        assert_eq!(reason(NameKind::Field, "seq"), None);
        assert_eq!(reason(NameKind::Field, "a$"), None);
        assert!(reason(NameKind::Field, "a.b").is_some());
        assert!(reason(NameKind::Field, "$seq").is_some());
        assert!(reason(NameKind::Field, "").is_some());
    }
}
