//! [`Sequence::delete`] and its action.

use std::future::IntoFuture;

use mongodb::ClientSession;

use crate::error::Result;
use crate::sequence::Sequence;
use crate::store::BoxFuture;

impl Sequence {
    /// Deletes the counter document (of a ranges sequence: those of all its shards, one round
    /// trip per shard); the next use starts again at `start`. Returns whether it existed.
    /// Invalidates cached values. Takes a session ([`Delete::session`]).
    pub fn delete(&self) -> Delete<'_> {
        Delete {
            seq: self,
            session: None,
        }
    }
}

/// The action returned by [`Sequence::delete`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Delete<'a> {
    seq: &'a Sequence,
    session: Option<&'a mut ClientSession>,
}

impl<'a> Delete<'a> {
    session_setter!(
        /// Deletes the counter in `session`: inside its transaction, if one is started.
    );
}

impl<'a> IntoFuture for Delete<'a> {
    type Output = Result<bool>;
    type IntoFuture = BoxFuture<'a, Result<bool>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.seq.delete_in(self.session))
    }
}
