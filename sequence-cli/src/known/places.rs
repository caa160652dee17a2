//! Where a database keeps what is known of its sequences: the collections that hold counters,
//! the records beside them, and the counter documents of one sequence in a collection.

use mongodb::bson::{doc, Document};
use mongodb::error::ErrorKind;
use mongodb::Database;
use sequence_runtime::options::FilterValue;
use sequence_runtime::store::{SequenceRecord, StoredCounter};
use sequence_runtime::Error;

use crate::args::Shape;
use crate::counters::find;
use crate::failure::Failure;
use crate::output::Output;

/// The server's code of a command refused for a missing privilege.
const UNAUTHORIZED: i32 = 13;

/// The collections where the libraries whose layouts this crate speaks keep their counters
/// by default: this crate's and mongoose-sequence's, typegoose's and mongoose-auto-increment's,
/// MongoEngine's.
pub(crate) const KNOWN_COUNTERS: [&str; 3] =
    ["counters", "identitycounters", "mongoengine.counters"];

/// The collections of `db` that hold counters: `given` (whether or not it exists), those with
/// a record collection beside them, and the known layouts' own that exist, in that order
/// without repeats. A user who may not list the collections gets a warning and `given`, else
/// `counters`.
pub(crate) async fn counters_collections(
    db: &Database,
    given: Option<&str>,
    out: &Output,
) -> Result<Vec<String>, Failure> {
    let names: Vec<String> = match db.list_collection_names().await {
        Ok(names) => names,
        Err(e) if matches!(&*e.kind, ErrorKind::Command(c) if c.code == UNAUTHORIZED) => {
            let only = given.unwrap_or(KNOWN_COUNTERS[0]);
            out.warn(&format!(
                "cannot list the collections of `{}` (the `listCollections` action is \
                 missing): looking in `{only}` alone; `--counters` names another",
                db.name()
            ));
            return Ok(vec![only.to_owned()]);
        }
        Err(e) => return Err(e.into()),
    };
    let mut places: Vec<String> = Vec::new();
    let mut add = |place: &str| {
        if !places.iter().any(|p| p == place) {
            places.push(place.to_owned());
        }
    };
    if let Some(given) = given {
        add(given);
    }
    let mut recorded: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_suffix(".sequences"))
        .collect();
    recorded.sort_unstable();
    for place in recorded {
        add(place);
    }
    for place in KNOWN_COUNTERS {
        if names.iter().any(|n| n == place) {
            add(place);
        }
    }
    Ok(places)
}

/// The counter documents of sequence `name` in `counters` of `db`, as `shape` reads them: a
/// filter without a `name` field finds the counters of one sequence, whatever its name.
pub(super) async fn named(
    db: &Database,
    counters: &str,
    name: &str,
    shape: &Shape,
) -> Result<Vec<(Document, StoredCounter)>, Failure> {
    let mut found = find(&db.collection(counters), doc! {}, shape).await?;
    let unnamed = shape
        .filter
        .as_ref()
        .is_some_and(|f| !f.0.iter().any(|f| f.value == FilterValue::Name));
    found.retain(|(_, c)| unnamed || c.name == name);
    Ok(found)
}

/// The records beside `counters` in `db` (of `name` only, where given). A user who may not
/// read them gets a warning and none: the limits are then unknown, and a gapless sequence is
/// not recognised.
pub(crate) async fn records(
    db: &Database,
    counters: &str,
    name: Option<&str>,
    out: &Output,
) -> Result<Vec<SequenceRecord>, Failure> {
    let read = match name {
        Some(name) => SequenceRecord::read(db, counters, name)
            .await
            .map(|r| r.into_iter().collect()),
        None => SequenceRecord::read_all(db, counters).await,
    };
    match read {
        Ok(records) => Ok(records),
        Err(Error::Unauthorized { namespace, .. }) => {
            out.warn(&format!(
                "cannot read the sequences' settings in `{namespace}` (the `find` action on it \
                 is missing): limits are unknown and a gapless sequence is not recognised"
            ));
            Ok(Vec::new())
        }
        Err(e) => Err(e.into()),
    }
}
