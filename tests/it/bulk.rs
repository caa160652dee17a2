//! Bulk inserts called again and again: from the second call on, the next call's numbers are
//! reserved while the current call inserts, so a call finds its numbers ready; at most one
//! call's worth is held ahead, `release` gives it back, and an admin operation drops it.

use crate::common;

use std::time::Duration;

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "line")]
struct Line {
    #[serde(rename = "_id")]
    id: i64,
    text: String,
}

fn lines(n: usize) -> Vec<Line> {
    (0..n)
        .map(|i| Line {
            id: 0,
            text: format!("line {i}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_bulk_inserts_find_their_numbers_reserved() {
    let name = sequence_testkit::unique_db_name("bulk_ahead");
    let (client, commands) = common::monitored_client(&name).await;
    let db = client.database(&name);
    let coll = db.collection::<Line>("lines");
    let mut trips_before = Vec::new();
    let mut ids = Vec::new();
    // `sent`: the round trips sent once a call and the reservation it starts for the next one
    // are out.
    for sent in [1, 3, 4, 5] {
        trips_before.push(commands.round_trips());
        ids.push(
            Line::insert_many_with_ids(&mut lines(10), &coll)
                .await
                .unwrap(),
        );
        // What the application does between two bulk calls: here, wait until the reservation
        // for the next call is sent (a call that starts before its reply lands waits for it).
        let limit = Duration::from_secs(5);
        assert!(
            common::wait_until(limit, || commands.round_trips() >= sent).await,
            "{} round trips sent after call {}, not {sent}",
            commands.round_trips(),
            ids.len()
        );
    }
    for (k, call) in ids.iter().enumerate() {
        let first = 10 * k as i64 + 1;
        assert_eq!(*call, (first..first + 10).collect::<Vec<_>>(), "call {k}");
    }
    // The first two calls reserve their own numbers; the second also the third's, and from
    // then on each call the next one's: every call from the third finds its numbers reserved
    // before it starts, and sends one reservation, for the call after it.
    assert_eq!(trips_before, [0, 1, 3, 4], "round trips before each call");
    assert_eq!(commands.round_trips(), 5);
    // The fifth reservation is sent; its write may still be on its way to the counter.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while common::counter(&db, "line").await != Some(50) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(common::counter(&db, "line").await, Some(50));
    // One call's worth is held, and given back.
    let seq = Line::sequence(&coll);
    assert_eq!(seq.release().await.unwrap(), 10);
    assert_eq!(common::counter(&db, "line").await, Some(40));
    let stats = seq.stats();
    assert_eq!((stats.issued, stats.released), (40, 10), "{stats:?}");

    // After an admin operation, the values reserved ahead are dropped, never used.
    Line::insert_many_with_ids(&mut lines(10), &coll)
        .await
        .unwrap(); // 41..=50
    let ahead = Line::insert_many_with_ids(&mut lines(10), &coll)
        .await
        .unwrap(); // 51..=60
    assert_eq!(ahead[0], 51);
    // 61..=70 are reserved ahead (in flight or done): `set_next` waits for them and drops them.
    let wasted = seq.stats().wasted;
    seq.set_next(100).await.unwrap();
    assert_eq!(
        seq.stats().wasted - wasted,
        10,
        "the 10 values reserved ahead were dropped"
    );
    let after = Line::insert_many_with_ids(&mut lines(10), &coll)
        .await
        .unwrap();
    assert_eq!(
        after[0], 100,
        "the numbers reserved before `set_next` are not used"
    );
    assert_eq!(common::all(&db.collection::<Line>("lines")).await.len(), 70);
}
