//! The ID types and the values they are made of: [`IdValue`] (implemented for the integer
//! types, `String`, `ObjectId` and the UUID types), the [`Scope`] of a scoped counter, the
//! [`IdRange`] a reservation returns, the [`Bounds`] of a counter's values, the
//! [`CounterKey`] of a counter document, and how a counter value [renders](Rendering) as an
//! ID. Plain data and arithmetic: nothing here talks to a server or holds state between calls.
//!
//! ```
//! use sequence_runtime::id::{Bounds, IdRange};
//! let twelve_digits = Bounds::digits(12).unwrap();
//! assert_eq!(twelve_digits.start, 100_000_000_000);
//! let range = IdRange::new(5, 9).unwrap();
//! assert_eq!(range.len(), 5);
//! ```

mod bounds;
mod counter_key;
mod generated;
mod period;
mod range;
mod render;
mod scope;
mod spelling;
mod sqids_encoder;
mod value;

pub use crate::error::IdProblem;
pub use bounds::{Bounds, Limit};
pub(crate) use counter_key::bson_integer;
pub use counter_key::CounterKey;
pub use generated::Generated;
pub use period::ParsedId;
pub(crate) use period::{canonical_start, Format, Slot};
pub use range::IdRange;
pub use render::Rendering;
pub use scope::Scope;
pub(crate) use spelling::Spelling;
pub use value::IdValue;
