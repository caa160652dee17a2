//! The process-wide snapshot (`observability::snapshot`) against a real server: each sequence listed
//! once per deployment and counters collection, with the values its inserts and its cache
//! really hold.

use crate::common::models::Item;
use crate::common::{self, settled};

use mongo_sequence::{id::IdRange, observability, Sequence, SequenceOptions, SequentialId};
use serde::{Deserialize, Serialize};

/// Counter `ticket` with a batch of 25, the ID in `_id`.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", batch = 25)]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

#[tokio::test]
async fn the_snapshot_lists_each_sequence_with_its_real_values() {
    let db = common::database("snapshot").await;
    let location = format!("{}.counters", db.name());
    let tickets = db.collection::<Ticket>("tickets");
    let n = 30;
    for _ in 0..n {
        Ticket { id: 0 }.insert_with_id(&tickets).await.unwrap();
    }
    let items = db.collection::<Item>("items");
    for _ in 0..3 {
        Item { id: 0 }.insert_with_id(&items).await.unwrap();
    }

    let ticket = settled(&location, "ticket").await;
    let deployment = ticket.deployment.clone().expect("a MongoDB deployment");
    assert_eq!(deployment.len(), 16, "{deployment}");
    assert_eq!(ticket.strategy, "counter");
    assert_eq!(ticket.stats, Ticket::sequence(&tickets).stats());
    let s = ticket.stats;
    assert_eq!(s.issued, n);
    // Ranges of 25: 1..=25, 26..=50, and 51..=75 prefetched once 10% of 26..=50 was used.
    assert_eq!((s.reservations, s.reserved, s.waits), (3, 75, 1), "{s:?}");
    assert_eq!((s.wasted, s.skipped_ahead, s.collisions), (0, 0, 0));
    let cache = &ticket.cache;
    assert_eq!(cache.values_left, 25 - n % 25);
    assert_eq!(cache.current, IdRange::new(31, 50));
    assert_eq!(cache.next, IdRange::new(51, 75));
    assert_eq!(cache.cached, 45);
    assert_eq!(cache.batch, Some(25));
    assert_eq!(cache.counter.as_deref(), Some("ticket"));
    // The counter document holds what the process reserved.
    let current = Ticket::sequence(&tickets).current().await.unwrap();
    assert_eq!(current, Some(75));

    let item = settled(&location, "item").await;
    assert_eq!(item.deployment.as_deref(), Some(deployment.as_str()));
    assert_eq!((item.stats.issued, item.stats.reservations), (3, 3));
    assert_eq!(item.cache.batch, None, "batch 1: no cache");
    assert_eq!(item.cache.cached, 0);

    // Another handle of the same counter, from another client of the same server: the same
    // entry, not a second one.
    let other = common::client().await.database(db.name());
    let seq = Sequence::new(&other, SequenceOptions::builder("ticket").batch(25).build()).unwrap();
    assert_eq!(seq.next().await.unwrap(), 31);
    let again = settled(&location, "ticket").await;
    assert_eq!(again.stats.issued, n + 1);
    assert_eq!(again.cache.values_left, 19);

    let json = serde_json::to_value(observability::snapshot()).unwrap();
    let listed: Vec<_> = json["sequences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["location"] == location.as_str())
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let ticket = listed.iter().find(|s| s["sequence"] == "ticket").unwrap();
    assert_eq!(ticket["deployment"], deployment.as_str());
    assert_eq!(ticket["stats"]["issued"], n + 1);
    assert_eq!(ticket["cache"]["current"]["first"], 32);
    assert_eq!(ticket["cache"]["values_left"], 19);

    db.drop().await.unwrap();
}
