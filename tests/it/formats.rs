//! Formatted IDs: a period's prefix and the counter zero-padded to `width`, as text or as the
//! same digits in an integer; IDs of exactly `digits` digits; exhaustion instead of a longer or
//! shorter ID. Run against a real server and, where it applies, against the in-memory store.

use crate::common;

use std::sync::Arc;

use mongo_sequence::jiff::Timestamp;
use mongo_sequence::{
    clock::ManualClock, options::SequenceOptionsBuilder, Error, Sequence, SequenceOptions,
    SequentialId,
};
use mongodb::bson::doc;
use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::both;

fn at(instant: &str) -> Timestamp {
    instant.parse().unwrap()
}

/// Noon UTC on Nov 22, 2025 (21:00 in Tokyo).
fn noon() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(at("2025-11-22T12:00:00Z")))
}

fn opts(name: &str) -> SequenceOptionsBuilder {
    common::opts(name)
}

/// The sequence of `opts` on `b`, at noon.
fn at_noon(b: &Backend, opts: SequenceOptions) -> Sequence {
    b.sequence_at(opts, noon())
}

fn is_exhausted<T: std::fmt::Debug>(result: Result<T, Error>, max: i64) {
    match result {
        Err(Error::Exhausted { max: m, .. }) => assert_eq!(m, max),
        other => panic!("expected Exhausted at {max}, got {other:?}"),
    }
}

both!(
    prefixes_and_padding_render_as_text_and_digits,
    width_exhaustion_never_changes_the_length,
    digits_fix_the_length,
);

async fn prefixes_and_padding_render_as_text_and_digits(b: Backend) {
    let inv = at_noon(
        &b,
        opts("inv").prefix("INV-YYMMDD-").width(4).start(7).build(),
    );
    assert_eq!(inv.next_id::<String>().await.unwrap(), "INV-251122-0007");
    assert_eq!(inv.next_id::<String>().await.unwrap(), "INV-251122-0008");
    match inv.next_id::<i64>().await {
        Err(Error::InvalidConfig {
            key: "prefix",
            message: m,
            ..
        }) => assert!(m.contains("`String`"), "{m}"),
        other => panic!("an integer cannot hold a literal prefix: {other:?}"),
    }

    let daily = at_noon(&b, opts("daily").prefix("YYMMDD").start(7).build());
    assert_eq!(daily.next_id::<i64>().await.unwrap(), 251_122_000_007);
    assert_eq!(daily.next_id::<u64>().await.unwrap(), 251_122_000_008);
    assert_eq!(daily.next_id::<String>().await.unwrap(), "251122000009");
    assert!(matches!(
        daily.next_id::<i32>().await,
        Err(Error::IdOutOfRange { target: "i32", .. })
    ));
    assert_eq!(
        daily.next().await.unwrap(),
        11,
        "`next` is the counter value"
    );
    let ids = daily.reserve_ids::<i64>(3).await.unwrap();
    assert_eq!(ids, [251_122_000_012, 251_122_000_013, 251_122_000_014]);

    let hourly = at_noon(
        &b,
        opts("hourly")
            .prefix("YYYYMMDDHH'h'")
            .tz("Asia/Tokyo")
            .width(3)
            .build(),
    );
    assert_eq!(hourly.next_id::<String>().await.unwrap(), "2025112221h001");

    let padded = at_noon(&b, opts("padded").width(6).build());
    assert_eq!(padded.next_id::<String>().await.unwrap(), "000001");
    assert_eq!(padded.next_id::<i64>().await.unwrap(), 2);
}

