//! The parts of an upsert of one document (`upsert_with_id`): its filter, the fields every
//! write sets and those only an insert sets, and the two writes made of them.

use mongodb::action::Action;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{FindOneAndUpdateOptions, FindOneOptions, ReturnDocument};
use mongodb::{ClientSession, Collection};
use sequence_rules::Unique;

use super::insert;
use super::sequential_id::SequentialId;
use crate::error::driver::Access;
use crate::error::{Error, Result};

/// The parts of an upsert of one document: the filter, the fields every write sets, and the
/// fields only an insert sets (`_id`, when it is not the ID field).
pub(crate) struct Upsert<'a, T: Send + Sync> {
    pub(crate) coll: &'a Collection<T>,
    pub(crate) docs: Collection<Document>,
    pub(crate) filter: Document,
    pub(crate) set: Document,
    pub(crate) on_insert: Document,
    /// The caller's options of the update and the upsert (`upsert`, `return_document` and
    /// `projection` are this crate's).
    pub(crate) options: Option<FindOneAndUpdateOptions>,
}

impl<'a, T: SequentialId> Upsert<'a, T> {
    /// The upsert of `doc` into `coll` where `filter` matches.
    pub(crate) fn new(
        doc: &T,
        coll: &'a Collection<T>,
        filter: Document,
        options: Option<FindOneAndUpdateOptions>,
    ) -> Result<Self> {
        let mut set = insert::document(doc)?;
        let mut on_insert = Document::new();
        set.remove(T::SEQUENCE.id_field);
        if let Some(id) = set.remove("_id") {
            on_insert.insert("_id", id);
        } else if T::SEQUENCE.unique == Unique::Proxy {
            // A claim refers to the document's `_id`: it is fixed before the upsert.
            on_insert.insert("_id", ObjectId::new());
        }
        Ok(Upsert {
            coll,
            docs: coll.clone_with_type(),
            filter,
            set,
            on_insert,
            options,
        })
    }

    /// The document an insert by this upsert stores with `stored` as its ID (its `_id` as
    /// fixed, if it is).
    pub(crate) fn inserted(&self, stored: Bson) -> Result<Document> {
        let mut document = self.on_insert.clone();
        document.extend(self.set.clone());
        document.insert(T::SEQUENCE.id_field, stored);
        Ok(document)
    }

    pub(crate) fn error(&self, e: mongodb::error::Error) -> Error {
        Error::from_driver_on(e, self.coll.namespace(), Access::Insert)
    }

    /// The options of a read of the document the filter matches, where the update has no field
    /// to set: those of the caller's that a read takes.
    fn read_options(&self) -> Option<FindOneOptions> {
        let options = self.options.as_ref()?;
        let mut read = FindOneOptions::default();
        read.collation.clone_from(&options.collation);
        read.comment.clone_from(&options.comment);
        read.hint.clone_from(&options.hint);
        read.max_time = options.max_time;
        Some(read)
    }

    /// The stored ID of the document the filter matches, after giving it this document's
    /// fields; `None` if no document matches.
    pub(crate) async fn update(&self, session: Option<&mut ClientSession>) -> Result<Option<Bson>> {
        let field = T::SEQUENCE.id_field;
        let projection = doc! { field: 1 };
        let found = if self.set.is_empty() {
            self.docs
                .find_one(self.filter.clone())
                .with_options(self.read_options())
                .projection(projection)
                .optional(session, |a, s| a.session(s))
                .await
        } else {
            self.docs
                .find_one_and_update(self.filter.clone(), doc! { "$set": self.set.clone() })
                .with_options(self.options.clone())
                .upsert(false)
                .return_document(ReturnDocument::After)
                .projection(projection)
                .optional(session, |a, s| a.session(s))
                .await
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
        let field = T::SEQUENCE.id_field;
        let mut on_insert = self.on_insert.clone();
        on_insert.insert(field, id);
        let mut update = doc! { "$setOnInsert": on_insert };
        if !self.set.is_empty() {
            update.insert("$set", self.set.clone());
        }
        let found = self
            .docs
            .find_one_and_update(self.filter.clone(), update)
            .with_options(self.options.clone())
            .upsert(true)
            .return_document(ReturnDocument::After)
            .projection(doc! { field: 1 })
            .optional(session, |a, s| a.session(s))
            .await?;
        Ok(found
            .and_then(|mut d| d.remove(field))
            .unwrap_or(Bson::Null))
    }
}

/// How `doc` stores `id`: its ID field, serialized.
pub(crate) fn stored_form<T: SequentialId>(doc: &mut T, id: &T::Id) -> Result<Bson> {
    doc.set_id(id.clone());
    let mut fields = insert::document(&*doc)?;
    Ok(fields.remove(T::SEQUENCE.id_field).unwrap_or(Bson::Null))
}
