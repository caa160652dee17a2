//! What the reliability suite (`reliability_*.rs`) shares: counter reads and error
//! classification (fail points are in `common`).

#![allow(dead_code)]

use mongo_sequence::Error;
use mongodb::bson::doc;

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

/// Gapless documents whose `code` the tests make unique (with an index), so that a repeated
/// code fails one insert on purpose.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, mongo_sequence::SequentialId)]
#[seq(name = "receipt", gapless)]
pub struct Receipt {
    /// The gapless number.
    #[serde(rename = "_id")]
    pub id: i64,
    /// Unique.
    pub code: String,
}

/// The receipt of call `i` of the inserts labelled `prefix`: one call in eight repeats the code
/// of the call before, so that the unique index on `code` refuses it. Returns it with whether
/// it repeats.
pub fn receipt(prefix: &str, i: u64) -> (Receipt, bool) {
    let repeats = i % 8 == 7;
    let n = if repeats { i - 1 } else { i };
    let receipt = Receipt {
        id: 0,
        code: format!("{prefix}-{n}"),
    };
    (receipt, repeats)
}
