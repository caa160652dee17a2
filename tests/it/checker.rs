//! The one checker of the reliability scenarios: it reads what the database holds (majority
//! read concern) and holds it against what the calls were told: numbers stored twice,
//! acknowledged numbers not stored, numbers the counter moved past that no document holds
//! (against the scenario's bound), and, for gapless sequences, numbers exactly `1..=N`.
//!
//! It proves it is not blind: `the_checker_sees_what_is_planted` plants a duplicate, a lost
//! acknowledged number and an excess gap in a database of its own, and fails unless each is
//! reported (and a clean database reports nothing).

use std::collections::{BTreeMap, HashSet};

use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{CollectionOptions, ReadConcern};
use mongodb::Database;

use crate::common;
use crate::common::models::hourly_key;

/// What the database holds: how many documents hold each number, read with majority read
/// concern (what a failover cannot take back).
#[derive(Debug, Default)]
pub struct Stored {
    counts: BTreeMap<i64, usize>,
    /// The (number, call) of each document, when the documents name the call that stored
    /// them: a lost document whose number another call stored again shows only there.
    calls: Option<HashSet<(i64, String)>>,
}

/// What a call was told is stored: its number, and which call it was when the documents say.
pub trait Acknowledged {
    /// The number.
    fn number(&self) -> i64;
    /// The call, as the documents store it.
    fn call(&self) -> Option<&str>;
}

impl Acknowledged for i64 {
    fn number(&self) -> i64 {
        *self
    }
    fn call(&self) -> Option<&str> {
        None
    }
}

impl Acknowledged for (i64, String) {
    fn number(&self) -> i64 {
        self.0
    }
    fn call(&self) -> Option<&str> {
        Some(&self.1)
    }
}

impl Stored {
    /// The numbers in `field` of every document of `coll` in `db`. A document without an
    /// integer there fails the check: the scenario stored something it did not mean to.
    pub async fn read(db: &Database, coll: &str, field: &str) -> Stored {
        Self::read_calls(db, coll, field, None).await
    }

    /// [`read`](Self::read), with the call each document names in `call_field`.
    pub async fn read_calls(
        db: &Database,
        coll: &str,
        field: &str,
        call_field: Option<&str>,
    ) -> Stored {
        let coll = majority(db, coll);
        let mut counts = BTreeMap::new();
        let mut calls = call_field.map(|_| HashSet::new());
        for d in common::all(&coll).await {
            let n = match d.get(field) {
                Some(Bson::Int64(n)) => *n,
                Some(Bson::Int32(n)) => i64::from(*n),
                other => panic!("a document without a number in `{field}`: {other:?} in {d}"),
            };
            *counts.entry(n).or_default() += 1;
            if let (Some(calls), Some(call_field)) = (&mut calls, call_field) {
                let call = d.get_str(call_field).expect("each document names its call");
                calls.insert((n, call.to_owned()));
            }
        }
        Stored { counts, calls }
    }

    /// The documents of `coll` in `db` numbered by an hourly sequence (`common::models::
    /// Hourly`): each ID's hour and number as one key (`hourly_key`), and its call.
    pub async fn read_hourly(db: &Database, coll: &str) -> Stored {
        let documents = common::all(&majority(db, coll)).await;
        Self::from_calls(documents.iter().map(|d| {
            let id = d.get_str("id").expect("an hourly ID");
            let call = d.get_str("call").expect("each document names its call");
            (hourly_key(id), call.to_owned())
        }))
    }

    /// The numbers a scenario read itself (a key of its own per document, as a tenant's
    /// number with its tenant).
    pub fn from_numbers(numbers: impl IntoIterator<Item = i64>) -> Stored {
        let mut counts = BTreeMap::new();
        for n in numbers {
            *counts.entry(n).or_default() += 1;
        }
        Stored {
            counts,
            calls: None,
        }
    }

    /// What a scenario read itself (with majority read concern): each document's number
    /// and call.
    pub fn from_calls(documents: impl IntoIterator<Item = (i64, String)>) -> Stored {
        let mut counts = BTreeMap::new();
        let mut calls = HashSet::new();
        for (n, call) in documents {
            *counts.entry(n).or_default() += 1;
            calls.insert((n, call));
        }
        Stored {
            counts,
            calls: Some(calls),
        }
    }

    /// The highest number stored, if any.
    pub fn highest(&self) -> Option<i64> {
        self.counts.keys().last().copied()
    }

    /// How many documents there are.
    pub fn documents(&self) -> usize {
        self.counts.values().sum()
    }

    /// Whether a document holds what `ack` was told: its number, and its call when both say.
    pub fn holds(&self, ack: &impl Acknowledged) -> bool {
        match (&self.calls, ack.call()) {
            (Some(calls), Some(call)) => calls.contains(&(ack.number(), call.to_owned())),
            _ => self.counts.contains_key(&ack.number()),
        }
    }
}

/// `coll` of `db`, read with majority read concern (what a failover cannot take back).
fn majority(db: &Database, coll: &str) -> mongodb::Collection<Document> {
    db.collection_with_options::<Document>(
        coll,
        CollectionOptions::builder()
            .read_concern(ReadConcern::majority())
            .build(),
    )
}

