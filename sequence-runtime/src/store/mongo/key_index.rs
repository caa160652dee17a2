//! One counter document per key, for the layouts that find counters by other fields than
//! `_id`: their unique index, created before the first upsert, and the check that a key matches
//! one document at most.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::IndexOptions;
use mongodb::IndexModel;
use tokio::sync::OnceCell;

use super::known_counters::remember_at_most;
use super::MongoStore;
use crate::error::driver::{is_duplicate_key, is_index_options_conflict, Access};
use crate::error::{Error, Result};
use crate::id::CounterKey;
use crate::observability::STORE;
use crate::store::layout::KeyIndex;
use crate::store::CounterStore;

impl MongoStore {
    /// For a layout that finds counters by other fields than `_id`, makes sure its unique index
    /// exists before the first upsert, so that two concurrent first upserts cannot create two
    /// counters, with the keys in the order the other library declares them (so that its own
    /// declaration finds the index built). Done once per collection per process; an index
    /// already there is left as it is. Where two counter documents already hold one key, the
    /// index cannot be built: [`Error::DuplicateCounters`] names them.
    pub(super) async fn ensure_key_index(&self) -> Result<()> {
        let Some(index) = self.layout.key_index() else {
            return Ok(());
        };
        static DONE: LazyLock<Mutex<HashMap<String, Arc<OnceCell<()>>>>> =
            LazyLock::new(Default::default);
        let cell = DONE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(self.identity())
            .or_default()
            .clone();
        cell.get_or_try_init(|| async {
            let model = IndexModel::builder()
                .keys(index.keys.clone())
                .options(
                    IndexOptions::builder()
                        .unique(true)
                        .name(index.name.map(str::to_owned))
                        .build(),
                )
                .build();
            match self.collection.create_index(model).await {
                Ok(_) => {}
                Err(e) if is_duplicate_key(&e) => {
                    return Err(match self.duplicates(&index).await? {
                        Some(duplicates) => duplicates,
                        None => Error::IndexConflict {
                            collection: self.location(),
                            index: index.describe(),
                            reason: format!(
                                "{} needs it, and the collection holds documents of another \
                                 layout that the index cannot tell apart; keep the layouts in \
                                 separate collections (`counters = \"...\"`)",
                                index.needed_by
                            ),
                            source: Box::new(e),
                        },
                    });
                }
                // An index of these keys under another name, or without `unique`: the
                // library that made it is the one to say how it wants it.
                Err(e) if is_index_options_conflict(&e) => {}
                Err(e) => return Err(self.error(e, Access::Index)),
            }
            tracing::debug!(
                target: STORE,
                collection = %self.location(),
                index = %index.keys,
                "Counter index ensured"
            );
            Ok::<(), Error>(())
        })
        .await?;
        Ok(())
    }

    /// Two counter documents of the layout that hold the same values of the keys of `index`
    /// (the unique index the layout needs), if any.
    async fn duplicates(&self, index: &KeyIndex) -> Result<Option<Error>> {
        let keys = &index.keys;
        let group: Document = keys
            .keys()
            .map(|k| (k.clone(), Bson::String(format!("${k}"))))
            .collect();
        let pipeline = vec![
            doc! { "$match": index.members.clone() },
            doc! { "$group": { "_id": group, "ids": { "$push": "$_id" }, "n": { "$sum": 1 } } },
            doc! { "$match": { "n": { "$gt": 1 } } },
            doc! { "$limit": 1 },
        ];
        let found = self
            .collection
            .aggregate(pipeline)
            .await
            .map_err(|e| self.error(e, Access::Read))?
            .try_next()
            .await
            .map_err(|e| self.error(e, Access::Read))?;
        Ok(found.map(|row| {
            let ids = row.get_array("ids").cloned().unwrap_or_default();
            Error::DuplicateCounters {
                collection: self.location(),
                filter: row
                    .get_document("_id")
                    .map_or_else(|_| keys.to_string(), ToString::to_string),
                ids,
            }
        }))
    }

    /// Where the filter of `key` can match two documents despite the unique index (see
    /// [`CounterLayout::may_match_twice`]), checks once per process that it matches one at
    /// most.
    pub(super) async fn ensure_one_counter(&self, key: &CounterKey) -> Result<()> {
        if !self.layout.may_match_twice(key) {
            return Ok(());
        }
        static CHECKED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);
        let id = format!("{}\0{}", self.identity(), key.canonical());
        if CHECKED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&id)
        {
            return Ok(());
        }
        let filter = self.layout.id_filter(key)?;
        let mut found = self
            .collection
            .find(filter.clone())
            .projection(doc! { "_id": 1 })
            .limit(2)
            .await
            .map_err(|e| self.error(e, Access::Read))?;
        let mut ids = Vec::new();
        while let Some(doc) = found
            .try_next()
            .await
            .map_err(|e| self.error(e, Access::Read))?
        {
            ids.push(doc.get("_id").cloned().unwrap_or(Bson::Null));
        }
        if ids.len() > 1 {
            return Err(Error::DuplicateCounters {
                collection: self.location(),
                filter: filter.to_string(),
                ids,
            });
        }
        remember_at_most(
            &mut CHECKED.lock().unwrap_or_else(PoisonError::into_inner),
            id,
            CHECKED_KEYS,
        );
        Ok(())
    }
}

/// How many checked keys a process remembers: a counter of each period of a sequence is a key
/// of its own, so the keys are forgotten all at once when this many are remembered (a key
/// forgotten is checked again, one read).
const CHECKED_KEYS: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_keys_are_forgotten_all_at_once_when_full() {
        let mut checked = HashSet::new();
        for i in 0..CHECKED_KEYS {
            remember_at_most(&mut checked, format!("k{i}"), CHECKED_KEYS);
        }
        assert_eq!(checked.len(), CHECKED_KEYS);
        remember_at_most(&mut checked, "last".to_owned(), CHECKED_KEYS);
        assert_eq!(checked.len(), 1);
        assert!(checked.contains("last"));
    }
}
