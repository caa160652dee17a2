//! [`NextId`], returned by `next_id` and `next_id_for`, and its future.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use mongodb::{ClientSession, Collection};

use crate::error::{Error, Result};
use crate::id::IdValue;
use crate::store::BoxFuture;

/// The action returned by `next_id` and `next_id_for`: takes the next ID without inserting
/// anything. `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct NextId<'a, T: Send + Sync> {
    pub(crate) coll: &'a Collection<T>,
    /// The document whose scope values choose the counter (`next_id_for`).
    pub(crate) doc: Option<&'a T>,
    pub(crate) session: Option<&'a mut ClientSession>,
}

impl<'a, T: Send + Sync> NextId<'a, T> {
    pub(crate) fn new(coll: &'a Collection<T>, doc: Option<&'a T>) -> Self {
        NextId {
            coll,
            doc,
            session: None,
        }
    }

    session_setter!(
        /// Takes the number with a counter update in `session` (`counter` strategy, bypassing
        /// the cache): inside a transaction it is consumed only if the transaction commits,
        /// which is also the one way a gapless model hands out a number without inserting.
        /// Other strategies make their value as without a session.
    );
}

/// The future of a [`NextId`]: an ID from this process's cache is ready at once, without an
/// allocation; anything else goes to the counter.
///
/// A ready ID consumes a unit of the task's budget of Tokio's cooperative scheduling, as
/// Tokio's own resources do: a task taking cached IDs in a loop yields once it has spent its
/// budget, so that the runtime runs its other tasks and reads the replies that arrived
/// meanwhile, the prefetch of the next range among them (a range could otherwise run out
/// while its successor's reply waits unread).
#[must_use = "a future does nothing until it is polled"]
pub struct NextIdFuture<'a, I>(State<'a, I>);

// Nothing of it is ever pinned in place: the pending future is pinned in its box, and a ready
// ID is moved out.
impl<I> Unpin for NextIdFuture<'_, I> {}

enum State<'a, I> {
    /// An ID, not an error: the future of an `i64` ID is two words.
    Ready(Option<I>),
    Pending(BoxFuture<'a, Result<I>>),
}

impl<'a, I: Send + 'a> NextIdFuture<'a, I> {
    /// The future of an ID taken from the cache.
    pub(crate) fn ready(id: I) -> Self {
        NextIdFuture(State::Ready(Some(id)))
    }

    /// The future of a call that failed at once.
    pub(crate) fn failed(e: Error) -> Self {
        Self::pending(Box::pin(std::future::ready(Err(e))))
    }

    /// The future of a value that takes a round trip, or more work than the cache.
    pub(crate) fn pending(future: BoxFuture<'a, Result<I>>) -> Self {
        NextIdFuture(State::Pending(future))
    }
}

impl<I: IdValue> Future for NextIdFuture<'_, I> {
    type Output = Result<I>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<I>> {
        match &mut self.0 {
            State::Ready(id) => {
                ready!(tokio::task::coop::poll_proceed(cx)).made_progress();
                Poll::Ready(Ok(id
                    .take()
                    .expect("a `NextIdFuture` polled after it was ready")))
            }
            State::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Look;

    /// What the hot path of a cached ID returns and moves is small: an ID and a tag, not an
    /// error (128 bytes) nor the rest of a call.
    #[test]
    fn a_ready_id_moves_in_a_few_words() {
        assert!(std::mem::size_of::<NextIdFuture<'static, i64>>() <= 24);
        assert!(std::mem::size_of::<Look>() <= 16);
    }
}
