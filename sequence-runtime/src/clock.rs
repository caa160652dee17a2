//! The clock a sequence reads to choose the period of dated IDs (`prefix = "YYMMDD"`): the
//! system's by default, a [`ManualClock`] in tests (see
//! [`Sequence::set_clock`](crate::Sequence::set_clock)).
//!
//! ```
//! use sequence_runtime::clock::{Clock, ManualClock};
//! use sequence_runtime::jiff::SignedDuration;
//! let clock = ManualClock::new("2025-11-22T22:59:00Z".parse().unwrap());
//! clock.advance(SignedDuration::from_secs(120));
//! assert_eq!(clock.now().to_string(), "2025-11-22T23:01:00Z");
//! ```

use std::fmt::Debug;
use std::sync::{Mutex, PoisonError};

use jiff::{SignedDuration, Timestamp};

/// The source of the current instant, which decides the period (day, month, hour…) of a
/// sequence with a date prefix.
///
/// [`SystemClock`] is the default. Tests give a sequence a [`ManualClock`] with
/// [`Sequence::set_clock`](crate::Sequence::set_clock) to cross midnight without waiting.
pub trait Clock: Debug + Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The system's real-time clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to, for tests.
///
/// ```
/// use sequence_runtime::{clock::Clock, clock::ManualClock};
/// use sequence_runtime::jiff::{SignedDuration, Timestamp};
///
/// let clock = ManualClock::new("2025-11-22T22:59:59Z".parse::<Timestamp>().unwrap());
/// clock.advance(SignedDuration::from_secs(1));
/// assert_eq!(clock.now().to_string(), "2025-11-22T23:00:00Z");
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Timestamp>,
}

impl ManualClock {
    /// A clock standing at `now`.
    pub fn new(now: Timestamp) -> Self {
        ManualClock {
            now: Mutex::new(now),
        }
    }

    /// Moves the clock to `now` (forwards or backwards).
    pub fn set(&self, now: Timestamp) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = now;
    }

    /// Moves the clock by `by` (negative: backwards). Saturates at the limits of [`Timestamp`].
    pub fn advance(&self, by: SignedDuration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now.saturating_add(by).unwrap_or(*now);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
