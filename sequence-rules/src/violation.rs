//! What a rule says about a configuration that breaks it.

use std::fmt;

use crate::key::Key;
use crate::names::NameError;

/// Where a violation is: the key it is about, which the derive points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// A key of `#[seq(...)]`.
    Key(Key),
    /// The field at this position in `scope`.
    ScopeField(usize),
    /// The field at this position in `filter`.
    FilterField(usize),
    /// The type of the ID field.
    IdType,
    /// An option of the runtime that has no `#[seq(...)]` key (such as `prefetch_at`).
    Option(&'static str),
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A name MongoDB would reject or misread.
    Name(NameError),
    /// Any other broken rule, said in a message that tells what to change.
    Invalid(String),
}

/// One broken rule of a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Where it is.
    pub at: At,
    /// What is wrong.
    pub problem: Problem,
}

impl Violation {
    pub(crate) fn invalid(at: At, message: impl Into<String>) -> Self {
        Violation {
            at,
            problem: Problem::Invalid(message.into()),
        }
    }

    /// The key the violation is about, if it is about a key.
    pub fn key(&self) -> Option<Key> {
        match self.at {
            At::Key(key) => Some(key),
            At::ScopeField(_) => Some(Key::Scope),
            At::FilterField(_) => Some(Key::Filter),
            _ => None,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Name(e) => e.fmt(f),
            Problem::Invalid(message) => f.write_str(message),
        }
    }
}
