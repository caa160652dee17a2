//! [`Sequence::set_next`] and its action.

use std::future::IntoFuture;

use mongodb::ClientSession;

use crate::error::Result;
use crate::sequence::Sequence;
use crate::store::BoxFuture;

impl Sequence {
    /// Makes `next` the next value issued. Refuses to move the counter backwards unless
    /// [`force`](SetNext::force)d, since that could reissue IDs. Invalidates the values cached
    /// in this process.
    ///
    /// ```no_run
    /// # async fn f(seq: sequence_runtime::Sequence) -> sequence_runtime::Result<()> {
    /// seq.set_next(10_000).await?;            // after importing documents 1..9_999
    /// seq.set_next(1).force(true).await?;     // back to the start, knowingly
    /// # Ok(()) }
    /// ```
    pub fn set_next(&self, next: i64) -> SetNext<'_> {
        SetNext {
            seq: self,
            next,
            force: false,
            session: None,
        }
    }
}

/// The action returned by [`Sequence::set_next`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct SetNext<'a> {
    seq: &'a Sequence,
    next: i64,
    force: bool,
    session: Option<&'a mut ClientSession>,
}

impl<'a> SetNext<'a> {
    /// Allows moving the counter backwards.
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    session_setter!(
        /// Moves the counter in `session`: inside its transaction, if one is started (for
        /// example together with an import of the documents the new value goes past).
    );
}

impl<'a> IntoFuture for SetNext<'a> {
    type Output = Result<()>;
    type IntoFuture = BoxFuture<'a, Result<()>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.seq.set_next_in(self.next, self.force, self.session))
    }
}
