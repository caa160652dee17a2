//! The options of a sequence: what users choose, with a builder in the driver's fluent style,
//! and the `const` form a derived model carries ([`SequenceConfig`]). Both follow from one
//! table of keys, shared with `#[derive(SequentialId)]`, and every default and every rule comes
//! from `sequence-rules`, which the derive checks at compile time too.
//!
//! ```
//! use sequence_runtime::options::Stores;
//! use sequence_runtime::{Batch, SequenceOptions};
//!
//! // Counters written by other code: `{ _id: "invoice", COUNT: 1042 }`, 1042 being next.
//! let options = SequenceOptions::builder("invoice")
//!     .prefix("INV-YYYY-")
//!     .width(5)
//!     .batch(10..=1000)
//!     .field("COUNT")
//!     .stores(Stores::NextFree)
//!     .build();
//! assert_eq!(options.batch, Batch::from(10..=1000));
//! assert!(options.validate().is_ok());
//! ```

mod sequence_config;
mod sequence_options;

pub use sequence_config::SequenceConfig;
pub use sequence_options::{SequenceOptions, SequenceOptionsBuilder};
pub use sequence_rules::encoding::{CheckDigit, Encoding};
pub use sequence_rules::filter;
pub use sequence_rules::{AdaptiveBatch, Batch, FilterField, FilterValue, Layout, Stores, Unique};
