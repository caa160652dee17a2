//! The configuration rules of [`mongo-sequence`](https://docs.rs/mongo-sequence), in one place.
//!
//! `#[derive(SequentialId)]` checks a model's `#[seq(...)]` attributes with these rules at
//! compile time, and the runtime checks the options of a `Sequence` with the same rules when it
//! is built, so that both accept and refuse the same configurations with the same messages.
//! This crate holds the rules and the plain data they speak of: the [`defaults`], the
//! [`limits`], the [`names`] MongoDB accepts, the [`pattern`] of a period prefix, the
//! [`Strategy`] values and which [`Key`] applies to which of them, and the arithmetic of the
//! human-facing [`encoding`]s of IDs (check digits, Crockford base 32, Sqids alphabets). It
//! does not talk to a server.
//!
//! The entry point is [`check`]: it takes a [`Spec`] (a configuration as written, every key
//! optional) and returns what the runtime needs to know ([`Checked`]) or every [`Violation`],
//! each tied to the key (or the ID field) it is about.
//!
//! ```
//! use sequence_rules::{check, Key, Spec, Strategy};
//!
//! let spec = Spec { prefix: Some("INV-YYMMDD-"), width: Some(4), ..Spec::new("invoice") };
//! let checked = check(&spec).unwrap();
//! assert_eq!((checked.start, checked.max), (1, 9_999));
//!
//! let spec = Spec { strategy: Some(Strategy::Random), prefix: Some("YY"), ..Spec::new("x") };
//! let violations = check(&spec).unwrap_err();
//! assert_eq!(violations.len(), 1);
//! assert_eq!(violations[0].key(), Some(Key::Prefix));
//! assert_eq!(
//!     violations[0].to_string(),
//!     "`prefix` does not apply to strategy \"random\", only to: `counter`"
//! );
//! ```

mod batch;
mod check;
pub mod defaults;
pub mod encoding;
pub mod filter;
mod id;
mod key;
mod layout;
pub mod limits;
pub mod names;
pub mod pattern;
mod spec;
mod strategy;
pub mod suggest;
pub mod template;
pub mod tz;
mod violation;

pub use batch::{AdaptiveBatch, Batch};
pub use check::{check, Checked};
pub use filter::{FilterField, FilterValue};
pub use id::{IdField, IdKind, IdNeeds, IdProblems, Message};
pub use key::Key;
pub use layout::Layout;
pub use spec::Spec;
pub use strategy::{default_proxy, Stores, Strategy, Unique, UnknownStrategy, SHARD_BOUND_FIELDS};
pub use violation::{At, Problem, Violation};
