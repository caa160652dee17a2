//! `sync_counters`: every counter of a sequence moved up to the highest ID stored for it in a
//! target collection (after an import, a restore, a migration, another writer).
//!
//! One aggregation reads the stored IDs: it parses each back into the counter it belongs to
//! (the period of its prefix, the values of its scope fields, the slice of its shard) and its
//! counter value, and groups them; then each counter is moved up to its group's highest value
//! with one guarded update, never down. IDs that belong to no counter of the sequence (another
//! BSON type, text that does not match the pattern, values below `start`) are counted as
//! skipped.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::TryStreamExt;
use jiff::Timestamp;
use mongodb::bson::{doc, Bson, Document};
use mongodb::{ClientSession, Collection};
use sequence_rules::limits::MAX_EXACT_DOUBLE;
use sequence_rules::pattern::Pattern;

use super::sync_report::{SyncReport, SyncedCounter};
use crate::error::driver::Access;
use crate::error::{Error, Result};
use crate::id::{Bounds, CounterKey, Format, Scope};
use crate::options::SequenceOptions;
use crate::store::layout::CounterLayout;
use crate::store::CounterStore;
use crate::strategy::Shards;

/// Where a sequence's IDs are stored, and how they look.
pub(crate) struct Source<'a> {
    pub(crate) coll: &'a Collection<Document>,
    /// The stored name of the ID field.
    pub(crate) field: &'a str,
    /// The `scope` names with the names they are stored under.
    pub(crate) scope: Vec<(&'a str, &'a str)>,
    /// Whether the IDs are text (else numbers).
    pub(crate) text: bool,
}

/// The sequence whose counters are synced.
pub(crate) struct Target<'a> {
    /// The sequence's options: its name, and what its counters can hold as scope values.
    pub(crate) options: &'a SequenceOptions,
    pub(crate) store: &'a Arc<dyn CounterStore>,
    pub(crate) bounds: Bounds,
    pub(crate) format: &'a Format,
    pub(crate) pattern: Option<&'a Pattern>,
    pub(crate) width: Option<u8>,
    pub(crate) shards: Option<&'a Shards>,
    /// The current instant, which reads two-digit years (`YY`) in the nearest century.
    pub(crate) now: Timestamp,
}

/// One counter's group of stored IDs.
struct Group {
    key: CounterKey,
    bounds: Bounds,
    stored: i64,
    ids: u64,
}

/// Moves every counter of `target` up to the highest ID stored for it in `source` (or, with
/// `dry_run`, says where it would move them).
pub(crate) async fn sync(
    source: &Source<'_>,
    target: &Target<'_>,
    dry_run: bool,
    mut session: Option<&mut ClientSession>,
) -> Result<SyncReport> {
    let (groups, mut skipped) = match target.shards {
        _ if target.format.spelling().is_some() => {
            spelled_groups(source, target, session.as_deref_mut()).await?
        }
        Some(shards) => shard_groups(source, target, shards, session.as_deref_mut()).await?,
        None => counter_groups(source, target, session.as_deref_mut()).await?,
    };
    let mut report = SyncReport {
        skipped: 0,
        dry_run,
        counters: Vec::new(),
    };
    // Every group is checked before anything is written.
    let mut counters: BTreeMap<String, Group> = BTreeMap::new();
    for group in groups {
        if let Some(scope) = group.key.scope() {
            CounterLayout::check_scope(target.options, scope)?;
        }
        if group.stored > group.bounds.max {
            return Err(Error::StoredBeyondMax {
                namespace: source.coll.namespace().to_string(),
                counter: group.key.to_string(),
                stored: group.stored,
                max: group.bounds.max,
            });
        }
        if group.stored < group.bounds.start {
            skipped += group.ids;
            continue;
        }
        match counters.get_mut(group.key.canonical()) {
            Some(known) => {
                known.stored = known.stored.max(group.stored);
                known.ids += group.ids;
            }
            None => {
                counters.insert(group.key.canonical().to_owned(), group);
            }
        }
    }
    report.skipped = skipped;
    for group in counters.into_values() {
        let store = &target.store;
        let old = if dry_run {
            let read = store.last_issued(&group.key, group.bounds, session.as_deref_mut());
            read.await?
        } else {
            let raised = store.raise(
                &group.key,
                group.stored,
                group.bounds,
                session.as_deref_mut(),
            );
            raised.await?
        };
        report.counters.push(SyncedCounter {
            new: old.map_or(group.stored, |old| old.max(group.stored)),
            old,
            stored: group.stored,
            ids: group.ids,
            key: group.key,
        });
    }
    Ok(report)
}

