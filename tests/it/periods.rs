//! Period prefixes: one counter per day (month, hour…) in the sequence's time zone, the switch
//! at midnight under load, clocks that go backwards, and the purge of old periods. Run against
//! a real server and, where it applies, against the in-memory store.

use crate::common;
use crate::common::opts;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use mongo_sequence::jiff::civil::date;
use mongo_sequence::jiff::Timestamp;
use mongo_sequence::{clock::ManualClock, Error, SequentialId};
use mongodb::bson::{doc, Document};
use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::both;

fn at(instant: &str) -> Timestamp {
    instant.parse().unwrap()
}

fn clock(instant: &str) -> Arc<ManualClock> {
    Arc::new(ManualClock::new(at(instant)))
}

both!(
    ids_restart_at_start_each_day_in_the_zone,
    a_batch_belongs_to_the_period_it_was_reserved_in,
    a_clock_going_back_never_reissues_an_id,
    many_tasks_across_midnight,
    purge_removes_exactly_the_old_periods,
);

async fn ids_restart_at_start_each_day_in_the_zone(b: Backend) {
    // 23:58 on Nov 22 in Tokyo (UTC+9).
    let c = clock("2025-11-22T14:58:00Z");
    let seq = b.sequence_at(
        opts("ticket")
            .prefix("YYMMDD")
            .tz("Asia/Tokyo")
            .start(5)
            .build(),
        c.clone(),
    );
    assert_eq!(seq.next_id::<String>().await.unwrap(), "251122000005");
    assert_eq!(seq.next_id::<i64>().await.unwrap(), 251_122_000_006);
    c.set(at("2025-11-22T15:00:00Z")); // midnight in Tokyo
    assert_eq!(seq.next_id::<String>().await.unwrap(), "251123000005");
    assert_eq!(seq.next_id::<String>().await.unwrap(), "251123000006");
    assert_eq!(
        seq.current_key().unwrap().period(),
        Some("20251123"),
        "the canonical period does not depend on the display pattern"
    );
    assert_eq!(seq.current().await.unwrap(), Some(6));

    // The same instant is still Nov 22 in UTC (the default zone).
    let utc = b.sequence_at(opts("utc").prefix("YYMMDD").build(), c.clone());
    assert_eq!(utc.next_id::<String>().await.unwrap(), "251122000001");

    if let Some(db) = b.database() {
        let counters = db.collection::<Document>("counters");
        for (period, last) in [("20251122", 6), ("20251123", 6)] {
            let counter = counters
                .find_one(doc! { "_id": { "seq": "ticket", "period": period } })
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("a counter for {period}"));
            assert_eq!(counter.get_i64("seq").unwrap(), last);
        }
    }
}

async fn a_batch_belongs_to_the_period_it_was_reserved_in(b: Backend) {
    // 23:59 on Nov 22 in Berlin (UTC+1 in November).
    let c = clock("2025-11-22T22:59:00Z");
    let seq = b.sequence_at(
        opts("invoice")
            .prefix("'INV-'YYYYMMDD-")
            .width(4)
            .tz("Europe/Berlin")
            .batch(10)
            .prefetch_at(1.0)
            .build(),
        c.clone(),
    );
    for want in [
        "INV-20251122-0001",
        "INV-20251122-0002",
        "INV-20251122-0003",
    ] {
        assert_eq!(seq.next_id::<String>().await.unwrap(), want);
    }
    c.set(at("2025-11-22T23:00:00Z"));
    assert_eq!(
        seq.next_id::<String>().await.unwrap(),
        "INV-20251123-0001",
        "no value of the old day's batch is used after midnight"
    );
    let stats = seq.stats();
    assert_eq!(stats.wasted, 7, "{stats:?}");
    // 9 of the new day's 10: no prefetch (`prefetch_at(1.0)`), one round trip per period.
    for n in 2..=9 {
        assert_eq!(
            seq.next_id::<String>().await.unwrap(),
            format!("INV-20251123-{n:04}")
        );
    }
    let stats = seq.stats();
    assert_eq!((stats.issued, stats.reservations), (12, 2), "{stats:?}");

    if let Some(db) = b.database() {
        let old = db
            .collection::<Document>("counters")
            .find_one(doc! { "_id": { "seq": "invoice", "period": "20251122" } })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            old.get_i64("seq").unwrap(),
            10,
            "the whole batch was reserved"
        );
    }
}

