//! `repair`: claims the documents without a claim, and with `--prune` deletes the claims no
//! document holds.

use mongodb::Client;

use crate::args::ClaimsArgs;
use crate::failure::Failure;
use crate::known::claims_of;
use crate::output::{repair_text, Output, Working};
use crate::server;

/// Repairs the claims `args` names: prunes them with `prune`, writes nothing with `dry_run`.
pub(crate) async fn run(
    client: &Client,
    counters: Option<&str>,
    args: &ClaimsArgs,
    prune: bool,
    dry_run: bool,
    out: &Output,
) -> Result<(), Failure> {
    let claims = claims_of(client, args, counters, out).await?;
    let (_, target) = server::collection(client, &args.target)?;
    let total = server::estimated_count(&target).await;
    let doing = format!("repairing the claims of `{}`", args.target);
    let working = Working::start(out, &doing, "read", total);
    let report = claims
        .repair()
        .prune(prune)
        .dry_run(dry_run)
        .limit(args.limit)
        .await;
    working.finish();
    let report = report?;
    let json = serde_json::to_value(&report).map_err(|e| Failure::error(e.to_string()))?;
    out.print(json, || repair_text(&report, args.limit));
    Ok(())
}