async fn width_exhaustion_never_changes_the_length(b: Backend) {
    // One round trip per ID.
    let text = at_noon(&b, opts("text").prefix("YYMMDD").width(2).start(97).build());
    for want in ["25112297", "25112298", "25112299"] {
        assert_eq!(text.next_id::<String>().await.unwrap(), want);
    }
    for _ in 0..2 {
        is_exhausted(text.next_id::<String>().await, 99);
    }
    assert_eq!(
        text.current().await.unwrap(),
        Some(99),
        "nothing was written"
    );

    // Cached batches stop at the same place, with a partial last batch.
    let batched = at_noon(
        &b,
        opts("batched")
            .prefix("YYMMDD")
            .width(2)
            .start(90)
            .batch(4)
            .build(),
    );
    let mut got = Vec::new();
    loop {
        match batched.next_id::<String>().await {
            Ok(id) => got.push(id),
            Err(Error::Exhausted { max: 99, .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    let want: Vec<String> = (90..=99).map(|n| format!("251122{n}")).collect();
    assert_eq!(got, want);
    is_exhausted(batched.reserve(1).await, 99);

    // Integers: the same digits, the same stop.
    let number = at_noon(
        &b,
        opts("number").prefix("YYMMDD").width(3).start(998).build(),
    );
    assert_eq!(number.next_id::<i64>().await.unwrap(), 251_122_998);
    assert_eq!(number.next_id::<i64>().await.unwrap(), 251_122_999);
    is_exhausted(number.next_id::<i64>().await, 999);

    // A bulk reservation that does not fit takes nothing.
    let bulk = at_noon(&b, opts("bulk").prefix("YYMMDD").width(1).build());
    is_exhausted(bulk.reserve_ids::<i64>(10).await, 9);
    assert_eq!(
        bulk.reserve_ids::<i64>(9).await.unwrap().last(),
        Some(&2_511_229)
    );

    // A new day restarts at `start`.
    let c = Arc::new(ManualClock::new(at("2025-11-22T12:00:00Z")));
    let daily = b.sequence_at(
        SequenceOptions::builder("daily_width")
            .prefix("YYMMDD")
            .width(1)
            .start(9)
            .build(),
        c.clone(),
    );
    assert_eq!(daily.next_id::<String>().await.unwrap(), "2511229");
    is_exhausted(daily.next_id::<String>().await, 9);
    c.set(at("2025-11-23T00:00:00Z"));
    assert_eq!(daily.next_id::<String>().await.unwrap(), "2511239");
}

async fn digits_fix_the_length(b: Backend) {
    let twelve = at_noon(&b, opts("twelve").digits(12).build());
    assert_eq!(twelve.next_id::<i64>().await.unwrap(), 100_000_000_000);
    assert_eq!(twelve.next_id::<String>().await.unwrap(), "100000000001");
    twelve.set_next(999_999_999_999).await.unwrap();
    assert_eq!(twelve.next().await.unwrap(), 999_999_999_999);
    is_exhausted(twelve.next().await, 999_999_999_999);

    let batched = at_noon(&b, opts("batched").digits(3).start(995).batch(4).build());
    let got: Vec<String> = {
        let mut got = Vec::new();
        loop {
            match batched.next_id::<String>().await {
                Ok(id) => got.push(id),
                Err(Error::Exhausted { max: 999, .. }) => break got,
                Err(e) => panic!("{e}"),
            }
        }
    };
    assert_eq!(got, ["995", "996", "997", "998", "999"]);

    let eight = at_noon(&b, opts("eight").digits(8).build());
    assert_eq!(eight.next_id::<String>().await.unwrap(), "10000000");
    assert!(matches!(
        eight.set_next(5).await,
        Err(Error::InvalidArgument {
            argument: "next",
            ..
        })
    ));
}

#[test]
fn invalid_formats_are_typed_errors() {
    let invalid = |b: SequenceOptionsBuilder| match b.build().validate() {
        Err(Error::InvalidConfig { message, .. }) => message,
        other => panic!("expected InvalidConfig, got {other:?}"),
    };
    let o = || SequenceOptions::builder("x");
    assert!(invalid(o().prefix("YYMMDD").tz("Europe/Berln")).contains("unknown time zone"));
    assert!(invalid(o().prefix("YYY")).contains("unknown prefix token `YYY`"));
    assert!(invalid(o().prefix("")).contains("empty"));
    assert!(invalid(o().prefix("MMDD")).contains("needs a year"));
    assert!(invalid(o().prefix("YYMMDD").digits(12)).contains("`digits`"));
    assert!(invalid(o().prefix("YYMMDD").width(0)).contains("`width`"));
    assert!(invalid(o().digits(19)).contains("`digits`"));
    assert!(invalid(o().digits(3).start(1000)).contains("`start`"));
    assert!(invalid(o().tz("UTC")).contains("needs a `prefix`"));
    assert!(o()
        .prefix("YYMMDD")
        .tz("europe/berlin")
        .build()
        .validate()
        .is_ok());
}

// ----- Models (real server) -----

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", prefix = "INV-YYMMDD-", width = 4, start = 7)]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", prefix = "YYMMDD")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "tiny", prefix = "YYMMDD", width = 1, start = 8)]
struct Tiny {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "account", digits = 12)]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "member", digits = 8)]
struct Member {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "badge", width = 6)]
struct Badge {
    #[serde(rename = "_id")]
    id: String,
}