/// The aggregation stages that project each stored ID to `{ v: <the ID>, s: <scope values> }`
/// (`s` only with a scope).
fn id_stages(source: &Source<'_>) -> Vec<Document> {
    let mut projection = doc! { "_id": 0, "v": format!("${}", source.field) };
    if !source.scope.is_empty() {
        let scope: Document = source
            .scope
            .iter()
            .map(|(name, stored)| {
                let value = doc! { "$ifNull": [format!("${stored}"), Bson::Null] };
                ((*name).to_owned(), Bson::Document(value))
            })
            .collect();
        projection.insert("s", scope);
    }
    vec![
        doc! { "$match": { source.field: { "$exists": true } } },
        doc! { "$project": projection },
    ]
}

/// The scope values of a row of [`id_stages`], for a sequence with a scope.
fn row_scope(source: &Source<'_>, row: &Document) -> Option<Scope> {
    match row.get_document("s") {
        Ok(values) if !source.scope.is_empty() => Some(Scope::from_values(
            values.iter().map(|(f, v)| (f.clone(), v.clone())),
        )),
        _ => None,
    }
}

/// The aggregation stages that project each stored ID to `{ s: <scope values>, p: { t:
/// <prefix text>, n: <counter value> } }`, `n` missing where the ID does not parse.
fn parse_stages(source: &Source<'_>, target: &Target<'_>) -> Vec<Document> {
    let prefix = target.pattern.map_or_else(String::new, Pattern::regex);
    let digits = match target.width {
        Some(w) => format!("[0-9]{{{w}}}"),
        None => "0|-?[1-9][0-9]{0,17}".to_owned(),
    };
    let regex = format!("^({prefix})({digits})$");
    // The text to match: the ID itself if it is text; for a number after a prefix of date
    // digits, its digits zero-padded to the prefix's length plus the width.
    let text = if source.text {
        doc! { "$cond": [{ "$eq": [{ "$type": "$v" }, "string"] }, "$v", Bson::Null] }
    } else {
        let integral = doc! { "$and": [
            { "$isNumber": "$v" },
            { "$eq": ["$v", { "$trunc": "$v" }] },
            { "$lt": [{ "$abs": "$v" }, 9.0e18] },
        ] };
        let digits = doc! { "$toString": { "$toLong": "$v" } };
        let rendered = match (target.pattern, target.width) {
            (Some(p), Some(w)) => {
                let len = (p.rendered_len() + usize::from(w)) as i64;
                let padded = doc! { "$concat": ["0".repeat(len as usize), digits] };
                Bson::Document(doc! { "$substrCP": [
                    padded.clone(),
                    { "$subtract": [{ "$strLenCP": padded }, len] },
                    len,
                ] })
            }
            _ => Bson::Document(digits),
        };
        doc! { "$cond": [integral, rendered, Bson::Null] }
    };
    let found = doc! { "$regexFind": { "input": { "$ifNull": [text, ""] }, "regex": regex } };
    let mut stages = id_stages(source);
    stages.extend([
        doc! { "$addFields": { "f": found } },
        doc! { "$addFields": { "p": { "$cond": [
            { "$eq": ["$f", Bson::Null] },
            { "t": Bson::Null },
            {
                "t": { "$arrayElemAt": ["$f.captures", 0] },
                "n": { "$toLong": { "$arrayElemAt": ["$f.captures", 1] } },
            },
        ] } } },
    ]);
    stages
}

