//! [`InsertManyWithIds`], returned by `insert_many_with_ids`.

use mongodb::options::InsertManyOptions;
use mongodb::{ClientSession, Collection};

/// The action returned by `insert_many_with_ids`: gives every document an ID (with a counter:
/// one contiguous range, in one round trip per scope), inserts them with one `insert_many`
/// and returns the IDs in order. `.await` it.
///
/// In its options, `ordered` is this crate's to choose: the counter strategies insert in order
/// (so that the documents after one that met a stored ID are the ones to number again), the
/// random strategy unordered (so that only colliding draws are sent again).
#[must_use = "an action does nothing until it is awaited"]
pub struct InsertManyWithIds<'a, T: Send + Sync> {
    pub(crate) docs: &'a mut [T],
    pub(crate) coll: &'a Collection<T>,
    pub(crate) session: Option<&'a mut ClientSession>,
    pub(crate) options: Option<InsertManyOptions>,
}

impl<'a, T: Send + Sync> InsertManyWithIds<'a, T> {
    pub(crate) fn new(docs: &'a mut [T], coll: &'a Collection<T>) -> Self {
        InsertManyWithIds {
            docs,
            coll,
            session: None,
            options: None,
        }
    }

    session_setter!(
        /// Runs the insert (and, for the `counter` strategy, the counter update) in `session`.
    );

    write_setters!(InsertManyOptions, "`insert_many`");
}
