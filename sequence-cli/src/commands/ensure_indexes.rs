//! `ensure-indexes`: creates the indexes a sequence's documents need.

use mongodb::Client;
use serde_json::json;

use crate::args::EnsureIndexesArgs;
use crate::args::Given;
use crate::failure::Failure;
use crate::known::for_documents;
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
    let flags = (args.create, args.dry_run);
    let (seq, field) = for_documents(&db, &args.name, given, &args.scope, flags, out).await?;
    let report = seq
        .ensure_indexes(&target, &field)
        .dry_run(args.dry_run)
        .await?;
    let (json, text) = index_report(&report);
    out.print(json!({ "indexes": json }), || text);
    Ok(())
}
