//! `next`: takes values from a counter, as `nextval` does.

use mongodb::Client;
use sequence_runtime::{Scope, Sequence};
use serde_json::{json, Value};

use crate::args::NextArgs;
use crate::failure::Failure;
use crate::output::Output;

/// Takes the values `args` asks for from the sequence it names, with counters in `counters`.
pub(crate) async fn run(
    client: &Client,
    counters: &str,
    args: &NextArgs,
    out: &Output,
) -> Result<(), Failure> {
    let db = client.database(&args.db);
    let fields = args.scope.iter().map(|(field, _)| field.clone());
    let options = args.sequence.options(&args.name, counters, None, None);
    let options = args.shape.apply(options).scope(fields).build();
    let mut seq = Sequence::new(&db, options)?;
    if !args.scope.is_empty() {
        seq = seq.in_scope(Scope::from_values(args.scope.iter().cloned()))?;
    }
    // IDs with a prefix or zero-padding are text, as a `String` ID field holds them.
    let ids: Vec<Value> = if args.sequence.prefix.is_some() || args.sequence.width.is_some() {
        let ids: Vec<String> = seq.reserve_ids(args.n).await?;
        ids.into_iter().map(Value::from).collect()
    } else {
        let range = seq.reserve(args.n).await?;
        (range.first()..=range.last()).map(Value::from).collect()
    };
    out.print(json!({ "name": args.name, "ids": ids }), || {
        let lines: Vec<String> = ids
            .iter()
            .map(|id| match id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        lines.join("\n")
    });
    Ok(())
}
