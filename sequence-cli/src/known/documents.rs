//! What the commands on the documents of a collection need of a sequence found as `Known`
//! finds it: a handle on its counters (`sync`, `ensure-indexes`) and the claims of a proxy
//! collection (`check`, `repair`).

use std::sync::Arc;

use mongodb::{Client, Database};
use sequence_runtime::claims::Claims;
use sequence_runtime::store::MongoStore;
use sequence_runtime::Sequence;

use super::Known;
use crate::args::{ClaimsArgs, Given};
use crate::failure::Failure;
use crate::output::Output;
use crate::server;

/// What a command on the documents of a collection (`sync`, `ensure-indexes`) needs of the
/// sequence `name` of `db`, found as `given` says: a handle on its counters, with the scope
/// fields `scope` where given, and the field the documents store the ID in (given, else
/// recorded, else `_id`). Refuses a sequence found nowhere unless `create`, and a write outside
/// `counters` that does not name its collection unless `dry_run`.
pub(crate) async fn for_documents(
    db: &Database,
    name: &str,
    given: Given<'_>,
    scope: &[String],
    (create, dry_run): (bool, bool),
    out: &Output,
) -> Result<(Sequence, String), Failure> {
    let known = Known::find(db, name, given, out).await?;
    known.exists(create)?;
    known.confirm_write(given.counters, dry_run)?;
    let mut options = known.options(given)?;
    if !scope.is_empty() {
        options = options.scope(scope.iter().cloned());
    }
    let field = given
        .id_field
        .map(str::to_owned)
        .or_else(|| known.record.as_ref().map(|r| r.id_field.clone()))
        .unwrap_or_else(|| "_id".to_owned());
    let options = options.id_field(&field).build();
    // A store without a record: the record is the application's.
    let store = MongoStore::new(db, &options)?;
    Ok((Sequence::with_store(Arc::new(store), options)?, field))
}

/// The claims of the collection and proxy collection `args` names: the ID field and scope
/// fields given, else those the record of `--name` (found where `counters` says, if
/// given) holds.
pub(crate) async fn claims_of(
    client: &Client,
    args: &ClaimsArgs,
    counters: Option<&str>,
    out: &Output,
) -> Result<Claims, Failure> {
    let (db, target) = server::collection(client, &args.target)?;
    let record = match &args.name {
        Some(name) => {
            let given = Given {
                counters,
                ..Given::default()
            };
            let known = Known::find(&db, name, given, out).await?;
            known.exists(false)?;
            known.record
        }
        None => None,
    };
    let field = match (&args.field, &record) {
        (Some(field), Some(record)) if *field != record.id_field => {
            return Err(Failure::usage(format!(
                "`--field {field}` contradicts the record of sequence `{}` (recorded: `{}`); \
                 nothing was done",
                record.name, record.id_field
            ))
            .hint("leave the flag out: the record says where the documents store the ID"))
        }
        (Some(field), _) => field.clone(),
        (None, Some(record)) => record.id_field.clone(),
        (None, None) => {
            return Err(Failure::usage(
                "give the ID field with `--field`, or the sequence with `--name` (its record \
                 says where the documents store the ID)",
            ))
        }
    };
    let scope = match (args.scope.is_empty(), &record) {
        (true, Some(record)) => record.scope.clone(),
        _ => args.scope.clone(),
    };
    let claims = match &args.proxy {
        Some(proxy) => Claims::new(&target, &field, &db.collection(proxy)),
        None => Claims::with_default_proxy(&target, &field),
    };
    Ok(claims.scope(scope))
}
