//! `ensure-indexes`: creates the indexes a sequence's documents need.

use std::sync::Arc;

use mongodb::Client;
use sequence_runtime::store::MongoStore;
use sequence_runtime::{Sequence, SequenceOptions};
use serde_json::json;

use crate::args::EnsureIndexesArgs;
use crate::failure::Failure;
use crate::known::records;
use crate::output::{index_report, Output};
use crate::server;

/// Creates the indexes that the documents of `args.target` numbered by the sequence
/// `args.name`, with counters in `counters`, need.
pub(crate) async fn run(
    client: &Client,
    counters: &str,
    args: &EnsureIndexesArgs,
    out: &Output,
) -> Result<(), Failure> {
    let (db, target) = server::collection(client, &args.target)?;
    let record = records(&db, counters, Some(&args.name), out).await?.pop();
    let base = match &record {
        Some(record) => record.options(counters)?,
        None => SequenceOptions::builder(args.name.clone()).counters(counters),
    };
    let mut options = args.sequence.apply(base, None, None);
    if !args.scope.is_empty() {
        options = options.scope(args.scope.iter().cloned());
    }
    let options = options.build();
    let field = args
        .field
        .clone()
        .or_else(|| record.as_ref().map(|r| r.id_field.clone()))
        .unwrap_or_else(|| "_id".to_owned());
    // A store without a record: the record is the application's.
    let seq = Sequence::with_store(Arc::new(MongoStore::new(&db, &options)?), options)?;
    let report = seq.ensure_indexes(&target, &field).await?;
    let (json, text) = index_report(&report);
    out.print(json!({ "indexes": json }), || text);
    Ok(())
}
