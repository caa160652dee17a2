//! `sync`: moves the counters of a sequence up to the highest ID stored in a collection.

use std::sync::Arc;

use mongodb::Client;
use sequence_runtime::store::MongoStore;
use sequence_runtime::Sequence;

use crate::args::SyncArgs;
use crate::failure::Failure;
use crate::known::{Given, Known};
use crate::output::{sync_json, sync_text, Output, Working};
use crate::server;

/// Moves the counters of the sequence `args` names, where it is found (`counters`: the
/// counters collection given, if any), past the IDs of its target.
pub(crate) async fn run(
    client: &Client,
    counters: Option<&str>,
    args: &SyncArgs,
    out: &Output,
) -> Result<(), Failure> {
    let (db, target) = server::collection(client, &args.target)?;
    let shape = args.shape();
    let given = Given {
        counters,
        layout: args.sequence.layout(),
        shape: Some(&shape),
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
    let field = args
        .field
        .clone()
        .or_else(|| known.record.as_ref().map(|r| r.id_field.clone()))
        .unwrap_or_else(|| "_id".to_owned());
    let options = options.id_field(&field).build();
    // A store without a record: the record is the application's.
    let seq = Sequence::with_store(Arc::new(MongoStore::new(&db, &options)?), options)?;
    let total = server::estimated_count(&target).await;
    let doing = format!("reading the IDs of `{}`", args.target);
    let working = Working::start(out, &doing, "read", total);
    let report = seq
        .sync_counters(&target, &field)
        .text(args.text)
        .dry_run(args.dry_run)
        .await;
    working.finish();
    let report = report?;
    out.print(sync_json(&report), || sync_text(&report));
    Ok(())
}
