//! How each strategy makes its values from the one mechanism of the stores (reserve a
//! contiguous range):
//!
//! - `maker.rs`: what a sequence makes its values with (counters, random draws, generated
//!   values);
//! - `counters.rs`: the counters a sequence takes numbers from (one, or shards): the one place
//!   that tells the `counter` and `ranges` strategies apart;
//! - `reservation_origin.rs`: where a reservation shared by several callers takes its values;
//! - `ranges.rs`: the shards of a ranges sequence, each owning a slice of the values;
//! - `draw.rs`: uniform random draws.

mod counters;
mod draw;
mod maker;
mod ranges;
mod reservation_origin;

pub(crate) use counters::Counters;
pub(crate) use maker::Maker;
pub(crate) use ranges::{FullShards, Shards};
pub(crate) use reservation_origin::Origin;
