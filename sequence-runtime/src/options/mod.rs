//! The options of a sequence: what users choose, with a builder in the driver's fluent style,
//! and the `const` form a derived model carries ([`SequenceConfig`]). Every default and every
//! rule comes from `mongo-sequence-rules`, which the derive checks at compile time too.
//!
//! ```
//! use mongo_sequence_runtime::options::{AdaptiveBatch, CounterLayout, Stores};
//! use mongo_sequence_runtime::{Batch, SequenceOptions};
//!
//! // Counters written by other code: `{ _id: "invoice", COUNT: 1042 }`, 1042 being next.
//! let options = SequenceOptions::builder("invoice")
//!     .prefix("INV-YYYY-")
//!     .width(5)
//!     .adaptive_batch(AdaptiveBatch::new(10, 1000))
//!     .layout(CounterLayout::new().field("COUNT").stores(Stores::NextFree))
//!     .build();
//! assert_eq!(options.batch, Batch::Adaptive(AdaptiveBatch::new(10, 1000)));
//! assert!(options.validate().is_ok());
//! ```

mod batch;
mod config;
mod layout;
mod sequence_options;

pub use batch::{AdaptiveBatch, Batch};
pub use config::SequenceConfig;
pub(crate) use layout::Keys;
pub use layout::{CounterLayout, Stores};
pub use sequence_options::{SequenceOptions, SequenceOptionsBuilder};

/// The `const` form of a layout in a derived model's [`SequenceConfig`] (a [`CounterLayout`]
/// holds its field's name as a `String`, which a constant cannot).
pub use mongo_sequence_rules::LayoutConfig;

/// How long a gapless insert retries transient transaction errors by default.
pub const DEFAULT_TRANSACTION_TIMEOUT: std::time::Duration =
    std::time::Duration::from_millis(mongo_sequence_rules::defaults::TRANSACTION_TIMEOUT_MS);
