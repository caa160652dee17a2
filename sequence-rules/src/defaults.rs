//! The default of every option. The derive leaves out of its generated configuration what a
//! model does not write, and the runtime's builders start from these values.

/// The collection that holds the counters, in the target collection's database.
pub const COUNTERS: &str = "counters";

/// The counter field of the default layout (`{ _id: <name>, seq: <last issued> }`).
pub const COUNTER_FIELD: &str = "seq";

/// Values reserved per round trip: one, so nothing is cached.
pub const BATCH: u64 = 1;

/// With an adaptive batch, a range used up in fewer seconds than this doubles the next one.
pub const AUTO_GROW_BELOW_SECS: u64 = 15;

/// With an adaptive batch, a range that lasted more seconds than this halves the next one.
pub const AUTO_SHRINK_ABOVE_SECS: u64 = 60;

/// The first value a new counter issues.
pub const START: i64 = 1;

/// The largest value ever issued.
pub const MAX: i64 = i64::MAX;

/// Digits of the zero-padded counter part after a `prefix`.
pub const WIDTH: u8 = 6;

/// Counter documents of the `ranges` strategy.
pub const SHARDS: u32 = 16;

/// Draws of the `random` strategy after a collision, before giving up.
pub const RETRIES: u32 = 10;

/// Share of a cached range after which the next one is reserved in the background.
pub const PREFETCH_AT: f64 = 0.1;

/// How long a gapless insert retries transient transaction errors.
pub const TRANSACTION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The counter name of a model without `name = "..."`: its type name in snake case
/// (`UserAccount` → `user_account`, `HTTPRequest` → `http_request`).
///
/// ```
/// assert_eq!(sequence_rules::defaults::counter_name("UserAccount"), "user_account");
/// ```
pub fn counter_name(type_name: &str) -> String {
    let chars: Vec<char> = type_name.chars().collect();
    let mut out = String::with_capacity(type_name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = match prev {
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_uppercase() => next.is_some_and(|n| n.is_lowercase()),
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::counter_name;

    #[test]
    fn counter_names_of_type_names() {
        assert_eq!(counter_name("User"), "user");
        assert_eq!(counter_name("UserAccount"), "user_account");
        assert_eq!(counter_name("HTTPRequest"), "http_request");
        assert_eq!(counter_name("Invoice2024Line"), "invoice2024_line");
    }
}
