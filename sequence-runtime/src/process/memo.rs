//! A per-thread memo of what a model's calls need (its `Sequence`), by model type and collection
//! handle. A collection handle is kept alive while remembered, so that its address stays its
//! own.

use std::any::{Any, TypeId};

use mongodb::Collection;

use crate::store::Deployment;

/// How many (model, collection handle) pairs each thread remembers.
const RECENT_CAPACITY: usize = 16;

/// A model type, and the collection handle it is used with, by address (see
/// [`Deployment::handle_address`]).
type HandleKey = (TypeId, usize);

/// Values of a thread per model type and collection handle, the most recently used last, at
/// most [`RECENT_CAPACITY`]: a lookup neither reads the handle's namespace, nor formats a key,
/// nor takes a lock. Each entry keeps a clone of its handle, so that the address stays the
/// handle's own while it is remembered.
pub(crate) struct HandleMemo<V> {
    recent: Vec<(HandleKey, Box<dyn Any>, V)>,
}

impl<V> HandleMemo<V> {
    /// An empty memo.
    pub(crate) const fn new() -> Self {
        HandleMemo { recent: Vec::new() }
    }

    /// The value of `model` with `coll`, made by `make` when it is not remembered.
    #[inline]
    pub(crate) fn get<T: Send + Sync + 'static>(
        &mut self,
        model: TypeId,
        coll: &Collection<T>,
        make: impl FnOnce() -> V,
    ) -> &mut V {
        let handle = (model, Deployment::handle_address(coll.client()));
        // The pair used last, looked at first: a thread that calls one model's actions in a
        // loop finds it at once.
        match self.recent.len().checked_sub(1) {
            Some(last) if self.recent[last].0 == handle => &mut self.recent[last].2,
            _ => self.find_or_make(handle, coll, make),
        }
    }

    /// The value of the pair `handle`, moved to the end, or made by `make` there.
    fn find_or_make<T: Send + Sync + 'static>(
        &mut self,
        handle: HandleKey,
        coll: &Collection<T>,
        make: impl FnOnce() -> V,
    ) -> &mut V {
        let recent = &mut self.recent;
        match recent.iter().position(|(k, _, _)| *k == handle) {
            Some(i) => {
                let entry = recent.remove(i);
                recent.push(entry);
            }
            None => {
                if recent.len() == RECENT_CAPACITY {
                    recent.remove(0);
                }
                recent.push((handle, Box::new(coll.clone()), make()));
            }
        }
        let last = recent.len() - 1;
        &mut recent[last].2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct ModelA;
    struct ModelB;

    #[tokio::test]
    async fn hits_and_misses_give_the_value_of_the_model_and_handle() {
        let a = TypeId::of::<ModelA>();
        let b = TypeId::of::<ModelB>();
        let uri = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=10";
        let clients = [
            mongodb::Client::with_uri_str(uri).await.unwrap(),
            mongodb::Client::with_uri_str(uri).await.unwrap(),
        ];
        // More handles than a thread remembers, twice over: every lookup, hit or miss, must
        // give the value made for its own model and handle, and a hit must not make one.
        let handles: Vec<_> = (0..RECENT_CAPACITY + 4)
            .map(|i| {
                let coll = clients[i % 2].database("memo_test").collection::<()>("c");
                (coll, i)
            })
            .collect();
        let mut memo = HandleMemo::new();
        let mut made = 0;
        for round in 0..2 {
            for (coll, i) in &handles {
                for (model, name) in [(a, "a"), (b, "b")] {
                    let value = memo.get(model, coll, || {
                        made += 1;
                        format!("{name}{i}")
                    });
                    assert_eq!(*value, format!("{name}{i}"), "round {round}");
                }
                // The pair just used is remembered: asking again makes nothing.
                let before = made;
                memo.get(a, coll, || unreachable!("a remembered pair is made again"));
                assert_eq!(made, before);
            }
        }
        assert!(
            made > 2 * handles.len(),
            "the oldest pairs were forgotten: {made}"
        );
    }
}
