//! What writing a formatted ID costs in the process alone, with no server: `--render` times
//! [`Sequence::id_text`] over a million values of each formatted model of the bench and prints
//! the time and allocations per ID, to set beside the time of one insert (about 1 ms on a
//! 2-vCPU machine at 1 task).

use std::time::Instant;

use mongo_sequence::{Sequence, SequentialId};

use crate::alloc;
use crate::measure::Result;
use crate::scenarios::models::{BCrockford, BLuhn, BSqids, B25};

/// Values rendered per model.
const IDS: i64 = 1_000_000;

/// Prints a line per model: its row's name, nanoseconds and allocations per rendered ID.
pub fn report() -> Result<()> {
    let models = [
        ("insert_with_id", B25::SEQUENCE.options()),
        ("insert_with_id_luhn", BLuhn::SEQUENCE.options()),
        ("insert_with_id_crockford", BCrockford::SEQUENCE.options()),
        ("insert_with_id_sqids", BSqids::SEQUENCE.options()),
    ];
    println!("| row | ns per ID | allocations per ID | example |");
    println!("| --- | ---: | ---: | --- |");
    for (row, options) in models {
        let seq = Sequence::in_memory(options)?;
        let example = seq.id_text(12_345, None)?;
        let (allocations, started) = (alloc::allocations(), Instant::now());
        let mut bytes = 0;
        for value in 1..=IDS {
            bytes += seq.id_text(value, None)?.len();
        }
        let ns = started.elapsed().as_nanos() as f64 / IDS as f64;
        let allocations = (alloc::allocations() - allocations) as f64 / IDS as f64;
        // Used, so that the rendering is not optimized away.
        assert!(bytes > 0);
        println!("| `{row}` | {ns:.0} | {allocations:.1} | `{example}` |");
    }
    Ok(())
}
