//! `check`: the claims of a proxy collection against its collection.

use mongodb::Client;

use crate::args::ClaimsArgs;
use crate::failure::{Failure, PROBLEMS_FOUND};
use crate::known::claims_of;
use crate::output::{check_text, Output, Working};
use crate::server;

/// Checks the claims `args` names; exit status [`PROBLEMS_FOUND`] when it finds problems.
pub(crate) async fn run(
    client: &Client,
    counters: Option<&str>,
    args: &ClaimsArgs,
    out: &Output,
) -> Result<(), Failure> {
    let claims = claims_of(client, args, counters, out).await?;
    let (_, target) = server::collection(client, &args.target)?;
    let total = server::estimated_count(&target).await;
    let working = Working::start(
        out,
        &format!("checking `{}`", args.target),
        "checked",
        total,
    );
    let report = claims.check().limit(args.limit).await;
    working.finish();
    let report = report?;
    let json = serde_json::to_value(&report).map_err(|e| Failure::error(e.to_string()))?;
    out.print(json, || check_text(&report, args.limit));
    if report.is_clean() {
        Ok(())
    } else {
        Err(Failure::error("problems found").status(PROBLEMS_FOUND))
    }
}
