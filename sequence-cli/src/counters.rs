//! The counter documents of a counters collection: the scope and shard the arguments name,
//! finding and decoding the documents, and the values they hold.

use futures_util::TryStreamExt;
use mongodb::bson::{Bson, Document};
use mongodb::Collection;
use sequence_runtime::{id::Bounds, store::StoredCounter, Scope};

use crate::args::{CounterArgs, Shape};
use crate::failure::Failure;

/// Refuses a shard given with a period or scope values: a shard's counter has neither.
pub(crate) fn shard_alone(args: &CounterArgs) -> Result<(), Failure> {
    if args.shard.is_some() && (args.period.is_some() || !args.scope.is_empty()) {
        return Err(Failure::usage(
            "a shard's counter has no period and no scope: give `--shard` alone",
        ));
    }
    Ok(())
}

/// The scope values of `--scope`, their field names checked; `None` without any.
pub(crate) fn scope(args: &CounterArgs) -> Result<Option<Scope>, Failure> {
    if args.scope.is_empty() {
        return Ok(None);
    }
    let scope = Scope::from_values(args.scope.iter().cloned());
    scope.check_names()?;
    Ok(Some(scope))
}

/// The counter documents `filter` selects, decoded, in the order of name, period and shard.
pub(crate) async fn find(
    coll: &Collection<Document>,
    filter: Document,
    shape: &Shape,
) -> Result<Vec<(Document, StoredCounter)>, Failure> {
    let docs: Vec<Document> = coll.find(filter).await?.try_collect().await?;
    let mut found: Vec<(Document, StoredCounter)> = docs
        .into_iter()
        .filter_map(|d| shape.decode(&d).map(|c| (d, c)))
        .collect();
    found.sort_by(|(_, a), (_, b)| {
        (&a.name, &a.period, a.shard).cmp(&(&b.name, &b.period, b.shard))
    });
    Ok(found)
}

/// The integer a BSON number holds exactly.
pub(crate) fn integer(value: Option<&Bson>) -> Option<i64> {
    match value? {
        Bson::Int32(v) => Some(i64::from(*v)),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 => Some(*v as i64),
        _ => None,
    }
}

/// The slice `lo..=hi` a shard's counter document holds.
pub(crate) fn slice_of(doc: &Document) -> Option<Bounds> {
    Bounds::new(integer(doc.get("lo"))?, integer(doc.get("hi"))?).ok()
}

/// The values of a counter: of a shard, the slice its document holds; else `limits` (`None`:
/// unknown).
pub(crate) fn bounds_of(
    doc: &Document,
    counter: &StoredCounter,
    limits: Option<Bounds>,
) -> Option<Bounds> {
    counter.shard.and_then(|_| slice_of(doc)).or(limits)
}

/// The room left after `last` before `bounds.max`, and the share of `bounds` used.
pub(crate) fn room(last: i64, bounds: Bounds) -> (u64, f64) {
    let (start, max) = (i128::from(bounds.start), i128::from(bounds.max));
    let last = i128::from(last).clamp(start - 1, max);
    let left = u64::try_from(max - last).unwrap_or(u64::MAX);
    // Both as f64: the share, not the exact count, is what is wanted.
    let used = (last - start + 1) as f64 / (max - start + 1) as f64;
    (left, used)
}