/// The groups of a counter sequence: one per period and scope value.
async fn counter_groups(
    source: &Source<'_>,
    target: &Target<'_>,
    session: Option<&mut ClientSession>,
) -> Result<(Vec<Group>, u64)> {
    let mut pipeline = parse_stages(source, target);
    pipeline.push(doc! { "$group": {
        "_id": { "s": "$s", "t": "$p.t" },
        "max": { "$max": "$p.n" },
        "ids": { "$sum": 1 },
    } });
    let rows = run(source, pipeline, session).await?;
    let around = target.format.year_of(target.now);
    let constant = target
        .format
        .constant()
        .map(|slot| slot.rendering.prefix().to_owned());
    let (mut groups, mut skipped) = (Vec::new(), 0);
    for row in rows {
        let ids = count(&row, "ids");
        let id = row.get_document("_id").cloned().unwrap_or_default();
        let stored = row.get("max").and_then(Bson::as_i64);
        let text = id.get_str("t").ok();
        let period = match (stored, text, &constant, target.pattern) {
            (Some(_), Some(t), Some(prefix), _) if t == prefix => Some(None),
            (Some(_), Some(t), None, Some(pattern)) => pattern
                .parse_rendered(t, around)
                .and_then(|at| target.format.period_of(at))
                .map(|period| Some(target.format.canonical(period))),
            _ => None,
        };
        let (Some(stored), Some(period)) = (stored, period) else {
            skipped += ids;
            continue;
        };
        let scope = row_scope(source, &id);
        groups.push(Group {
            key: CounterKey::of(
                target.options.name.as_str(),
                period.as_deref(),
                scope.as_ref(),
            ),
            bounds: target.bounds,
            stored,
            ids,
        });
    }
    Ok((groups, skipped))
}

/// The groups of a sequence whose IDs have check digits, another encoding or text after the
/// number, which the server cannot read: the aggregation projects each stored ID with its
/// scope values, and each is parsed here (a shard's by the slice its value falls in).
async fn spelled_groups(
    source: &Source<'_>,
    target: &Target<'_>,
    session: Option<&mut ClientSession>,
) -> Result<(Vec<Group>, u64)> {
    let rows = run(source, id_stages(source), session).await?;
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut skipped = 0;
    for row in rows {
        let text = match row.get("v") {
            Some(Bson::String(text)) if source.text => text.clone(),
            Some(number) if !source.text => match crate::id::bson_integer(number) {
                Some(n) => n.to_string(),
                None => {
                    skipped += 1;
                    continue;
                }
            },
            _ => {
                skipped += 1;
                continue;
            }
        };
        let Ok(parsed) = target.format.parse_id(&text, target.now) else {
            skipped += 1;
            continue;
        };
        let (key, bounds) = match target.shards {
            Some(shards) => match shards.shard_of(parsed.value) {
                Some(i) => (shards.key(i), shards.slice(i)),
                None => (
                    CounterKey::named(target.options.name.as_str()),
                    target.bounds,
                ),
            },
            None => {
                let scope = row_scope(source, &row);
                let key = CounterKey::of(
                    target.options.name.as_str(),
                    parsed.period.as_deref(),
                    scope.as_ref(),
                );
                (key, target.bounds)
            }
        };
        let group = groups
            .entry(key.canonical().to_owned())
            .or_insert_with(|| Group {
                key,
                bounds,
                stored: parsed.value,
                ids: 0,
            });
        group.stored = group.stored.max(parsed.value);
        group.ids += 1;
    }
    Ok((groups.into_values().collect(), skipped))
}

