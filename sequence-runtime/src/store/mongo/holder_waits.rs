//! One wait on the server per counter: a transaction that meets its counter held by another
//! waits for the holder with a write the server holds until the holder ends (see
//! [`CounterStore::wait_for_transactions`](crate::store::CounterStore::wait_for_transactions)),
//! and that write holds a pooled connection meanwhile. Were every waiting transaction of a
//! process to send one, a pool with fewer connections than waiters would leave the holder (of
//! this process) none to commit with. So a store sends one wait per counter at a time; the
//! others wait in the process for that one to end, which is when the holder has ended.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use mongodb::bson::doc;
use mongodb::options::WriteConcern;

use super::MongoStore;
use crate::error::driver::Access;
use crate::error::Result;
use crate::id::CounterKey;

/// The field of a counter document that counts how often a transaction that met the counter
/// held by another waited for it to end (see
/// [`CounterStore::wait_for_transactions`](crate::store::CounterStore::wait_for_transactions)).
const WAITED_FIELD: &str = "waited";

impl MongoStore {
    /// Waits until no transaction holds the counter `key`: one wait of this store per counter
    /// goes to the server at a time, the others wait in the process for it to end
    /// ([`HolderWaits`]).
    pub(super) async fn wait_for_holder(&self, key: &CounterKey) -> Result<()> {
        let on_server = self.wait_on_server(key);
        self.waits
            .one_at_a_time(format!("{key:?}"), on_server)
            .await
    }

    /// Writes to the counter document outside any transaction: the server holds the write
    /// until a transaction that holds the document ends. The write only counts the waits
    /// (`waited`); a counter that does not exist yet is not written.
    async fn wait_on_server(&self, key: &CounterKey) -> Result<()> {
        self.collection
            .update_one(
                self.layout.id_filter(key),
                doc! { "$inc": { WAITED_FIELD: 1_i64 } },
            )
            // A signal, not a number: acknowledged by the primary alone.
            .write_concern(WriteConcern::nodes(1))
            .await
            .map_err(|e| self.error(e, Access::Reserve))?;
        Ok(())
    }
}

/// The counters this store is waiting on the server for, each with the gate its other waiters
/// queue behind. A counter leaves the map when its last waiter is done.
#[derive(Debug, Default)]
pub(super) struct HolderWaits {
    gates: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl HolderWaits {
    /// Runs `on_server`, the wait on the server for the holder of the counter `key`, unless
    /// one for that counter is running: then waits for that one to end instead.
    pub(super) async fn one_at_a_time(
        &self,
        key: String,
        on_server: impl Future<Output = Result<()>>,
    ) -> Result<()> {
        let gate = self.lock().entry(key.clone()).or_default().clone();
        let result = match gate.try_lock() {
            Ok(sending) => {
                let result = on_server.await;
                drop(sending);
                result
            }
            Err(_) => {
                drop(gate.lock().await);
                Ok(())
            }
        };
        let mut gates = self.lock();
        // Clones are made under this lock: the map's and this one are the last two.
        if Arc::strong_count(&gate) == 2 {
            gates.remove(&key);
        }
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.gates.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn one_wait_per_counter_goes_to_the_server() {
        let waits = HolderWaits::default();
        let sent = AtomicUsize::new(0);
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let on_server = |rx: Option<tokio::sync::oneshot::Receiver<()>>| {
            let sent = &sent;
            async move {
                sent.fetch_add(1, Ordering::SeqCst);
                if let Some(rx) = rx {
                    let _ = rx.await;
                }
                Ok(())
            }
        };
        let first = waits.one_at_a_time("a".into(), on_server(Some(released)));
        let behind = async {
            // Starts once the first is on the server.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let second = waits.one_at_a_time("a".into(), on_server(None));
            let other = waits.one_at_a_time("b".into(), on_server(None));
            let (second, other) = tokio::join!(second, other);
            (second.is_ok() && other.is_ok()).then_some(())
        };
        let ender = async {
            tokio::time::sleep(Duration::from_millis(60)).await;
            release.send(()).unwrap();
        };
        let (first, behind, ()) = tokio::join!(first, behind, ender);
        assert!(first.is_ok() && behind.is_some());
        assert_eq!(
            sent.load(Ordering::SeqCst),
            2,
            "the first wait of `a` and the wait of `b` went to the server, not the second of `a`"
        );
        assert!(waits.lock().is_empty(), "no counter is left in the map");
    }
}
