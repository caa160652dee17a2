//! `ensure-indexes`: creates the indexes a sequence's documents need.

use std::sync::Arc;

use mongodb::Client;
use sequence_runtime::store::MongoStore;
use sequence_runtime::Sequence;
use serde_json::json;

use crate::args::EnsureIndexesArgs;
use crate::failure::Failure;
use crate::known::{Given, Known};
use crate::output::{index_report, Output};
use crate::server;

/// Creates the indexes that the documents of `args.target` numbered by the sequence
/// `args.name`, where it is found (`counters`: the counters collection given, if any), need.
pub(crate) async fn run(
    client: &Client,
    counters: Option<&str>,
    args: &EnsureIndexesArgs,
    out: &Output,
) -> Result<(), Failure> {
    let (db, target) = server::collection(client, &args.target)?;
    let given = Given {
        counters,
        layout: args.sequence.layout(),
        shape: None,
        id_field: args.field.as_deref(),
        prefix: None,
        sequence: Some(&args.sequence),
    };
    let known = Known::find(&db, &args.name, given, out).await?;
    known.exists(args.create)?;
    known.confirm_write(counters, args.dry_run)?;
    let mut options = known.options(given)?;
    if !args.scope.is_empty() {
        options = options.scope(args.scope.iter().cloned());
    }
    let options = options.build();
    let field = args
        .field
        .clone()
        .or_else(|| known.record.as_ref().map(|r| r.id_field.clone()))
        .unwrap_or_else(|| "_id".to_owned());
    // A store without a record: the record is the application's.
    let seq = Sequence::with_store(Arc::new(MongoStore::new(&db, &options)?), options)?;
    let report = seq
        .ensure_indexes(&target, &field)
        .dry_run(args.dry_run)
        .await?;
    let (json, text) = index_report(&report);
    out.print(json!({ "indexes": json }), || text);
    Ok(())
}
