//! Inserts whose outcome is unknown are sent again with the same document, so with the same ID.
//!
//! The driver retries a retryable write once, with the same transaction number, after a network
//! error or a primary stepping down. When that retry fails too, or when the server applied the
//! insert but could not confirm its write concern, the caller cannot tell whether the document
//! was stored. Taking a new number would leave one of them unused at best, and with an ID field
//! that is not `_id`, store the document twice at worst. So `insert_with_id` sends the very same
//! document again (its `_id` fixed before the first attempt), a bounded number of times, and a
//! duplicate key on that `_id` counts as success only if the stored document is this one and is
//! majority-committed.

use std::time::Duration;

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{doc, Bson, Document, RawDocumentBuf};
use mongodb::options::{InsertOneOptions, ReadConcern};
use mongodb::Collection;
use serde::ser::Error as _;
use serde::Serialize;

use crate::error::driver::{is_duplicate_key, outcome_unknown, Access};
use crate::error::{Error, Result};
use crate::store::literal;

/// Attempts of one insert by this crate; the driver may retry each of them once on its own.
pub(crate) const INSERT_ATTEMPTS: u32 = 4;

/// Pause before the second attempt; it doubles for each further one.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// Inserts `doc` into `coll`, retrying with the same document while the outcome is unknown.
///
/// Returns [`Error::Mongo`] with the last error of unknown outcome once the attempts are used
/// up (the document may or may not be stored), and any other error as it comes.
pub(crate) async fn insert_one<T: Serialize + Send + Sync>(
    coll: &Collection<T>,
    doc: &T,
    options: Option<&InsertOneOptions>,
) -> Result<()> {
    let document = with_fixed_id(doc)?;
    let docs = coll.clone_with_type::<RawDocumentBuf>();
    let mut unknown: Option<mongodb::error::Error> = None;
    for attempt in 1..=INSERT_ATTEMPTS {
        if attempt > 1 {
            tokio::time::sleep(backoff(attempt)).await;
        }
        match docs
            .insert_one(&document)
            .with_options(options.cloned())
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if unknown.is_some() && is_duplicate_key(&e) => {
                // An earlier attempt may have stored the document after all.
                match stored_copy(&docs, &document).await? {
                    Stored::Ours => return Ok(()),
                    Stored::NotOurs => {
                        return Err(Error::from_driver_on(e, coll.namespace(), Access::Insert))
                    }
                    Stored::NotYetMajority => {}
                }
            }
            Err(e) if outcome_unknown(&e) => {
                tracing::debug!(target: crate::observability::INSERT, attempt, error = %e, "Insert resent");
                unknown = Some(e);
            }
            Err(e) => return Err(Error::from_driver_on(e, coll.namespace(), Access::Insert)),
        }
    }
    let unknown = unknown.expect("only attempts of unknown outcome lead past the loop");
    Err(Error::from_driver_on(
        unknown,
        coll.namespace(),
        Access::Insert,
    ))
}

/// The document as BSON, with an `_id` that stays the same across attempts (the driver would
/// generate a new one for each attempt if the model has none). Serialized once, as the driver
/// does it (raw, not human-readable), so the stored document is the one an insert of `doc`
/// stores, and the insert sends these bytes as they are: an insert costs the client what a
/// plain `insert_one` does.
fn with_fixed_id<T: Serialize>(doc: &T) -> Result<RawDocumentBuf> {
    let raw = serialized(doc)?;
    if raw.get("_id").map_err(malformed)?.is_some() {
        return Ok(raw);
    }
    let mut with_id = RawDocumentBuf::new();
    with_id.append("_id", ObjectId::new());
    for element in &raw {
        let (key, value) = element.map_err(malformed)?;
        with_id.append(key, value.to_raw_bson());
    }
    Ok(with_id)
}

/// `doc` serialized as the driver serializes it (raw, not human-readable).
pub(crate) fn serialized<T: Serialize>(doc: &T) -> Result<RawDocumentBuf> {
    mongodb::bson::to_raw_document_buf(doc).map_err(|e| Error::Serialization {
        what: "the document",
        source: e.into(),
    })
}

/// A raw document's error, as a serialization error.
fn malformed(e: mongodb::bson::raw::Error) -> Error {
    Error::Serialization {
        what: "the document",
        source: mongodb::bson::ser::Error::custom(e).into(),
    }
}

/// `doc` serialized as the driver serializes it, with an `_id` (as [`with_fixed_id`] fixes
/// it), as a document.
pub(crate) fn fixed_document<T: Serialize>(doc: &T) -> Result<Document> {
    fixed_document_and_size(doc).map(|(document, _)| document)
}

