//! [`Sequence::ensure_indexes`] and its action, which a model's `ensure_indexes` returns too,
//! and its report.

use std::future::IntoFuture;

use futures_util::TryStreamExt;
use mongodb::bson::{Bson, Document};
use mongodb::options::IndexOptions;
use mongodb::{Collection, Database, IndexModel};
use sequence_rules::{default_proxy, Unique};

use crate::error::driver::{is_duplicate_key, is_index_options_conflict, Access};
use crate::error::{Error, Result};
use crate::options::SequenceOptions;
use crate::sequence::Sequence;
use crate::store::{BoxFuture, MongoStore};

impl Sequence {
    /// Creates every index that this sequence's documents in `coll`, which hold their IDs in
    /// `id_field` and their scope values in the `scope` fields, need and lack; see a model's
    /// [`ensure_indexes`](crate::SequentialId::ensure_indexes), which sets the stored names
    /// itself.
    pub fn ensure_indexes(&self, coll: &Collection<Document>, id_field: &str) -> EnsureIndexes {
        EnsureIndexes {
            target: IndexTarget {
                db: coll.client().database(&coll.namespace().db),
                collection: coll.name().to_owned(),
                id_field: id_field.to_owned(),
                scope: self.options().scope.clone(),
                options: self.options().clone(),
            },
            dry_run: false,
        }
    }
}

/// The action returned by [`Sequence::ensure_indexes`] and by a model's `ensure_indexes`;
/// `.await` it. Index builds cannot run in a transaction: it takes no session.
#[must_use = "an action does nothing until it is awaited"]
pub struct EnsureIndexes {
    target: IndexTarget,
    dry_run: bool,
}

impl EnsureIndexes {
    pub(crate) fn new(target: IndexTarget) -> Self {
        EnsureIndexes {
            target,
            dry_run: false,
        }
    }

    /// Says which indexes are there and which are missing, and creates none.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }
}

impl IntoFuture for EnsureIndexes {
    type Output = Result<IndexReport>;
    type IntoFuture = BoxFuture<'static, Result<IndexReport>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let indexes = ensure(&self.target, self.dry_run).await?;
            Ok(IndexReport { indexes })
        })
    }
}

/// What `ensure_indexes` found and created: every index the model's configuration needs.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct IndexReport {
    /// Each index needed, in the order: the ID field's, the proxy's, the counters'.
    pub indexes: Vec<EnsuredIndex>,
}

impl IndexReport {
    /// The indexes it created (the others were there already).
    pub fn created(&self) -> impl Iterator<Item = &EnsuredIndex> {
        self.indexes.iter().filter(|i| i.created)
    }
}

/// One index a model needs.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct EnsuredIndex {
    /// Its collection, as `database.collection`.
    pub namespace: String,
    /// Its keys, in order.
    pub keys: Document,
    /// Whether it is unique.
    pub unique: bool,
    /// Whether `ensure_indexes` created it.
    pub created: bool,
    /// Whether it was there already (neither: a dry run found it missing).
    pub present: bool,
    /// What it is for.
    pub purpose: &'static str,
}

/// An index a model needs, in a collection of its database.
pub(crate) struct Needed {
    /// The collection's name.
    collection: String,
    pub(crate) keys: Document,
    unique: bool,
    /// The index's name where a library fixes it.
    name: Option<&'static str>,
    purpose: &'static str,
    /// What creating it needs, for the error of a missing privilege.
    access: Access,
}

/// What decides the indexes of a sequence's documents: where they are, the name they store the
/// ID under, the names they store the scope fields under, and the sequence's options.
pub(crate) struct IndexTarget {
    /// The database.
    pub(crate) db: Database,
    /// The documents' collection.
    pub(crate) collection: String,
    /// The field the documents store the ID in.
    pub(crate) id_field: String,
    /// The fields the documents store the scope values in, in `scope` order.
    pub(crate) scope: Vec<String>,
    /// The sequence's options (uniqueness, proxy, strategy, counters and layout).
    pub(crate) options: SequenceOptions,
}

impl IndexTarget {
    /// The unique index of the ID field in the documents' collection, with the scope fields
    /// first, when it is not the `_id` index (an ID field of another name, or a scope) and the
    /// sequence keeps its IDs unique with an index (not with a proxy collection).
    pub(crate) fn id_index(&self) -> Option<Needed> {
        if self.options.unique != Unique::Index || (self.id_field == "_id" && self.scope.is_empty())
        {
            return None;
        }
        let mut keys = Document::new();
        for field in &self.scope {
            keys.insert(field, 1);
        }
        keys.insert(&self.id_field, 1);
        Some(Needed {
            collection: self.collection.clone(),
            keys,
            unique: true,
            name: None,
            purpose: "inserts detect a stored ID by it, and skip ahead of it",
            access: Access::IdIndex,
        })
    }

