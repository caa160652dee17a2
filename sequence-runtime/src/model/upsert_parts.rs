//! The parts of an upsert of one document (`upsert_with_id`): its filter, the fields every
//! write sets and those only an insert sets, and the two writes made of them.

use mongodb::action::Action;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::{ClientSession, Collection};
use sequence_rules::Unique;

use super::doc::Doc;
use super::insert;
use crate::error::{Access, Error, Result};

/// The parts of an upsert of one document: the filter, the fields every write sets, and the
/// fields only an insert sets (`_id`, when it is not the ID field).
pub(crate) struct Upsert<'a, T: Send + Sync> {
    pub(crate) coll: &'a Collection<T>,
    pub(crate) docs: Collection<Document>,
    pub(crate) filter: Document,
    pub(crate) set: Document,
    pub(crate) on_insert: Document,
    /// The write concern of the update and the upsert (the collection's if `None`).
    pub(crate) write_concern: Option<WriteConcern>,
}

impl<'a, T: Doc> Upsert<'a, T> {
    /// The upsert of `doc` into `coll` where `filter` matches.
    pub(crate) fn new(
        doc: &T,
        coll: &'a Collection<T>,
        filter: Document,
        write_concern: Option<WriteConcern>,
    ) -> Result<Self> {
        let mut set = insert::document(doc)?;
        let mut on_insert = Document::new();
        set.remove(T::CONFIG.id_field);
        if let Some(id) = set.remove("_id") {
            on_insert.insert("_id", id);
        } else if T::CONFIG.unique == Unique::Proxy {
            // A claim refers to the document's `_id`: it is fixed before the upsert.
            on_insert.insert("_id", ObjectId::new());
        }
        Ok(Upsert {
            coll,
            docs: coll.clone_with_type(),
            filter,
            set,
            on_insert,
            write_concern,
        })
    }

    /// The document an insert by this upsert stores with `stored` as its ID (its `_id` as
    /// fixed, if it is).
    pub(crate) fn inserted(&self, stored: Bson) -> Result<Document> {
        let mut document = self.on_insert.clone();
        document.extend(self.set.clone());
        document.insert(T::CONFIG.id_field, stored);
        Ok(document)
    }

    pub(crate) fn error(&self, e: mongodb::error::Error) -> Error {
        Error::from_driver_on(e, self.coll.namespace(), Access::Insert)
    }

    /// The stored ID of the document the filter matches, after giving it this document's
    /// fields; `None` if no document matches.
    pub(crate) async fn update(&self, session: Option<&mut ClientSession>) -> Result<Option<Bson>> {
        let field = T::CONFIG.id_field;
        let projection = doc! { field: 1 };
        let found = if self.set.is_empty() {
            let action = self
                .docs
                .find_one(self.filter.clone())
                .projection(projection);
            match session {
                Some(s) => action.session(s).await,
                None => action.await,
            }
        } else {
            let action = self
                .docs
                .find_one_and_update(self.filter.clone(), doc! { "$set": self.set.clone() })
                .return_document(ReturnDocument::After)
                .projection(projection)
                .optional(self.write_concern.clone(), |a, wc| a.write_concern(wc));
            match session {
                Some(s) => action.session(s).await,
                None => action.await,
            }
        };
        Ok(found
            .map_err(|e| self.error(e))?
            .map(|mut d| d.remove(field).unwrap_or(Bson::Null)))
    }

    /// The upsert with `id` (as the document stores it) on insert; returns the stored ID.
    pub(crate) async fn with_id(
        &self,
        id: Bson,
        session: Option<&mut ClientSession>,
    ) -> std::result::Result<Bson, mongodb::error::Error> {
        let field = T::CONFIG.id_field;
        let mut on_insert = self.on_insert.clone();
        on_insert.insert(field, id);
        let mut update = doc! { "$setOnInsert": on_insert };
        if !self.set.is_empty() {
            update.insert("$set", self.set.clone());
        }
        let action = self
            .docs
            .find_one_and_update(self.filter.clone(), update)
            .upsert(true)
            .return_document(ReturnDocument::After)
            .projection(doc! { field: 1 })
            .optional(self.write_concern.clone(), |a, wc| a.write_concern(wc));
        let found = match session {
            Some(s) => action.session(s).await?,
            None => action.await?,
        };
        Ok(found
            .and_then(|mut d| d.remove(field))
            .unwrap_or(Bson::Null))
    }
}

/// How `doc` stores `id`: its ID field, serialized.
pub(crate) fn stored_form<T: Doc>(doc: &mut T, id: &T::Id) -> Result<Bson> {
    doc.put_id(id.clone());
    let mut fields = insert::document(&*doc)?;
    Ok(fields.remove(T::CONFIG.id_field).unwrap_or(Bson::Null))
}
