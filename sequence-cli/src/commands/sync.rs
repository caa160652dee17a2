//! `sync`: moves the counters of a sequence up to the highest ID stored in a collection.

use mongodb::Client;

use crate::args::Given;
use crate::args::SyncArgs;
use crate::failure::Failure;
use crate::known::for_documents;
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
    let flags = (args.create, args.dry_run);
    let (seq, field) = for_documents(&db, &args.name, given, &args.scope, flags, out).await?;
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