    /// Every index the sequence needs.
    fn needed(&self) -> Result<Vec<Needed>> {
        let options = &self.options;
        let mut needed: Vec<Needed> = self.id_index().into_iter().collect();
        if options.unique == Unique::Proxy && !self.scope.is_empty() {
            let keys = crate::claims::index_keys(self.scope.iter().map(String::as_str));
            needed.push(Needed {
                collection: options
                    .proxy
                    .clone()
                    .unwrap_or_else(|| default_proxy(&self.collection, &self.id_field)),
                keys,
                unique: false,
                name: None,
                purpose: "the highest ID claimed in a scope is found by it",
                access: Access::ProxyIndex,
            });
        }
        if options.strategy.uses_counters() {
            if let Some(index) = MongoStore::new(&self.db, options)?.key_index() {
                needed.push(Needed {
                    collection: options.counters.clone(),
                    keys: index.keys,
                    unique: true,
                    name: index.name,
                    purpose: "two first reservations cannot create two counters",
                    access: Access::Index,
                });
            }
        }
        Ok(needed)
    }
}

/// Creates every index `target` needs that is missing (none with `dry_run`), and says what it
/// found and did.
async fn ensure(target: &IndexTarget, dry_run: bool) -> Result<Vec<EnsuredIndex>> {
    let db = &target.db;
    let mut ensured = Vec::new();
    for needed in target.needed()? {
        let coll = db.collection::<Document>(&needed.collection);
        let existing = find_index(&coll, &needed.keys).await?;
        let present = existing
            .as_ref()
            .is_some_and(|found| found.unique || !needed.unique);
        let created = match &existing {
            _ if present || dry_run => false,
            _ => {
                let options = IndexOptions::builder()
                    .unique(needed.unique.then_some(true))
                    .name(needed.name.map(str::to_owned))
                    .build();
                let model = IndexModel::builder()
                    .keys(needed.keys.clone())
                    .options(options)
                    .build();
                match coll.create_index(model).await {
                    Ok(_) => true,
                    Err(e) if is_index_options_conflict(&e) => match existing {
                        Some(found) => {
                            return Err(Error::IndexConflict {
                                collection: coll.namespace().to_string(),
                                index: format!("{} (unique)", needed.keys),
                                reason: format!(
                                    "the index `{}` has these keys without `unique`; drop it \
                                     and run `ensure_indexes` again",
                                    found.name
                                ),
                                source: Box::new(e),
                            })
                        }
                        // Made meanwhile by another process, under another name.
                        None => false,
                    },
                    Err(e) if is_duplicate_key(&e) => {
                        return Err(Error::IndexConflict {
                            collection: coll.namespace().to_string(),
                            index: format!("{} (unique)", needed.keys),
                            reason: "two documents already hold the same values of these keys; \
                                     give one of them another ID, then run `ensure_indexes` \
                                     again"
                                .to_owned(),
                            source: Box::new(e),
                        })
                    }
                    Err(e) => {
                        return Err(Error::from_driver_on(e, coll.namespace(), needed.access))
                    }
                }
            }
        };
        ensured.push(EnsuredIndex {
            namespace: coll.namespace().to_string(),
            keys: needed.keys,
            unique: needed.unique,
            created,
            present: present || (!created && !dry_run),
            purpose: needed.purpose,
        });
    }
    Ok(ensured)
}

/// An index a collection has.
pub(crate) struct Existing {
    name: String,
    pub(crate) unique: bool,
}

/// The index of `coll` whose keys are `keys`, in order, if there is one.
pub(crate) async fn find_index(
    coll: &Collection<Document>,
    keys: &Document,
) -> Result<Option<Existing>> {
    let indexes: Vec<IndexModel> = match coll.list_indexes().await {
        Ok(cursor) => cursor.try_collect().await?,
        // No collection yet: no index.
        Err(e) if namespace_not_found(&e) => return Ok(None),
        Err(e) => {
            return Err(Error::from_driver_on(
                e,
                coll.namespace(),
                Access::ListIndexes,
            ))
        }
    };
    // Of two indexes of these keys (one unique, one not), the unique one.
    Ok(indexes
        .into_iter()
        .filter(|index| same_keys(&index.keys, keys))
        .map(|index| {
            let options = index.options.unwrap_or_default();
            Existing {
                name: options.name.unwrap_or_default(),
                unique: options.unique.unwrap_or(false),
            }
        })
        .max_by_key(|existing| existing.unique))
}

/// Whether two key documents name the same fields in the same order and directions (`1`
/// stored as any number type).
fn same_keys(a: &Document, b: &Document) -> bool {
    let number = |v: &Bson| match v {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) => Some(*n),
        _ => None,
    };
    a.len() == b.len()
        && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| {
            ka == kb
                && match (number(va), number(vb)) {
                    (Some(x), Some(y)) => x == y,
                    _ => va == vb,
                }
        })
}

fn namespace_not_found(e: &mongodb::error::Error) -> bool {
    matches!(*e.kind, mongodb::error::ErrorKind::Command(ref c) if c.code == 26)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::doc;

    #[test]
    fn keys_compare_by_order_and_direction_whatever_the_number_type() {
        assert!(same_keys(
            &doc! { "tenant": 1, "number": 1 },
            &doc! { "tenant": 1.0, "number": 1_i64 }
        ));
        assert!(!same_keys(
            &doc! { "tenant": 1, "number": 1 },
            &doc! { "number": 1, "tenant": 1 }
        ));
        assert!(!same_keys(&doc! { "number": 1 }, &doc! { "number": -1 }));
        assert!(!same_keys(
            &doc! { "number": 1 },
            &doc! { "number": 1, "x": 1 }
        ));
    }
}
