//! The error returned when no MongoDB server can be provided.

use std::fmt;

/// Why a MongoDB server could not be provided.
///
/// The message says what went wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionError {
    message: String,
}

impl ProvisionError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ProvisionError {
            message: message.into(),
        }
    }

    /// The error message (the same text as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ProvisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProvisionError {}
