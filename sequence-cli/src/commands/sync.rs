//! `sync`: moves the counters of a sequence up to the highest ID stored in a collection.

use std::sync::Arc;

use mongodb::Client;
use sequence_runtime::store::MongoStore;
use sequence_runtime::Sequence;

use crate::args::SyncArgs;
use crate::failure::Failure;
use crate::output::{sync_json, sync_text, Output};
use crate::server;

/// Moves the counters in `counters` of the sequence `args` names past the IDs of its target.
pub(crate) async fn run(
    client: &Client,
    counters: &str,
    args: &SyncArgs,
    out: &Output,
) -> Result<(), Failure> {
    let (db, target) = server::collection(client, &args.target)?;
    let options = args
        .sequence
        .options(
            &args.name,
            counters,
            args.counter_field.as_deref(),
            args.stores,
        )
        .scope(args.scope.iter().cloned())
        .id_field(&args.field);
    let options = match &args.filter {
        Some(filter) => options.filter(filter.0.iter().cloned()),
        None => options,
    };
    let options = options.build();
    // A store without a record: the record is the application's.
    let seq = Sequence::with_store(Arc::new(MongoStore::new(&db, &options)?), options)?;
    let report = seq
        .sync_counters(&target, &args.field)
        .text(args.text)
        .dry_run(args.dry_run)
        .await?;
    out.print(sync_json(&report), || sync_text(&report));
    Ok(())
}
