//! [`Sequence::reset`] and its action.

use std::future::IntoFuture;

use mongodb::ClientSession;

use crate::error::Result;
use crate::sequence::Sequence;
use crate::store::BoxFuture;

impl Sequence {
    /// Puts the counter back so that the next value is `start` (of a ranges sequence: every
    /// shard back to the start of its slice, one round trip per shard). Invalidates cached
    /// values. Takes a session ([`Reset::session`]).
    pub fn reset(&self) -> Reset<'_> {
        Reset {
            seq: self,
            session: None,
        }
    }
}

/// The action returned by [`Sequence::reset`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Reset<'a> {
    seq: &'a Sequence,
    session: Option<&'a mut ClientSession>,
}

impl<'a> Reset<'a> {
    session_setter!(
        /// Resets the counter in `session`: inside its transaction, if one is started.
    );
}

impl<'a> IntoFuture for Reset<'a> {
    type Output = Result<()>;
    type IntoFuture = BoxFuture<'a, Result<()>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.seq.reset_in(self.session))
    }
}