async fn a_clock_going_back_never_reissues_an_id(b: Backend) {
    for batch in [1, 5] {
        let name = format!("back{batch}");
        let c = clock("2025-11-22T12:00:00Z");
        let seq = b.sequence_at(
            opts(&name)
                .prefix("YYMMDD")
                .batch(batch)
                .prefetch_at(1.0)
                .build(),
            c.clone(),
        );
        let mut seen = HashSet::new();
        let mut take = |id: String| assert!(seen.insert(id.clone()), "{id} issued twice");
        take(seq.next_id().await.unwrap());
        take(seq.next_id().await.unwrap());
        c.set(at("2025-11-23T12:00:00Z"));
        take(seq.next_id().await.unwrap());
        c.set(at("2025-11-22T23:59:59Z")); // backwards, into the previous day
        let back: String = seq.next_id().await.unwrap();
        let expected = if batch == 1 { 3 } else { 6 };
        assert_eq!(
            back,
            format!("251122{expected:06}"),
            "the earlier day's counter continues where it stopped"
        );
        take(back);
        c.set(at("2025-11-23T00:00:00Z"));
        let forward: String = seq.next_id().await.unwrap();
        assert!(forward.starts_with("251123"), "{forward}");
        take(forward);
        for _ in 0..20 {
            take(seq.next_id().await.unwrap());
        }
    }
}

async fn many_tasks_across_midnight(b: Backend) {
    const TASKS: usize = 32;
    // 23:59:59 on Nov 22 in Tokyo.
    let c = clock("2025-11-22T14:59:59Z");
    let seq = b.sequence_at(
        opts("load")
            .prefix("YYMMDD")
            .tz("Asia/Tokyo")
            .batch(8)
            .build(),
        c.clone(),
    );
    let switched = Arc::new(AtomicBool::new(false));
    let issued = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (seq, switched, issued) = (seq.clone(), switched.clone(), issued.clone());
            tokio::spawn(async move {
                // (whether the clock had moved before the call, the ID)
                let mut got: Vec<(bool, String)> = Vec::new();
                let mut new_day = 0;
                while new_day < 10 {
                    let after_switch = switched.load(SeqCst);
                    let id: String = seq.next_id().await.unwrap();
                    issued.fetch_add(1, SeqCst);
                    if id.starts_with("251123") {
                        new_day += 1;
                    }
                    got.push((after_switch, id));
                    assert!(got.len() < 100_000, "the clock never moved");
                }
                got
            })
        })
        .collect();
    while issued.load(SeqCst) < TASKS * 10 {
        tokio::task::yield_now().await;
    }
    c.set(at("2025-11-22T15:00:00Z"));
    switched.store(true, SeqCst);

    let mut all = HashSet::new();
    let (mut old_day, mut new_day) = (0, 0);
    for task in tasks {
        let got = task.await.unwrap();
        let mut saw_new_day = false;
        for (after_switch, id) in got {
            let is_new = id.starts_with("251123");
            assert!(is_new || id.starts_with("251122"), "{id}");
            assert_eq!(id.len(), 12, "{id}");
            assert!(
                is_new || !saw_new_day,
                "{id}: an old-day ID after a new-day one in the same task"
            );
            assert!(
                is_new || !after_switch,
                "{id}: an old-day ID from a call that started after the switch"
            );
            saw_new_day |= is_new;
            if is_new {
                new_day += 1;
            } else {
                old_day += 1;
            }
            assert!(all.insert(id.clone()), "{id} issued twice");
        }
    }
    assert!(old_day >= TASKS * 10, "{old_day}");
    assert!(new_day >= TASKS * 10, "{new_day}");
    // The new day's counter restarted at 1: its IDs are the lowest values of that day.
    assert!(all.contains("251123000001"));
}

