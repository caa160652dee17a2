//! Two deployments with a database of the same name, used from one process (a migration, a
//! blue/green switch): each deployment's IDs come from its own counter, so that no later
//! process on either deployment reissues them.

use crate::common;

use std::collections::HashSet;

use mongo_sequence::{Sequence, SequenceOptions, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::{Client, Collection, Database};
use sequence_testkit::{unique_db_name, ServerOptions, TestServer};
use serde::{Deserialize, Serialize};

/// Cached ranges.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "cached", batch = 25)]
struct Cached {
    #[serde(rename = "_id")]
    #[seq(id)]
    id: i64,
}

/// One coalesced round trip per ID.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "single")]
struct Single {
    #[serde(rename = "_id")]
    #[seq(id)]
    id: i64,
}

/// Shards, whose full ones a process remembers.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "ranges",
    strategy = "ranges",
    shards = 2,
    digits = 6,
    batch = 5
)]
struct Sharded {
    #[serde(rename = "_id")]
    #[seq(id)]
    id: i64,
}

/// mongoose-sequence's layout, whose unique index a process creates once per collection.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "mongoose",
    layout = "mongoose_sequence",
    counters = "identitycounters",
    batch = 10
)]
struct Mongoose {
    #[serde(rename = "_id")]
    #[seq(id)]
    id: i64,
}

/// Where the same database name lives on both deployments.
struct Pair {
    dbs: [Database; 2],
}

impl Pair {
    fn colls<M: Send + Sync>(&self, name: &str) -> [Collection<M>; 2] {
        [self.dbs[0].collection(name), self.dbs[1].collection(name)]
    }

    /// Inserts `n` documents of `M` into `name` on both deployments, taking turns, and checks
    /// that each deployment's counters cover the IDs stored there: a dry run of
    /// `sync_counters` would move none of them.
    async fn check<M>(&self, name: &str, n: usize, make: impl Fn() -> M) -> usize
    where
        M: SequentialId<Id = i64> + Serialize + for<'de> Deserialize<'de> + Unpin,
    {
        let colls = self.colls::<M>(name);
        for i in 0..n {
            make().insert_with_id(&colls[i % 2]).await.unwrap();
        }
        for (d, coll) in colls.iter().enumerate() {
            let docs = coll.clone_with_type::<Document>();
            let stored: Vec<Document> = common::all(&docs).await;
            let ids: HashSet<i64> = stored.iter().map(|d| d.get_i64("_id").unwrap()).collect();
            assert_eq!(ids.len(), n / 2, "{name} on deployment {d}: every ID once");
            let report = M::sequence(coll)
                .sync_counters(&docs, "_id")
                .dry_run(true)
                .await
                .unwrap();
            let behind: Vec<_> = report.counters.iter().filter(|c| c.moved()).collect();
            assert!(
                behind.is_empty(),
                "{name} on deployment {d}: IDs stored beyond their counter, which another \
                 process would issue again: {behind:?}"
            );
        }
        n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_deployment_covers_its_ids_with_its_own_counter() {
    let other = tokio::task::spawn_blocking(|| TestServer::start(ServerOptions::default()))
        .await
        .unwrap()
        .expect("a second server");
    let name = unique_db_name("deployments");
    let clients = [
        common::client().await,
        Client::with_uri_str(other.uri()).await.unwrap(),
    ];
    let pair = Pair {
        dbs: [clients[0].database(&name), clients[1].database(&name)],
    };
    let ids = pair.check("cached", 60, || Cached { id: 0 }).await
        + pair.check("single", 20, || Single { id: 0 }).await
        + pair.check("ranges", 30, || Sharded { id: 0 }).await
        + pair.check("mongoose", 30, || Mongoose { id: 0 }).await;

    // The mongoose layout's unique index exists on both deployments.
    for (d, db) in pair.dbs.iter().enumerate() {
        let indexes = db
            .collection::<Document>("identitycounters")
            .list_index_names()
            .await
            .unwrap();
        assert!(
            indexes.iter().any(|i| i.contains("reference_value")),
            "deployment {d}: {indexes:?}"
        );
    }

    // Sequences built by hand on each: their values come from their own deployment's counter.
    let seqs = pair
        .dbs
        .each_ref()
        .map(|db| Sequence::new(db, SequenceOptions::builder("plain").batch(10).build()).unwrap());
    let mut last = [0; 2];
    for i in 0..30 {
        last[i % 2] = seqs[i % 2].next().await.unwrap();
    }
    assert_eq!(last, [15, 15], "each counter counted its own 15 IDs");
    for (d, db) in pair.dbs.iter().enumerate() {
        let counter = db
            .collection::<Document>("counters")
            .find_one(doc! { "_id": "plain" })
            .await
            .unwrap()
            .unwrap();
        assert!(
            counter.get_i64("seq").unwrap() >= 15,
            "deployment {d}: {counter}"
        );
    }
    println!(
        "reliability: deployments deployments=2 ids={} reissued=0 counters_behind=0",
        ids + 30
    );
    drop(clients);
    tokio::task::spawn_blocking(move || other.stop())
        .await
        .unwrap();
}
