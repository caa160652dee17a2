//! [`Sequence::reserve`], [`Sequence::reserve_ids`] and their actions.

use std::future::IntoFuture;
use std::marker::PhantomData;

use mongodb::ClientSession;

use crate::error::Result;
use crate::id::{IdRange, IdValue};
use crate::sequence::Sequence;
use crate::store::BoxFuture;

impl Sequence {
    /// Reserves `n` contiguous IDs in one round trip (bypassing the cache), for bulk inserts. A
    /// ranges sequence takes them from one shard (skipping the shards with fewer left).
    ///
    /// In a session ([`Reserve::session`], counter strategy): inside the session's
    /// transaction, if one is started, so that the numbers are consumed only if it commits
    /// (this is how gapless numbering and inserts in a session work); otherwise as a causally
    /// consistent operation of the session.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use sequence_runtime::{Sequence, SequenceOptions};
    /// let seq = Sequence::in_memory(SequenceOptions::builder("order").build())?;
    /// let range = seq.reserve(10).await?;
    /// assert_eq!((range.first(), range.last()), (1, 10));
    /// # Ok::<(), sequence_runtime::Error>(()) }).unwrap();
    /// ```
    pub fn reserve(&self, n: u64) -> Reserve<'_> {
        Reserve {
            seq: self,
            n,
            session: None,
        }
    }

    /// Reserves `n` contiguous IDs in one round trip and renders them as `T` (see
    /// [`next_id`](Self::next_id)); takes a session as [`reserve`](Self::reserve) does.
    pub fn reserve_ids<T: IdValue>(&self, n: u64) -> ReserveIds<'_, T> {
        ReserveIds {
            reserve: self.reserve(n),
            ids: PhantomData,
        }
    }
}

/// The action returned by [`Sequence::reserve`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct Reserve<'a> {
    seq: &'a Sequence,
    n: u64,
    session: Option<&'a mut ClientSession>,
}

impl<'a> Reserve<'a> {
    session_setter!(
        /// Reserves with a counter update in `session` (counter strategy only).
    );
}

impl<'a> IntoFuture for Reserve<'a> {
    type Output = Result<IdRange>;
    type IntoFuture = BoxFuture<'a, Result<IdRange>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { Ok(self.seq.reserve_range(self.n, self.session).await?.0) })
    }
}

/// The action returned by [`Sequence::reserve_ids`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct ReserveIds<'a, T> {
    reserve: Reserve<'a>,
    ids: PhantomData<fn() -> T>,
}

impl<'a, T> ReserveIds<'a, T> {
    /// Reserves with a counter update in `session` (counter strategy only).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.reserve = self.reserve.session(session);
        self
    }
}

impl<'a, T: IdValue> IntoFuture for ReserveIds<'a, T> {
    type Output = Result<Vec<T>>;
    type IntoFuture = BoxFuture<'a, Result<Vec<T>>>;

    fn into_future(self) -> Self::IntoFuture {
        let Reserve { seq, n, session } = self.reserve;
        Box::pin(async move {
            let (range, slot) = seq.reserve_range(n, session).await?;
            range
                .iter()
                .map(|value| T::render(value, &slot.rendering))
                .collect()
        })
    }
}
