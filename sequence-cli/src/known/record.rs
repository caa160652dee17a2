//! What a sequence's record says to a command: how its counters are read, and which flags
//! contradict it.

use sequence_runtime::options::{filter, FilterValue, Layout};
use sequence_runtime::store::SequenceRecord;

use crate::args::{Given, Shape};
use crate::failure::Failure;

/// How the counters of a recorded sequence are read.
pub(crate) fn record_shape(record: &SequenceRecord) -> Shape {
    Shape {
        field: Some(record.field.clone()),
        stores: Some(record.stores),
        filter: record
            .filter_fields()
            .ok()
            .filter(|f| !f.is_empty())
            .map(crate::args::Filter),
    }
}

/// Refuses every flag of `given` that contradicts `record` (in `place`), naming both.
pub(super) fn contradictions(
    record: &SequenceRecord,
    place: &str,
    given: Given<'_>,
) -> Result<(), Failure> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut differs = |flag: &str, given: String, recorded: String| {
        if given != recorded {
            found.push((format!("`{flag} {given}`"), recorded));
        }
    };
    if let Some(layout) = given.layout {
        differs(
            "--layout",
            layout.name().to_owned(),
            record.layout.name().to_owned(),
        );
    }
    // The ID field is part of the counters' key in the layouts that hold it.
    let holds_id_field = matches!(
        record.layout,
        Layout::Typegoose | Layout::MongooseAutoIncrement
    ) || record
        .filter_fields()
        .is_ok_and(|f| f.iter().any(|f| f.value == FilterValue::IdField));
    if let Some(id_field) = given.id_field.filter(|_| holds_id_field) {
        differs("--id-field", id_field.to_owned(), record.id_field.clone());
    }
    if let Some(prefix) = given.prefix {
        let recorded = record.prefix.clone().unwrap_or_else(|| "none".to_owned());
        differs("--prefix", prefix.to_owned(), recorded);
    }
    if let Some(shape) = given.shape {
        if let Some(field) = &shape.field {
            differs("--field", field.clone(), record.field.clone());
        }
        if let Some(stores) = shape.stores {
            differs(
                "--stores",
                stores.name().to_owned(),
                record.stores.name().to_owned(),
            );
        }
        if let Some(f) = &shape.filter {
            let written = filter::display(&f.0);
            let recorded = record
                .filter_fields()
                .map(|f| filter::display(&f))
                .unwrap_or_else(|_| record.filter.clone());
            differs("--filter", written, recorded);
        }
    }
    if let Some(sequence) = given.sequence {
        for (flag, value, recorded) in sequence.against(record) {
            differs(flag, value, recorded);
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = found
        .iter()
        .map(|(flag, recorded)| format!("{flag} (recorded: `{recorded}`)"))
        .collect();
    Err(Failure::usage(format!(
        "{} contradict{} the record of sequence `{}` in `{}`; nothing was done",
        list.join(", "),
        if found.len() == 1 { "s" } else { "" },
        record.name,
        SequenceRecord::collection_name(place)
    ))
    .hint("leave the flag out: the record says how the sequence's counters and IDs look"))
}