/// What a scenario promises beyond "no duplicate, nothing acknowledged lost".
#[derive(Clone, Copy, Debug, Default)]
pub struct Promise {
    /// The counter's last value at the end, and how many numbers below it may be held by no
    /// document (unconfirmed updates, failed calls, ranges held at the end).
    pub gaps_at_most: Option<(i64, u64)>,
    /// The numbers stored are exactly `1..=N` (a gapless sequence).
    pub dense: bool,
}

/// What the checker found.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Numbers stored more than once, with how many documents hold each.
    pub duplicates: Vec<(i64, usize)>,
    /// Acknowledged numbers no document holds (for the call that was told).
    pub lost: Vec<i64>,
    /// Numbers up to the counter's value that no document holds, and the bound (with
    /// [`Promise::gaps_at_most`]).
    pub gaps: Option<(u64, u64)>,
    /// Whether the numbers stored are `1..=N` (with [`Promise::dense`]).
    pub dense: Option<bool>,
}

/// Holds `acknowledged` (the numbers calls were told are stored) against `stored`.
pub fn judge<A: Acknowledged>(acknowledged: &[A], stored: &Stored, promise: Promise) -> Verdict {
    let duplicates = (stored.counts.iter())
        .filter(|(_, n)| **n > 1)
        .map(|(v, n)| (*v, *n))
        .collect();
    let lost = (acknowledged.iter())
        .filter(|ack| !stored.holds(*ack))
        .map(Acknowledged::number)
        .collect();
    let gaps = promise.gaps_at_most.map(|(counter, bound)| {
        let top = counter.max(stored.highest().unwrap_or(0));
        let held = stored.counts.range(1..=top).count() as i64;
        ((top - held).max(0) as u64, bound)
    });
    let dense = promise.dense.then(|| {
        let n = stored.counts.len() as i64;
        stored.documents() as i64 == n && stored.counts.keys().copied().eq(1..=n)
    });
    Verdict {
        duplicates,
        lost,
        gaps,
        dense,
    }
}

impl Verdict {
    /// What breaks the promise, one line each; empty when nothing does.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.duplicates.is_empty() {
            problems.push(format!("stored more than once: {:?}", self.duplicates));
        }
        if !self.lost.is_empty() {
            problems.push(format!("acknowledged but not stored: {:?}", self.lost));
        }
        if let Some((gaps, bound)) = self.gaps {
            if gaps > bound {
                problems.push(format!("{gaps} numbers held by no document, bound {bound}"));
            }
        }
        if self.dense == Some(false) {
            problems.push("the numbers stored are not 1..=N".to_owned());
        }
        problems
    }

    /// Fails the test with every problem found, under `label`.
    pub fn assert_clean(&self, label: &str) {
        let problems = self.problems();
        assert!(problems.is_empty(), "{label}: {}", problems.join("; "));
    }
}

/// A duplicate, a lost acknowledged number and an excess gap planted in a database of its
/// own are each reported; the same database without them reports nothing.
#[tokio::test]
async fn the_checker_sees_what_is_planted() {
    let name = sequence_testkit::unique_db_name("checker");
    let db = common::client().await.database(&name);
    let coll = db.collection::<Document>("docs");
    let clean: Vec<Document> = (1..=10).map(|n: i64| doc! { "number": n }).collect();
    coll.insert_many(clean).await.unwrap();
    let acknowledged: Vec<i64> = (1..=10).collect();
    let promise = Promise {
        gaps_at_most: Some((12, 2)),
        dense: true,
    };
    let control = judge(
        &acknowledged,
        &Stored::read(&db, "docs", "number").await,
        promise,
    );
    assert_eq!(control.problems(), Vec::<String>::new(), "{control:?}");

    // Planted: 5 stored twice, 11 acknowledged and never stored, the counter 20 past the
    // bound.
    coll.insert_one(doc! { "number": 5_i64 }).await.unwrap();
    let mut planted = acknowledged.clone();
    planted.push(11);
    let promise = Promise {
        gaps_at_most: Some((32, 2)),
        dense: true,
    };
    let verdict = judge(
        &planted,
        &Stored::read(&db, "docs", "number").await,
        promise,
    );
    let duplicate = verdict.duplicates == [(5, 2)];
    let lost = verdict.lost == [11];
    let gap = verdict.gaps == Some((22, 2));
    let dense = verdict.dense == Some(false);
    assert!(duplicate && lost && gap && dense, "{verdict:?}");
    assert_eq!(verdict.problems().len(), 4, "{:?}", verdict.problems());

    // A document lost while another call stored its number again: seen by the calls.
    let calls = db.collection::<Document>("calls");
    calls
        .insert_many([
            doc! { "number": 1_i64, "call": "a" },
            doc! { "number": 1_i64, "call": "b" },
        ])
        .await
        .unwrap();
    calls.delete_one(doc! { "call": "a" }).await.unwrap();
    let told = [(1_i64, "a".to_owned()), (1_i64, "b".to_owned())];
    let stored = Stored::read_calls(&db, "calls", "number", Some("call")).await;
    let by_call = judge(&told, &stored, Promise::default());
    assert_eq!(by_call.lost, [1], "{by_call:?}");
    let by_number = judge(&[1_i64], &stored, Promise::default());
    assert!(by_number.problems().is_empty(), "{by_number:?}");
    db.drop().await.unwrap();
    println!("reliability: checker planted duplicate=seen lost=seen gap=seen dense=seen");
}
