//! The transactions of a process that take numbers from one counter (gapless inserts, group
//! rounds, upserts) run one at a time. They would collide on the counter anyway, and only one
//! can hold it; waiting in the process for the one before to end costs neither a round trip
//! nor a pooled connection. Each waiting transaction otherwise tried again and again, and
//! waited on the server with a write that holds a connection until the holder ends: with more
//! of them than connections in the pool, the holder found none to commit with. Transactions of
//! other processes are met on the server as before (`transaction.rs`).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use tokio::sync::OwnedMutexGuard;

use crate::error::Result;
use crate::sequence::Sequence;

/// The counters whose transactions run or wait in this process, each with the gate they queue
/// at; a counter leaves when its last transaction ends.
type Gates = HashMap<String, Arc<tokio::sync::Mutex<()>>>;

static TURNS: LazyLock<Mutex<Gates>> = LazyLock::new(Default::default);

fn turns() -> MutexGuard<'static, Gates> {
    TURNS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The turn of a transaction at its counter, held until it is dropped.
pub(crate) struct CounterTurn {
    counter: String,
    gate: Arc<tokio::sync::Mutex<()>>,
    held: Option<OwnedMutexGuard<()>>,
}

/// Waits until no other transaction of this process takes numbers from the counter of `seq`
/// (its store, sequence and scope values; a handle not bound to scope values has a turn of its
/// own), and holds that counter's turn.
pub(crate) async fn take(seq: &Sequence) -> Result<CounterTurn> {
    let counter = seq.counter_identity()?;
    let gate = turns().entry(counter.clone()).or_default().clone();
    let held = Some(gate.clone().lock_owned().await);
    Ok(CounterTurn {
        counter,
        gate,
        held,
    })
}

impl Drop for CounterTurn {
    fn drop(&mut self) {
        drop(self.held.take());
        let mut turns = turns();
        // Clones are made under this lock: the map's and this one are the last two.
        if Arc::strong_count(&self.gate) == 2 {
            turns.remove(&self.counter);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::options::SequenceOptions;

    #[tokio::test]
    async fn transactions_of_one_counter_take_turns() {
        let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:1/?connectTimeoutMS=1")
            .await
            .unwrap();
        let seq = |name: &str| {
            let options = SequenceOptions::builder(name).gapless(true).build();
            Sequence::new(&client.database("turns"), options).unwrap()
        };
        let (a, b) = (seq("a"), seq("b"));
        let first = take(&a).await.unwrap();
        let other = tokio::time::timeout(Duration::from_millis(50), take(&b)).await;
        assert!(matches!(other, Ok(Ok(_))), "another counter's turn is free");
        let second = tokio::time::timeout(Duration::from_millis(50), take(&a)).await;
        assert!(second.is_err(), "the counter's turn is held");
        drop((first, other));
        let second = tokio::time::timeout(Duration::from_millis(50), take(&a)).await;
        assert!(
            matches!(second, Ok(Ok(_))),
            "the turn is free once its holder ends"
        );
        drop(second);
        let left = turns()
            .keys()
            .filter(|k| k.contains("turns.counters"))
            .count();
        assert_eq!(left, 0, "no counter is left in the map");
    }
}
