//! [`Sequence::current`] and its action.

use std::future::IntoFuture;

use mongodb::ClientSession;

use crate::error::Result;
use crate::sequence::Sequence;
use crate::store::BoxFuture;

impl Sequence {
    /// The last value issued according to the counter document (`None`: no counter yet).
    /// Values cached by processes are counted as issued. Takes a session
    /// ([`Current::session`]) for a read in the caller's transaction.
    pub fn current(&self) -> Current<'_> {
        Current {
            seq: self,
            session: None,
        }
    }
}

/// The action returned by [`Sequence::current`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Current<'a> {
    seq: &'a Sequence,
    session: Option<&'a mut ClientSession>,
}

impl<'a> Current<'a> {
    session_setter!(
        /// Reads the counter in `session`: inside its transaction, if one is started.
    );
}

impl<'a> IntoFuture for Current<'a> {
    type Output = Result<Option<i64>>;
    type IntoFuture = BoxFuture<'a, Result<Option<i64>>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.seq.current_in(self.session))
    }
}
