//! `list`: the counters of a database, with the room each has left.

use std::collections::HashMap;

use mongodb::bson::doc;
use mongodb::Database;
use sequence_runtime::store::SequenceRecord;

use crate::args::{Limits, Shape};
use crate::counters::find;
use crate::failure::Failure;
use crate::known::records;
use crate::output::{rows, Output};

/// Lists the counters in `counters` of `db`, of the names that match `name` where it is given.
pub(crate) async fn run(
    db: &Database,
    counters: &str,
    name: Option<&str>,
    limits: &Limits,
    shape: &Shape,
    out: &Output,
) -> Result<(), Failure> {
    let records: HashMap<String, SequenceRecord> = records(db, counters, None, out)
        .await?
        .into_iter()
        .map(|r| (r.name.clone(), r))
        .collect();
    let mut found = find(&db.collection(counters), doc! {}, shape).await?;
    if let Some(pattern) = name {
        found.retain(|(_, c)| matches(pattern, &c.name));
    }
    let bounds = found
        .iter()
        .map(|(_, c)| limits.bounds(&c.name, records.get(&c.name)))
        .collect::<Result<Vec<_>, _>>()?;
    let (json, text) = rows(&found, shape.field(), &bounds);
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
