//! The directory of a server or network started by this crate: a fresh one under
//! [`std::env::temp_dir`], named for this process.

use std::fs;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::ProvisionError;

/// Creates a directory of its own under the temporary directory.
pub(crate) fn create_root_dir() -> Result<PathBuf, ProvisionError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut last_error = None;
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!(
            "mongo-sequence-{}-{n}-{stamp:08x}",
            std::process::id()
        ));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => {
                last_error = Some(e);
                break;
            }
        }
    }
    Err(ProvisionError::new(format!(
        "cannot create a directory under {} for mongod: {}; set TMPDIR to a writable directory",
        base.display(),
        last_error.map(|e| e.to_string()).unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_dirs_are_unique() {
        let a = create_root_dir().unwrap();
        let b = create_root_dir().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(std::env::temp_dir()));
        fs::remove_dir_all(a).unwrap();
        fs::remove_dir_all(b).unwrap();
    }
}