#[tokio::test]
async fn models_store_formatted_ids() {
    let db = common::database("models_formats").await;

    let invoices = db.collection::<Invoice>("invoices");
    Invoice::sequence(&invoices).set_clock(noon());
    let mut inv = Invoice { id: String::new() };
    assert_eq!(
        inv.insert_with_id(&invoices).await.unwrap(),
        "INV-251122-0007"
    );
    let stored = invoices
        .find_one(doc! { "_id": "INV-251122-0007" })
        .await
        .unwrap();
    assert!(stored.is_some());

    let tickets = db.collection::<Ticket>("tickets");
    Ticket::sequence(&tickets).set_clock(noon());
    let mut t = Ticket { id: 0 };
    assert_eq!(t.insert_with_id(&tickets).await.unwrap(), 251_122_000_001);
    let mut more: Vec<Ticket> = (0..3).map(|_| Ticket { id: 0 }).collect();
    assert_eq!(
        Ticket::insert_many_with_ids(&mut more, &tickets)
            .await
            .unwrap(),
        [251_122_000_002, 251_122_000_003, 251_122_000_004]
    );
    let stored: Vec<Ticket> = common::all(&tickets).await;
    assert_eq!(stored.len(), 4);
    assert_eq!(stored[3].id, 251_122_000_004);

    let tiny = db.collection::<Tiny>("tiny");
    Tiny::sequence(&tiny).set_clock(noon());
    let mut a = Tiny { id: None };
    let mut b = Tiny { id: None };
    let mut c = Tiny { id: None };
    assert_eq!(a.insert_with_id(&tiny).await.unwrap(), 2_511_228);
    assert_eq!(b.insert_with_id(&tiny).await.unwrap(), 2_511_229);
    is_exhausted(c.insert_with_id(&tiny).await, 9);
    assert_eq!(c.id, None, "no ID, nothing inserted");
    assert_eq!(tiny.count_documents(doc! {}).await.unwrap(), 2);

    let accounts = db.collection::<Account>("accounts");
    let mut acct = Account { id: 0 };
    assert_eq!(
        acct.insert_with_id(&accounts).await.unwrap(),
        100_000_000_000
    );
    Account::sequence(&accounts)
        .set_next(999_999_999_999)
        .await
        .unwrap();
    let mut last = Account { id: 0 };
    assert_eq!(
        last.insert_with_id(&accounts).await.unwrap(),
        999_999_999_999
    );
    is_exhausted(
        Account { id: 0 }.insert_with_id(&accounts).await,
        999_999_999_999,
    );

    let members = db.collection::<Member>("members");
    let mut m = Member { id: String::new() };
    assert_eq!(m.insert_with_id(&members).await.unwrap(), "10000000");

    let badges = db.collection::<Badge>("badges");
    let mut badge = Badge { id: String::new() };
    assert_eq!(badge.insert_with_id(&badges).await.unwrap(), "000001");
}