async fn purge_removes_exactly_the_old_periods(b: Backend) {
    let c = clock("2025-11-20T12:00:00Z");
    let daily = |name: &str| opts(name).prefix("YYMMDD");
    let inv = b.sequence_at(daily("inv").build(), c.clone());
    let scoped = b
        .sequence_at(daily("inv").scope(["tenant"]).build(), c.clone())
        .in_scope(mongo_sequence::Scope::new().with("tenant", "acme"))
        .unwrap();
    let other = b.sequence_at(daily("other").build(), c.clone());
    let plain = b.sequence(opts("inv").build()); // `_id: "inv"`, no period
    assert_eq!(plain.next().await.unwrap(), 1);
    for day in [
        "2025-11-20T12:00:00Z",
        "2025-11-21T12:00:00Z",
        "2025-11-22T12:00:00Z",
    ] {
        c.set(at(day));
        assert_eq!(inv.next().await.unwrap(), 1);
        assert_eq!(scoped.next().await.unwrap(), 1);
        assert_eq!(other.next().await.unwrap(), 1);
    }

    // Now is Nov 22: Nov 23 is in the future, and would delete today's counter.
    match inv.purge_periods_before(date(2025, 11, 23)).await {
        Err(Error::InvalidArgument {
            argument: "before",
            reason,
            ..
        }) => assert!(reason.contains("after the current period"), "{reason}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert!(matches!(
        plain.purge_periods_before(date(2025, 11, 1)).await,
        Err(Error::InvalidArgument {
            argument: "before",
            ..
        })
    ));
    assert_eq!(
        inv.purge_periods_before(date(2025, 11, 22)).await.unwrap(),
        4
    );
    assert_eq!(
        inv.purge_periods_before(date(2025, 11, 22)).await.unwrap(),
        0
    );

    assert_eq!(
        inv.current().await.unwrap(),
        Some(1),
        "today's counter stays"
    );
    assert_eq!(scoped.current().await.unwrap(), Some(1));
    assert_eq!(
        plain.current().await.unwrap(),
        Some(1),
        "the plain counter stays"
    );
    for day in ["2025-11-20T12:00:00Z", "2025-11-21T12:00:00Z"] {
        c.set(at(day));
        assert_eq!(inv.current().await.unwrap(), None, "{day} purged");
        assert_eq!(scoped.current().await.unwrap(), None, "{day} purged");
        assert_eq!(
            other.current().await.unwrap(),
            Some(1),
            "other sequences stay"
        );
    }

    if let Some(db) = b.database() {
        let left: Vec<Document> = common::all(&db.collection::<Document>("counters")).await;
        let ids: HashSet<String> = left
            .iter()
            .map(|d| d.get("_id").unwrap().to_string())
            .collect();
        assert_eq!(left.len(), 6, "{ids:?}");
    }
}

// ----- Models (real server) -----

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "invoice",
    prefix = "INV-YYMMDD-",
    width = 4,
    tz = "Europe/Berlin",
    batch = 5
)]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
    amount: i64,
}

fn invoice(amount: i64) -> Invoice {
    Invoice {
        id: String::new(),
        amount,
    }
}

#[tokio::test]
async fn a_model_restarts_its_numbering_after_midnight() {
    let db = common::database("model_midnight").await;
    let invoices = db.collection::<Invoice>("invoices");
    let c = clock("2025-11-22T22:58:00Z"); // 23:58 in Berlin
    Invoice::sequence(&invoices).set_clock(c.clone());

    let mut ids = Vec::new();
    for amount in 0..3 {
        ids.push(invoice(amount).insert_with_id(&invoices).await.unwrap());
    }
    assert_eq!(
        ids,
        ["INV-251122-0001", "INV-251122-0002", "INV-251122-0003"]
    );
    c.set(at("2025-11-22T23:00:00Z"));
    let mut first = invoice(10);
    assert_eq!(
        first.insert_with_id(&invoices).await.unwrap(),
        "INV-251123-0001"
    );
    assert_eq!(first.id, "INV-251123-0001");
    let mut batch = vec![invoice(11), invoice(12), invoice(13)];
    let more = Invoice::insert_many_with_ids(&mut batch, &invoices)
        .await
        .unwrap();
    assert!(
        more.iter().all(|id| id.starts_with("INV-251123-")),
        "{more:?}"
    );
    assert_eq!(
        Invoice::next_id(&invoices).await.unwrap().len(),
        "INV-251123-0001".len()
    );

    let stored: Vec<Invoice> = common::all(&invoices).await;
    let distinct: HashSet<&str> = stored.iter().map(|i| i.id.as_str()).collect();
    assert_eq!((stored.len(), distinct.len()), (7, 7));
    Invoice::sequence(&invoices).use_system_clock();
}
