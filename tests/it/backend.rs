//! Runs a behaviour test against a real server and, with identical expectations, against the
//! in-memory store.

#![allow(dead_code)]

use std::sync::Arc;

use mongo_sequence::clock::Clock;
use mongo_sequence::{store::MemoryStore, store::MongoStore, Sequence, SequenceOptions};
use mongodb::Database;

/// Where the counters of a test live.
pub enum Backend {
    Mongo(Database),
    Memory(Arc<MemoryStore>),
}

impl Backend {
    pub async fn mongo(test: &str) -> Self {
        Backend::Mongo(crate::common::database(test).await)
    }

    pub fn memory() -> Self {
        Backend::Memory(Arc::new(MemoryStore::new()))
    }

    /// A handle with a cache of its own, like a separate process would have.
    pub fn sequence(&self, opts: SequenceOptions) -> Sequence {
        match self {
            Backend::Mongo(db) => {
                let store = MongoStore::new(db, &opts).unwrap();
                Sequence::with_store(Arc::new(store), opts).unwrap()
            }
            Backend::Memory(store) => Sequence::with_store(store.clone(), opts).unwrap(),
        }
    }

    /// A handle with a cache of its own that reads the time from `clock`.
    pub fn sequence_at(&self, opts: SequenceOptions, clock: Arc<dyn Clock>) -> Sequence {
        let seq = self.sequence(opts);
        seq.set_clock(clock);
        seq
    }

    /// The database, for checks that only apply to the real server.
    pub fn database(&self) -> Option<&Database> {
        match self {
            Backend::Mongo(db) => Some(db),
            Backend::Memory(_) => None,
        }
    }
}

/// Runs each named `async fn(Backend)` of the enclosing module against both backends.
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod mongo {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::backend::Backend::mongo(stringify!($name)).await).await;
                }
            )*
        }
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::backend::Backend::memory()).await;
                }
            )*
        }
    };
}
