//! Validation of the names MongoDB would reject or misread.

use crate::error::{Error, Result};

/// Longest counter name accepted, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

fn invalid(what: &'static str, name: &str, reason: &'static str) -> Error {
    Error::InvalidName {
        what,
        name: name.replace('\0', "\\0"),
        reason,
    }
}

/// Checks what every name must satisfy: not empty, no NUL byte.
fn check_basic(what: &'static str, name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(invalid(what, name, "it is empty"));
    }
    if name.contains('\0') {
        return Err(invalid(what, name, "it contains a NUL byte"));
    }
    Ok(())
}

/// Checks a counter name: not empty, no NUL byte, not `$`-prefixed, at most 255 bytes.
pub fn check_counter_name(name: &str) -> Result<()> {
    const WHAT: &str = "counter name";
    check_basic(WHAT, name)?;
    if name.starts_with('$') {
        return Err(invalid(WHAT, name, "it starts with `$`"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(invalid(WHAT, name, "it is longer than 255 bytes"));
    }
    Ok(())
}

/// Checks a collection name: not empty, no NUL byte, no `$`, not `system.`-prefixed.
pub fn check_collection_name(name: &str) -> Result<()> {
    const WHAT: &str = "collection name";
    check_basic(WHAT, name)?;
    if name.contains('$') {
        return Err(invalid(WHAT, name, "it contains `$`"));
    }
    if name.starts_with("system.") {
        return Err(invalid(WHAT, name, "`system.` collections are reserved"));
    }
    Ok(())
}

/// Checks a field name of the counter document: not empty, no NUL, no `.`, not `$`-prefixed.
pub fn check_field_name(name: &str) -> Result<()> {
    const WHAT: &str = "field name";
    check_basic(WHAT, name)?;
    if name.contains('.') {
        return Err(invalid(WHAT, name, "it contains `.`"));
    }
    if name.starts_with('$') {
        return Err(invalid(WHAT, name, "it starts with `$`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_names() {
        assert!(check_counter_name("userid").is_ok());
        assert!(check_counter_name("a.b c-é").is_ok());
        for bad in ["", "a\0b", "$inc"] {
            assert!(
                matches!(check_counter_name(bad), Err(Error::InvalidName { .. })),
                "{bad:?}"
            );
        }
        assert!(check_counter_name(&"x".repeat(255)).is_ok());
        let err = check_counter_name(&"x".repeat(256)).unwrap_err();
        assert!(err.to_string().contains("255 bytes"), "{err}");
        let err = check_counter_name("a\0b").unwrap_err();
        assert!(err.to_string().contains("a\\0b"), "{err}");
    }

    #[test]
    fn collection_and_field_names() {
        assert!(check_collection_name("counters").is_ok());
        assert!(check_collection_name("system.users").is_err());
        assert!(check_collection_name("a$b").is_err());
        assert!(check_field_name("seq").is_ok());
        assert!(check_field_name("a.b").is_err());
        assert!(check_field_name("$seq").is_err());
        assert!(check_field_name("").is_err());
    }
}