/// The groups of a ranges sequence: one per shard, found with `$bucket` on the slices.
async fn shard_groups(
    source: &Source<'_>,
    target: &Target<'_>,
    shards: &Shards,
    session: Option<&mut ClientSession>,
) -> Result<(Vec<Group>, u64)> {
    let mut boundaries: Vec<Bson> = (0..shards.count())
        .map(|i| Bson::Int64(shards.slice(i).start))
        .collect();
    // The end of the last slice, exclusive: `max + 1`, or 2^63 as a double (numbers of mixed
    // types may bound buckets) where `max + 1` does not fit or a double would round it.
    boundaries.push(match target.bounds.max {
        max if max < MAX_EXACT_DOUBLE => Bson::Int64(max + 1),
        _ => Bson::Double(9_223_372_036_854_775_808.0),
    });
    let mut pipeline = parse_stages(source, target);
    pipeline.push(doc! { "$facet": {
        "shards": [
            { "$match": { "p.n": { "$gte": target.bounds.start, "$lte": target.bounds.max } } },
            { "$bucket": {
                "groupBy": "$p.n",
                "boundaries": boundaries,
                "output": { "max": { "$max": "$p.n" }, "ids": { "$sum": 1 } },
            } },
        ],
        "rest": [
            { "$match": { "$nor": [{ "p.n": { "$gte": target.bounds.start, "$lte": target.bounds.max } }] } },
            { "$group": { "_id": Bson::Null, "max": { "$max": "$p.n" }, "ids": { "$sum": 1 } } },
        ],
    } });
    let rows = run(source, pipeline, session).await?;
    let facet = rows.into_iter().next().unwrap_or_default();
    let mut groups = Vec::new();
    for row in facet.get_array("shards").into_iter().flatten() {
        let Some(row) = row.as_document() else {
            continue;
        };
        let (Some(start), Some(stored)) = (
            row.get("_id").and_then(Bson::as_i64),
            row.get("max").and_then(Bson::as_i64),
        ) else {
            continue;
        };
        let Some(i) = shards.shard_of(start) else {
            continue;
        };
        groups.push(Group {
            key: shards.key(i),
            bounds: shards.slice(i),
            stored,
            ids: count(row, "ids"),
        });
    }
    let rest = facet
        .get_array("rest")
        .ok()
        .and_then(|r| r.first())
        .and_then(Bson::as_document);
    let skipped = rest.map_or(0, |r| count(r, "ids"));
    // A parsed value above `max`: reported like a counter beyond its `max`.
    if let Some(beyond) = rest
        .and_then(|r| r.get("max"))
        .and_then(Bson::as_i64)
        .filter(|&v| v > target.bounds.max)
    {
        groups.push(Group {
            key: CounterKey::named(target.options.name.as_str()),
            bounds: target.bounds,
            stored: beyond,
            ids: 1,
        });
    }
    Ok((groups, skipped))
}

/// The documents of the aggregation `pipeline` on `source`'s collection.
/// In `session` if given.
async fn run(
    source: &Source<'_>,
    pipeline: Vec<Document>,
    session: Option<&mut ClientSession>,
) -> Result<Vec<Document>> {
    let error = |e| Error::from_driver_on(e, source.coll.namespace(), Access::Find);
    let aggregate = source.coll.aggregate(pipeline);
    match session {
        Some(session) => {
            let mut cursor = aggregate.session(&mut *session).await.map_err(error)?;
            let rows = cursor.stream(session).try_collect().await;
            rows.map_err(error)
        }
        None => aggregate
            .await
            .map_err(error)?
            .try_collect()
            .await
            .map_err(error),
    }
}

