//! The values of the crate: IDs and the types they are made from, counter keys, scopes,
//! periods, ranges and bounds, clocks. Plain data and arithmetic: nothing here talks to a
//! server or holds state between calls.

mod bounds;
mod clock;
mod generated;
mod id;
mod key;
mod period;
mod range;
mod render;
mod scope;

pub use bounds::Bounds;
pub use clock::{Clock, ManualClock, SystemClock};
pub use generated::Generated;
pub use id::IdValue;
pub(crate) use key::bson_integer;
pub use key::CounterKey;
pub(crate) use period::{Format, Slot};
pub use range::IdRange;
pub use render::Rendering;
pub use scope::Scope;
