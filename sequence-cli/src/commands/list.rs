//! `list`: the sequences of a database, across its counters collections, each counter with the
//! room it has left.

use std::collections::HashMap;

use mongodb::bson::doc;
use mongodb::Database;
use sequence_runtime::store::SequenceRecord;

use crate::args::{Limits, Shape};
use crate::counters::find;
use crate::failure::Failure;
use crate::known::{counters_collections, record_shape, records};
use crate::output::{rows, Output, Row};

/// Lists the counters of `db` in every collection that holds counters (`counters`: the one
/// given alone), of the names that match `name` where it is given.
pub(crate) async fn run(
    db: &Database,
    counters: Option<&str>,
    name: Option<&str>,
    limits: &Limits,
    shape: &Shape,
    out: &Output,
) -> Result<(), Failure> {
    let places = match counters {
        Some(counters) => vec![counters.to_owned()],
        None => counters_collections(db, None, out).await?,
    };
    let mut listed = Vec::new();
    for place in &places {
        let records: HashMap<String, SequenceRecord> = records(db, place, None, out)
            .await?
            .into_iter()
            .map(|r| (r.name.clone(), r))
            .collect();
        let coll = db.collection(place);
        let mut found = find(&coll, doc! {}, shape).await?;
        // A sequence recorded with a counter field or a filter of its own is read as its
        // record says.
        for record in records.values().filter(|r| !r.filter.is_empty()) {
            let mut own = find(&coll, doc! {}, &record_shape(record)).await?;
            own.retain(|(d, c)| c.name == record.name && !found.iter().any(|(f, _)| f == d));
            found.extend(own);
        }
        if let Some(pattern) = name {
            found.retain(|(_, c)| matches(pattern, &c.name));
        }
        for (doc, counter) in found {
            let record = records.get(&counter.name);
            let bounds = limits.bounds(&counter.name, record)?;
            let gapless = record.is_some_and(|r| r.gapless);
            listed.push((place, doc, counter, bounds, gapless));
        }
    }
    let field = shape.field();
    let rows_of: Vec<Row<'_>> = listed
        .iter()
        .map(|(place, doc, counter, limits, gapless)| Row {
            doc,
            counter,
            collection: place,
            field,
            limits: *limits,
            gapless: *gapless,
        })
        .collect();
    let (json, text) = rows(&rows_of);
    out.print(json, || text);
    Ok(())
}

/// Whether `name` matches `pattern`, where `*` stands for any text and `?` for one character.
fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    // The last `*` seen, and where in `name` its match ends for now.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    star = Some((si, sj + 1));
                    i = si + 1;
                    j = sj + 1;
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}
