//! The `tracing` targets this crate emits under, one per component (listed with their events in
//! the module's documentation), and the threshold of the warning of a counter near its end.

/// The target of the reservation span and of the events about reservations.
pub(crate) const RESERVE: &str = "mongo_sequence::reserve";
/// The target of the cache's events.
pub(crate) const CACHE: &str = "mongo_sequence::cache";
/// The target of skips ahead of stored IDs.
pub(crate) const SKIP_AHEAD: &str = "mongo_sequence::skip_ahead";
/// The target of the insert path's events.
pub(crate) const INSERT: &str = "mongo_sequence::insert";
/// The target of gapless inserts' events.
pub(crate) const GAPLESS: &str = "mongo_sequence::gapless";
/// The target of the random strategy's events.
pub(crate) const RANDOM: &str = "mongo_sequence::random";
/// The target of the proxy collection's events (`unique = "proxy"`).
pub(crate) const PROXY: &str = "mongo_sequence::proxy";
/// The target of the ranges strategy's events.
pub(crate) const RANGES: &str = "mongo_sequence::ranges";
/// The target of periods' events.
pub(crate) const PERIOD: &str = "mongo_sequence::period";
/// The target of the counter stores' events.
pub(crate) const STORE: &str = "mongo_sequence::store";
/// The target of the operator's operations.
pub(crate) const ADMIN: &str = "mongo_sequence::admin";

/// The share of a counter's values used from which a reservation warns that its end is near.
pub(crate) const NEAR_END: f64 = 0.9;
