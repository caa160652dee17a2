//! Locking the mutexes of this crate.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, also when a thread panicked while holding it: what the
/// mutexes of this crate guard stays usable after such a panic, and cleanup
/// must still run.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
