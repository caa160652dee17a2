//! [`UpsertWithId`], returned by `upsert_with_id`.

use mongodb::bson::Document;
use mongodb::options::FindOneAndUpdateOptions;
use mongodb::{ClientSession, Collection};

/// The action returned by `upsert_with_id`: updates the document a filter matches, keeping its
/// stored ID, or inserts this document with a new ID; returns the stored ID. `.await` it.
///
/// Its writes are `find_one_and_update`s: their options (write concern, collation, hint,
/// comment, document validation) are the caller's, but for `upsert`, `return_document` and
/// `projection`, which are this crate's to choose.
#[must_use = "an action does nothing until it is awaited"]
pub struct UpsertWithId<'a, T: Send + Sync> {
    pub(crate) doc: &'a mut T,
    pub(crate) coll: &'a Collection<T>,
    pub(crate) filter: Document,
    pub(crate) session: Option<&'a mut ClientSession>,
    pub(crate) options: Option<FindOneAndUpdateOptions>,
}

impl<'a, T: Send + Sync> UpsertWithId<'a, T> {
    pub(crate) fn new(doc: &'a mut T, coll: &'a Collection<T>, filter: Document) -> Self {
        UpsertWithId {
            doc,
            coll,
            filter,
            session: None,
            options: None,
        }
    }

    session_setter!(
        /// Runs the update, the counter update (for the `counter` strategy) and the upsert in
        /// `session`. Nothing is sent again.
    );

    write_setters!(FindOneAndUpdateOptions, "update and of the upsert");
}
