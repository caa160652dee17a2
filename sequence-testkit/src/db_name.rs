//! Database names unique to a test, so that tests sharing a server do not
//! see each other's data.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// A database name unique to this test, so that each test uses its own
/// database.
///
/// `unique_db_name("counter_continues")` returns something like
/// `t_counter_continues_4242_lx3k9q_0`: the test name, the process id, the
/// process start time (so names do not repeat across runs against a
/// long-lived `MONGODB_URI` deployment) and a counter. Characters other than
/// `[A-Za-z0-9_]` become `_`, and the test name is shortened so that the
/// whole name fits MongoDB's 63-byte limit.
pub fn unique_db_name(test: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static STAMP: OnceLock<String> = OnceLock::new();
    let stamp = STAMP.get_or_init(|| {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        base36(secs)
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    db_name(test, std::process::id(), stamp, n)
}

const MAX_DB_NAME_LEN: usize = 63;

fn db_name(test: &str, pid: u32, stamp: &str, n: u64) -> String {
    let suffix = format!("_{pid}_{stamp}_{n}");
    let room = MAX_DB_NAME_LEN.saturating_sub(2 + suffix.len());
    let name: String = test
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(room)
        .collect();
    format!("t_{name}{suffix}")
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_names_are_valid_and_unique() {
        let a = unique_db_name("counter_continues");
        let b = unique_db_name("counter_continues");
        assert_ne!(a, b);
        assert!(a.starts_with("t_counter_continues_"), "{a}");
        assert!(a.contains(&format!("_{}_", std::process::id())), "{a}");
        for name in [&a, &b] {
            assert!(name.len() <= MAX_DB_NAME_LEN);
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        }
    }

    #[test]
    fn db_names_are_sanitized_and_truncated() {
        assert_eq!(db_name("a.b-c d/ü", 7, "x", 3), "t_a_b_c_d___7_x_3");
        let long = "x".repeat(200);
        let name = db_name(&long, u32::MAX, "zzzzzzz", u64::MAX);
        assert_eq!(name.len(), MAX_DB_NAME_LEN);
        assert!(name.ends_with(&format!("_{}_zzzzzzz_{}", u32::MAX, u64::MAX)));
        let name = unique_db_name(&"é".repeat(100));
        assert!(name.len() <= MAX_DB_NAME_LEN);
        assert!(name.is_ascii());
    }

    #[test]
    fn base36_digits() {
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
    }
}
