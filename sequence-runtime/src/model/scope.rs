//! The counters of scoped models: which scope a document's ID comes from.

use std::collections::HashMap;

use super::doc::Doc;
use crate::error::Result;
use crate::sequence::Sequence;
use crate::values::Scope;

/// The sequence that allocates for `doc`: `seq` itself, or `seq` in the scope of `doc`'s
/// `scope` fields.
pub(crate) fn for_document<T: Doc>(seq: Sequence, doc: &T) -> Result<Sequence> {
    if T::CONFIG.scope.is_empty() {
        return Ok(seq);
    }
    seq.in_scope(Scope::from_values(doc.scope_of()?))
}

/// IDs for `docs` in order: one reservation for an unscoped sequence, one per distinct scope
/// otherwise.
pub(crate) async fn ids_for<T: Doc>(seq: Sequence, docs: &[T]) -> Result<Vec<T::Id>> {
    if T::CONFIG.scope.is_empty() {
        return seq.reserve_ids::<T::Id>(docs.len() as u64).await;
    }
    // Group the documents by scope, in order of first appearance.
    let mut groups: Vec<(Scope, Vec<usize>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, doc) in docs.iter().enumerate() {
        let scope = Scope::from_values(doc.scope_of()?);
        let slot = *index.entry(scope.canonical()).or_insert_with(|| {
            groups.push((scope, Vec::new()));
            groups.len() - 1
        });
        groups[slot].1.push(i);
    }
    let mut ids: Vec<Option<T::Id>> = vec![None; docs.len()];
    for (scope, members) in groups {
        let group_ids = seq
            .in_scope(scope)?
            .reserve_ids::<T::Id>(members.len() as u64)
            .await?;
        for (i, id) in members.into_iter().zip(group_ids) {
            ids[i] = Some(id);
        }
    }
    Ok(ids
        .into_iter()
        .map(|id| id.expect("every document is in a group"))
        .collect())
}
