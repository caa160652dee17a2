//! Time zones, from the time zone database bundled with this crate, so that the host's
//! `/usr/share/zoneinfo` plays no part: the derive and the runtime know the same zones.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use jiff::tz::{TimeZone, TimeZoneDatabase};

/// The IANA time zone named `name` (`Europe/Berlin`, `UTC`; matched without regard to case),
/// if the bundled database knows it.
///
/// ```
/// assert!(sequence_rules::tz::time_zone("Europe/Berlin").is_some());
/// assert!(sequence_rules::tz::time_zone("Mars/Olympus").is_none());
/// ```
pub fn time_zone(name: &str) -> Option<TimeZone> {
    static DB: LazyLock<TimeZoneDatabase> = LazyLock::new(TimeZoneDatabase::bundled);
    static FOUND: LazyLock<Mutex<HashMap<String, TimeZone>>> = LazyLock::new(Default::default);
    let mut found = FOUND.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(tz) = found.get(name) {
        return Some(tz.clone());
    }
    let tz = DB.get(name).ok()?;
    found.insert(name.to_owned(), tz.clone());
    Some(tz)
}
