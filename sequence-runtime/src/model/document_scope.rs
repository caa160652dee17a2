//! The counters of scoped models: which scope a document's ID comes from.

use std::collections::HashMap;

use mongodb::ClientSession;

use super::sequential_id::SequentialId;
use crate::error::Result;
use crate::id::Scope;
use crate::sequence::{Issued, Sequence};

/// The sequence that allocates for `doc`: `seq` itself, or `seq` in the scope of `doc`'s
/// `scope` fields.
pub(crate) fn for_document<T: SequentialId>(seq: Sequence, doc: &T) -> Result<Sequence> {
    if T::SEQUENCE.scope.is_empty() {
        return Ok(seq);
    }
    seq.in_scope(Scope::from_values(doc.scope_values()?))
}

/// The positions of `docs` grouped by the counter their IDs come from, in order of first
/// appearance, each with the sequence of that counter: one group without a scope, one per
/// distinct scope otherwise.
pub(crate) fn groups<T: SequentialId>(
    seq: &Sequence,
    docs: &[T],
) -> Result<Vec<(Sequence, Vec<usize>)>> {
    if T::SEQUENCE.scope.is_empty() {
        return Ok(vec![(seq.clone(), (0..docs.len()).collect())]);
    }
    let mut groups: Vec<(Scope, Vec<usize>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, doc) in docs.iter().enumerate() {
        let scope = Scope::from_values(doc.scope_values()?);
        let slot = *index
            .entry(scope.canonical().to_owned())
            .or_insert_with(|| {
                groups.push((scope, Vec::new()));
                groups.len() - 1
            });
        groups[slot].1.push(i);
    }
    groups
        .into_iter()
        .map(|(scope, members)| Ok((seq.in_scope(scope)?, members)))
        .collect()
}

/// IDs for `docs` in order, with the counters they came from: one reservation per group of
/// [`groups`], in `session` if given.
pub(crate) async fn issue_all<T: SequentialId>(
    seq: &Sequence,
    docs: &[T],
    mut session: Option<&mut ClientSession>,
) -> Result<Vec<(T::Id, Issued)>> {
    let mut ids: Vec<Option<(T::Id, Issued)>> = vec![None; docs.len()];
    for (scoped, members) in groups(seq, docs)? {
        let issued = scoped
            .issue_ids::<T::Id>(members.len() as u64, session.as_deref_mut())
            .await?;
        for (i, id) in members.into_iter().zip(issued) {
            ids[i] = Some(id);
        }
    }
    Ok(ids
        .into_iter()
        .map(|id| id.expect("every document is in a group"))
        .collect())
}
