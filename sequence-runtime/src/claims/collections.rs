//! [`Claims`]: a target collection, the fields its documents store the ID and scope under, and
//! the proxy collection of their claims; and what reading and writing them share.

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::{Collection, Cursor};
use sequence_rules::default_proxy;

use super::claims_report::ClaimsReport;
use crate::error::driver::Access;
use crate::error::{Error, Result};

/// The claims of the IDs of a target collection, held in a proxy collection of the same
/// database: what [`check`](Self::check) and [`repair`](Self::repair) read.
///
/// The ID field and the scope fields are named as the documents store them (a field renamed
/// by `serde` under its stored name), the scope fields in the model's `scope` order, which is
/// the order of the fields of a claim's key.
#[derive(Clone, Debug)]
pub struct Claims {
    pub(super) target: Collection<Document>,
    pub(super) field: String,
    pub(super) scope: Vec<String>,
    pub(super) proxy: Collection<Document>,
}

impl Claims {
    /// The claims in `proxy` of the IDs that the documents of `target` store in `field`.
    pub fn new(
        target: &Collection<Document>,
        field: impl Into<String>,
        proxy: &Collection<Document>,
    ) -> Self {
        Claims {
            target: target.clone(),
            field: field.into(),
            scope: Vec::new(),
            proxy: proxy.clone(),
        }
    }

    /// The claims of the IDs that the documents of `target` store in `field`, in the proxy
    /// collection a model uses by default: `<collection>.claims.<field>` in `target`'s
    /// database.
    pub fn with_default_proxy(target: &Collection<Document>, field: impl Into<String>) -> Self {
        let field = field.into();
        let proxy = target
            .client()
            .database(&target.namespace().db)
            .collection(&default_proxy(target.name(), &field));
        Claims {
            target: target.clone(),
            field,
            scope: Vec::new(),
            proxy,
        }
    }

    /// The scope fields of a scoped model, as stored, in `scope` order: IDs are unique per
    /// scope values, and a claim's key is `{ <scope field>: value, …, id: <ID> }`. A document
    /// without a scope field counts as holding `null` there.
    pub fn scope<I, S>(mut self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scope = fields.into_iter().map(Into::into).collect();
        self
    }

    /// The target collection.
    pub fn target(&self) -> &Collection<Document> {
        &self.target
    }

    /// The proxy collection.
    pub fn proxy(&self) -> &Collection<Document> {
        &self.proxy
    }
}

impl Claims {
    pub(super) fn empty_report(&self) -> ClaimsReport {
        ClaimsReport {
            collection: self.target.namespace().to_string(),
            proxy: self.proxy.namespace().to_string(),
            unclaimed: Vec::new(),
            unclaimed_count: 0,
            orphans: Vec::new(),
            orphan_count: 0,
            shared: Vec::new(),
            shared_count: 0,
            without_id: 0,
        }
    }

    /// `$lookup` reads a collection of the same database only.
    pub(super) fn same_database(&self) -> Result<()> {
        let (target, proxy) = (self.target.namespace(), self.proxy.namespace());
        if target.db != proxy.db {
            return Err(Error::InvalidArgument {
                argument: "proxy",
                reason: format!(
                    "the proxy collection `{proxy}` must be in the database of `{target}`"
                ),
            });
        }
        Ok(())
    }

    /// The key of a claim of the document `base` names (`$` for the stage's document,
    /// `$$this.` for a variable's): the ID, or the scope values (`null` when missing) and the
    /// ID.
    pub(super) fn key(&self, base: &str) -> Bson {
        let id = Bson::String(format!("{base}{}", self.field));
        if self.scope.is_empty() {
            return id;
        }
        let mut key: Document = self
            .scope
            .iter()
            .map(|f| {
                let value = doc! { "$ifNull": [format!("{base}{f}"), Bson::Null] };
                (f.clone(), Bson::Document(value))
            })
            .collect();
        key.insert("id", id);
        Bson::Document(key)
    }

    /// The documents that hold the ID field.
    pub(super) fn with_id(&self) -> Document {
        doc! { "$match": { &self.field: { "$exists": true } } }
    }

    /// The next row of `cursor`, reading `coll`.
    pub(super) async fn next(
        &self,
        cursor: &mut Cursor<Document>,
        coll: &Collection<Document>,
    ) -> Result<Option<Document>> {
        cursor
            .try_next()
            .await
            .map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::CheckClaims))
    }

    /// Runs `pipeline` on `coll`.
    pub(super) async fn aggregate(
        &self,
        coll: &Collection<Document>,
        pipeline: Vec<Document>,
    ) -> Result<Cursor<Document>> {
        coll.aggregate(pipeline)
            .allow_disk_use(true)
            .await
            .map_err(|e| Error::from_driver_on(e, coll.namespace(), Access::CheckClaims))
    }

    pub(super) fn write_error(&self, e: mongodb::error::Error) -> Error {
        Error::from_driver_on(e, self.proxy.namespace(), Access::RepairClaims)
    }
}

/// The keys of the index of a scoped model's claims, whose documents store the scope values in
/// `scope`: `{ "_id.<scope field>": 1, …, "_id.id": 1 }`.
pub(crate) fn index_keys<'s>(scope: impl IntoIterator<Item = &'s str>) -> Document {
    let mut keys = Document::new();
    for field in scope {
        keys.insert(format!("_id.{field}"), 1);
    }
    keys.insert("_id.id", 1);
    keys
}