/// [`fixed_document`], with its size serialized in bytes.
pub(super) fn fixed_document_and_size<T: Serialize>(doc: &T) -> Result<(Document, usize)> {
    let raw = with_fixed_id(doc)?;
    let bytes = raw.as_bytes().len();
    Ok((raw.to_document().map_err(malformed)?, bytes))
}

/// `doc` serialized as the driver serializes it, as a document.
pub(crate) fn document<T: Serialize>(doc: &T) -> Result<Document> {
    serialized(doc)?.to_document().map_err(malformed)
}

/// What is stored under the `_id` of a document whose earlier insert had an unknown outcome.
#[derive(Debug, PartialEq)]
pub(super) enum Stored {
    /// This very document, majority-committed: the earlier attempt succeeded.
    Ours,
    /// Another document, or none (the duplicate key is on another unique index).
    NotOurs,
    /// This document, not yet majority-committed, or the check itself failed: still unknown.
    NotYetMajority,
}

/// What is stored under the `_id` of `raw`. A read that fails leaves the outcome unknown,
/// except a missing privilege, which is the caller's error.
pub(super) async fn stored_copy(
    docs: &Collection<RawDocumentBuf>,
    raw: &RawDocumentBuf,
) -> Result<Stored> {
    let Ok(document) = raw.to_document() else {
        return Ok(Stored::NotOurs);
    };
    let docs = docs.clone_with_type::<Document>();
    let id = document.get("_id").cloned().unwrap_or(Bson::Null);
    // A document the server stored has an `_id` a filter matches as data.
    let Ok(id) = literal::exactly("_id", &id) else {
        return Ok(Stored::NotOurs);
    };
    let filter = doc! { "_id": id };
    let refused = |e| match Error::from_driver_on(e, docs.namespace(), Access::Confirm) {
        e @ Error::Unauthorized { .. } => Err(e),
        _ => Ok(Stored::NotYetMajority),
    };
    match docs.find_one(filter.clone()).await {
        Ok(Some(stored)) if stored == document => {}
        Ok(_) => return Ok(Stored::NotOurs),
        Err(e) => return refused(e),
    }
    let majority = docs
        .find_one(filter)
        .read_concern(ReadConcern::majority())
        .await;
    match majority {
        Ok(Some(stored)) if stored == document => Ok(Stored::Ours),
        Ok(_) => Ok(Stored::NotYetMajority),
        Err(e) => refused(e),
    }
}

/// The pause before attempt `attempt` (from 2) of a write of unknown outcome.
pub(crate) fn backoff(attempt: u32) -> Duration {
    FIRST_BACKOFF.saturating_mul(1 << attempt.saturating_sub(2).min(5))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Numbered {
        number: i64,
    }

    #[derive(Serialize)]
    struct Keyed {
        #[serde(rename = "_id")]
        id: i64,
        name: &'static str,
    }

    #[test]
    fn a_missing_id_is_fixed_once_and_put_first() {
        let document = with_fixed_id(&Numbered { number: 7 })
            .unwrap()
            .to_document()
            .unwrap();
        assert_eq!(document.keys().next().map(String::as_str), Some("_id"));
        assert!(matches!(document.get("_id"), Some(Bson::ObjectId(_))));
        assert_eq!(document.get_i64("number").unwrap(), 7);
        let keyed = with_fixed_id(&Keyed { id: 3, name: "a" }).unwrap();
        assert_eq!(
            keyed.to_document().unwrap(),
            doc! { "_id": 3_i64, "name": "a" }
        );
    }

    /// Serializes differently for human-readable formats, as `uuid` or `chrono` types do: as
    /// the driver serializes (raw), the `i32` 1.
    pub(in crate::model) struct ByFormat;

    impl Serialize for ByFormat {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            if s.is_human_readable() {
                s.serialize_str("text")
            } else {
                s.serialize_i32(1)
            }
        }
    }

    #[derive(Serialize)]
    struct WithShape {
        shape: ByFormat,
    }

    #[test]
    fn documents_are_serialized_as_the_driver_does() {
        let document = with_fixed_id(&WithShape { shape: ByFormat }).unwrap();
        assert_eq!(document.get_i32("shape").unwrap(), 1);
    }

    #[test]
    fn backoff_grows_and_is_bounded() {
        assert_eq!(backoff(2), FIRST_BACKOFF);
        assert_eq!(backoff(3), FIRST_BACKOFF * 2);
        assert!(backoff(u32::MAX) <= FIRST_BACKOFF * 32);
    }
}
