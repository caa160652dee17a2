//! [`InsertWithId`], returned by `insert_with_id`.

use mongodb::options::InsertOneOptions;
use mongodb::{ClientSession, Collection};

/// The action returned by `insert_with_id`: takes the next ID, stores it in the ID field,
/// inserts the document and returns the ID. `.await` it; awaiting runs the insert path of the
/// model's strategy.
#[must_use = "an action does nothing until it is awaited"]
pub struct InsertWithId<'a, T: Send + Sync> {
    pub(crate) doc: &'a mut T,
    pub(crate) coll: &'a Collection<T>,
    pub(crate) session: Option<&'a mut ClientSession>,
    pub(crate) options: Option<InsertOneOptions>,
}

impl<'a, T: Send + Sync> InsertWithId<'a, T> {
    pub(crate) fn new(doc: &'a mut T, coll: &'a Collection<T>) -> Self {
        InsertWithId {
            doc,
            coll,
            session: None,
            options: None,
        }
    }

    session_setter!(
        /// Runs the insert (and, for the `counter` strategy, the counter update) in `session`.
    );

    write_setters!(InsertOneOptions, "`insert_one`");
}