/// A count of an aggregation row.
fn count(row: &Document, field: &str) -> u64 {
    match row.get(field) {
        Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
        Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use mongodb::Client;

    use super::*;
    use crate::options::SequenceOptions;
    use crate::store::MemoryStore;

    /// A collection handle on a server that is never reached: building the pipeline sends
    /// nothing.
    async fn orders() -> Collection<Document> {
        let uri = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=10";
        let client = Client::with_uri_str(uri).await.unwrap();
        client.database("shop").collection("orders")
    }

    /// The stages that parse the IDs stored in `field` (with `scope` as stored) back into the
    /// counters of a sequence of `options`.
    fn stages(
        coll: &Collection<Document>,
        options: &SequenceOptions,
        field: &str,
        scope: Vec<(&str, &str)>,
        text: bool,
    ) -> Vec<Document> {
        let (bounds, format) = options.checked().unwrap();
        let store: Arc<dyn CounterStore> = Arc::new(MemoryStore::new());
        let source = Source {
            coll,
            field,
            scope,
            text,
        };
        let target = Target {
            options,
            store: &store,
            bounds,
            format: &format,
            pattern: format.pattern(),
            width: format.width(),
            shards: None,
            now: Timestamp::UNIX_EPOCH,
        };
        parse_stages(&source, &target)
    }

    /// The `$regexFind` that splits the text of an ID into its prefix and its counter.
    fn find(stages: &[Document]) -> &Document {
        stages[2]
            .get_document("$addFields")
            .and_then(|f| f.get_document("f"))
            .and_then(|f| f.get_document("$regexFind"))
            .unwrap()
    }

    /// The expression that gives the text a stored ID is matched as.
    fn text_of(stages: &[Document]) -> &Bson {
        &find(stages)
            .get_document("input")
            .unwrap()
            .get_array("$ifNull")
            .unwrap()[0]
    }

    #[tokio::test]
    async fn text_ids_split_into_the_pattern_and_exactly_width_digits() {
        let coll = orders().await;
        let options = SequenceOptions::builder("invoice")
            .prefix("INV-YYMM-")
            .width(4)
            .build();
        let stages = stages(&coll, &options, "number", Vec::new(), true);
        assert_eq!(
            stages[0],
            doc! { "$match": { "number": { "$exists": true } } }
        );
        assert_eq!(stages[1], doc! { "$project": { "_id": 0, "v": "$number" } });
        assert_eq!(
            find(&stages).get_str("regex"),
            Ok(r"^(INV\-\d{2}\d{2}\-)([0-9]{4})$")
        );
        // Only strings are read as text IDs: other types give no text and are skipped.
        assert_eq!(
            *text_of(&stages),
            Bson::Document(
                doc! { "$cond": [{ "$eq": [{ "$type": "$v" }, "string"] }, "$v", Bson::Null] }
            )
        );
    }

    /// A number ID after a date prefix loses the prefix's leading zeros (`000101` + `000007` is
    /// stored as `101000007`): its digits are padded back to the prefix's length plus the
    /// width before they are matched.
    #[tokio::test]
    async fn number_ids_after_a_date_prefix_are_padded_back_to_their_rendered_length() {
        let coll = orders().await;
        let options = SequenceOptions::builder("daily").prefix("YYMMDD").build();
        let stages = stages(&coll, &options, "_id", Vec::new(), false);
        assert_eq!(
            find(&stages).get_str("regex"),
            Ok(r"^(\d{2}\d{2}\d{2})([0-9]{6})$")
        );
        let cond = text_of(&stages)
            .as_document()
            .and_then(|c| c.get_array("$cond").ok())
            .unwrap();
        let digits = doc! { "$toString": { "$toLong": "$v" } };
        let padded = doc! { "$concat": ["0".repeat(12), digits] };
        assert_eq!(
            cond[1],
            Bson::Document(doc! { "$substrCP": [
                padded.clone(),
                { "$subtract": [{ "$strLenCP": padded }, 12_i64] },
                12_i64,
            ] })
        );
        assert_eq!(
            cond[2],
            Bson::Null,
            "a value that is not an integer gives no text"
        );
    }

    #[tokio::test]
    async fn plain_ids_are_integers_written_without_leading_zeros() {
        let coll = orders().await;
        let options = SequenceOptions::builder("order").build();
        let stages = stages(&coll, &options, "_id", Vec::new(), false);
        assert_eq!(
            find(&stages).get_str("regex"),
            Ok(r"^()(0|-?[1-9][0-9]{0,17})$")
        );
        let cond = text_of(&stages)
            .as_document()
            .and_then(|c| c.get_array("$cond").ok())
            .unwrap();
        assert_eq!(
            cond[1],
            Bson::Document(doc! { "$toString": { "$toLong": "$v" } }),
            "no padding without a prefix"
        );
    }

    #[tokio::test]
    async fn scope_values_are_read_from_the_fields_they_are_stored_under() {
        let coll = orders().await;
        let options = SequenceOptions::builder("order").scope(["tenant"]).build();
        let scoped = stages(&coll, &options, "_id", vec![("tenant", "t")], false);
        assert_eq!(
            scoped[1]
                .get_document("$project")
                .unwrap()
                .get_document("s"),
            Ok(&doc! { "tenant": { "$ifNull": ["$t", Bson::Null] } }),
            "a missing scope field groups as null"
        );
        let unscoped = stages(&coll, &options, "_id", Vec::new(), false);
        assert!(!unscoped[1]
            .get_document("$project")
            .unwrap()
            .contains_key("s"));
    }

    #[test]
    fn counts_of_a_row_are_read_from_either_integer_type() {
        let row = doc! { "a": 3_i32, "b": 5_000_000_000_i64, "c": -1_i32, "d": 2.0 };
        assert_eq!(count(&row, "a"), 3);
        assert_eq!(count(&row, "b"), 5_000_000_000);
        assert_eq!(count(&row, "c"), 0, "a negative count is no count");
        assert_eq!(count(&row, "d"), 0);
        assert_eq!(count(&row, "missing"), 0);
    }
}
