//! What the reliability suite (`reliability_*.rs`) shares: error classification (fail points,
//! counter reads and the shared models are in `common`).

#![allow(dead_code)]

use mongo_sequence::Error;

/// A short name for the kind of an error, for summaries and assertions.
pub fn kind(e: &Error) -> String {
    match e {
        Error::Mongo(m) => match &*m.kind {
            mongodb::error::ErrorKind::Io(_) => "mongo:io".into(),
            mongodb::error::ErrorKind::ServerSelection { .. } => "mongo:server-selection".into(),
            mongodb::error::ErrorKind::ConnectionPoolCleared { .. } => "mongo:pool-cleared".into(),
            mongodb::error::ErrorKind::Command(c) => format!("mongo:command:{}", c.code),
            mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteConcernError(
                w,
            )) => format!("mongo:write-concern:{}", w.code),
            mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(w)) => {
                format!("mongo:write:{}", w.code)
            }
            _ => "mongo:other".into(),
        },
        Error::DuplicateKey { .. } => "duplicate-key".into(),
        Error::Exhausted { .. } => "exhausted".into(),
        Error::CorruptCounter { .. } => "corrupt-counter".into(),
        Error::IdOutOfRange { .. } => "id-out-of-range".into(),
        other => format!("other:{other}"),
    }
}

/// Counts per kind, for summary lines: `io=3,command:91=2`.
pub fn tally(kinds: &[String]) -> String {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for k in kinds {
        *counts.entry(k.as_str()).or_default() += 1;
    }
    if counts.is_empty() {
        return "none".into();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k}={n}"))
        .collect::<Vec<_>>()
        .join(",")
}
