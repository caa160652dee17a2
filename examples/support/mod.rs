//! What the examples share: checking the claims they print.

/// Prints `ok: message` if `holds`, else fails the example with `claim failed: message`.
pub fn check(holds: bool, message: &str) -> Result<(), Box<dyn std::error::Error>> {
    if holds {
        println!("  ok: {message}");
        Ok(())
    } else {
        Err(format!("claim failed: {message}").into())
    }
}
