//! IDs for people: check digits, Crockford base 32, Sqids and `format` templates, inserted into
//! a real server, read back with `parse_id`, skipped past when imported documents hold them,
//! and read by `sync_counters`.

use std::sync::Arc;

use mongo_sequence::clock::ManualClock;
use mongo_sequence::{Error, Sequence, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::Collection;
use serde::{Deserialize, Serialize};

use crate::common;

/// Account numbers read over the phone: `ACC-00000001-8`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(format = "ACC-{n:08}-{check}", check_digit = "luhn", batch = 25)]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

/// Order codes typed from a receipt: `ORD-0001X`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    prefix = "'ORD-'",
    width = 4,
    encoding = "crockford32",
    check_digit = "crockford"
)]
struct Order {
    #[serde(rename = "_id")]
    id: String,
}

/// Public links that do not reveal the count.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(encoding = "sqids", min_length = 6)]
struct Link {
    #[serde(rename = "_id")]
    id: String,
}

/// A month and a number as one integer, with IBAN-style check digits.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(format = "{YY}{MM}{n}", check_digit = "mod97")]
struct Ledger {
    #[serde(rename = "_id")]
    id: i64,
}

/// The year in front, text behind: `2025/00042/EU`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(format = "{YYYY}/{n:05}/EU", gapless)]
struct Filing {
    #[serde(rename = "_id")]
    id: String,
}

/// Crockford codes from shards of a ranges sequence, up to `ZZZZ`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    strategy = "ranges",
    shards = 4,
    encoding = "crockford32",
    max = 1_048_575
)]
struct Voucher {
    #[serde(rename = "_id")]
    id: String,
}

/// A template per tenant: each tenant's tickets are `T-0001`, `T-0002`, ….
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(scope = "tenant", format = "T-{n:04}-{check}", check_digit = "damm")]
struct Ticket {
    #[seq(id)]
    number: String,
    tenant: String,
}

/// Luhn's check digit of the digits of `text`, written here independently of the crate.
fn luhn(text: &str) -> u32 {
    let digits: Vec<u32> = text.chars().filter_map(|c| c.to_digit(10)).collect();
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match i % 2 {
            0 if d * 2 > 9 => d * 2 - 9,
            0 => d * 2,
            _ => d,
        })
        .sum();
    (10 - sum % 10) % 10
}

/// The clock of `M`'s sequence for `coll`, at noon on Nov 22, 2025.
fn noon<M: SequentialId>(coll: &Collection<M>) {
    let clock = ManualClock::new("2025-11-22T12:00:00Z".parse().unwrap());
    M::sequence(coll).set_clock(Arc::new(clock));
}

async fn insert<M: SequentialId>(coll: &Collection<M>, mut make: impl FnMut() -> M) -> Vec<M::Id> {
    let mut ids = Vec::new();
    for _ in 0..3 {
        let mut doc = make();
        ids.push(doc.insert_with_id(coll).await.unwrap());
    }
    ids
}

#[tokio::test]
async fn each_format_is_stored_and_read_back() {
    let db = common::database("readable_formats").await;

    let accounts = db.collection::<Account>("accounts");
    let ids = insert(&accounts, || Account { id: String::new() }).await;
    for (n, id) in (1..).zip(&ids) {
        let number = format!("{n:08}");
        assert_eq!(*id, format!("ACC-{number}-{}", luhn(&number)));
        assert_eq!(Account::parse_id(id).unwrap().value, n);
    }
    let stored: Vec<Account> = common::all(&accounts).await;
    assert_eq!(
        stored.iter().map(|a| &a.id).collect::<Vec<_>>(),
        ids.iter().collect::<Vec<_>>()
    );
    // From the process's cache, as the inserts took them: rendered the same way.
    let next = Account::next_id(&accounts).await.unwrap();
    assert_eq!(next, format!("ACC-00000004-{}", luhn("00000004")));
    let typo = ids[1].replace("00000002", "00000020");
    assert!(matches!(
        Account::parse_id(&typo),
        Err(Error::InvalidId { .. })
    ));

    let orders = db.collection::<Order>("orders");
    let ids = insert(&orders, || Order { id: String::new() }).await;
    assert_eq!(ids, ["ORD-00011", "ORD-00022", "ORD-00033"]);
    let lower = Order::parse_id("ord-00033").unwrap_err().to_string();
    assert!(lower.contains("does not begin with `ORD-`"), "{lower}");
    assert_eq!(
        Order::parse_id("ORD-OOO33").unwrap().value,
        3,
        "O reads as 0"
    );

    let links = db.collection::<Link>("links");
    let ids = insert(&links, || Link { id: String::new() }).await;
    for (n, id) in (1..).zip(&ids) {
        assert!(id.len() >= 6, "{id}");
        assert_eq!(Link::parse_id(id).unwrap().value, n);
    }
    assert!(Link::parse_id("not-a-link").is_err());

    let ledger = db.collection::<Ledger>("ledger");
    noon(&ledger);
    let ids = insert(&ledger, || Ledger { id: 0 }).await;
    for (n, id) in (1..).zip(&ids) {
        // `2511`, six digits of the number, then two check digits: the whole is 1 mod 97.
        assert_eq!(id / 100, 2_511_000_000 + n);
        assert_eq!(id % 97, 1, "{id}");
        let parsed = Ledger::parse_id(&id.to_string()).unwrap();
        assert_eq!(
            (parsed.value, parsed.period.as_deref()),
            (n, Some("202511"))
        );
    }

    let filings = db.collection::<Filing>("filings");
    noon(&filings);
    let ids = insert(&filings, || Filing { id: String::new() }).await;
    assert_eq!(ids, ["2025/00001/EU", "2025/00002/EU", "2025/00003/EU"]);
}

/// Documents imported with IDs of these formats: an insert that meets one skips past the
/// highest stored, as it does past numbers.
#[tokio::test]
async fn inserts_skip_past_imported_ids_of_each_format() {
    let db = common::database("readable_skip").await;

    // IDs written by a sequence of the same configuration, in memory: what another program
    // of this configuration would have stored.
    async fn written<M: SequentialId>(values: std::ops::RangeInclusive<i64>) -> Vec<String> {
        let seq = Sequence::in_memory(M::SEQUENCE.options()).unwrap();
        seq.set_clock(Arc::new(ManualClock::new(
            "2025-11-22T12:00:00Z".parse().unwrap(),
        )));
        seq.set_next(*values.start()).await.unwrap();
        let mut ids = Vec::new();
        for _ in values {
            ids.push(seq.next_id::<String>().await.unwrap());
        }
        ids
    }
    async fn import(coll: &Collection<Document>, ids: Vec<mongodb::bson::Bson>) {
        let docs: Vec<Document> = ids.into_iter().map(|id| doc! { "_id": id }).collect();
        coll.insert_many(docs).await.unwrap();
    }

    let ids = written::<Account>(1..=40).await;
    import(
        &db.collection("accounts"),
        ids.into_iter().map(Into::into).collect(),
    )
    .await;
    let accounts = db.collection::<Account>("accounts");
    let id = Account { id: String::new() }
        .insert_with_id(&accounts)
        .await
        .unwrap();
    assert_eq!(Account::parse_id(&id).unwrap().value, 41, "{id}");

    let ids = written::<Link>(1..=30).await;
    import(
        &db.collection("links"),
        ids.into_iter().map(Into::into).collect(),
    )
    .await;
    let links = db.collection::<Link>("links");
    let id = Link { id: String::new() }
        .insert_with_id(&links)
        .await
        .unwrap();
    assert_eq!(Link::parse_id(&id).unwrap().value, 31, "{id}");

    let ids = written::<Ledger>(1..=12).await;
    let numbers = ids
        .iter()
        .map(|id| id.parse::<i64>().unwrap().into())
        .collect();
    import(&db.collection("ledger"), numbers).await;
    let ledger = db.collection::<Ledger>("ledger");
    noon(&ledger);
    let id = Ledger { id: 0 }.insert_with_id(&ledger).await.unwrap();
    assert_eq!(Ledger::parse_id(&id.to_string()).unwrap().value, 13, "{id}");
}

#[tokio::test]
async fn sync_counters_reads_ids_of_each_format() {
    let db = common::database("readable_sync").await;
    let raw = db.collection::<Document>("filings");
    let mut docs: Vec<Document> = (1..=42)
        .map(|n| doc! { "_id": format!("2025/{n:05}/EU") })
        .collect();
    docs.push(doc! { "_id": "2024/00007/EU" });
    // Not IDs of the sequence: another suffix, a letter in the number, another width.
    docs.push(doc! { "_id": "2025/00099/US" });
    docs.push(doc! { "_id": "2025/0009X/EU" });
    docs.push(doc! { "_id": "2025/099/EU" });
    raw.insert_many(docs).await.unwrap();
    let filings = db.collection::<Filing>("filings");
    noon(&filings);
    let report = Filing::sync_counters(&filings).await.unwrap();
    let rows: Vec<(String, i64, u64)> = report
        .counters
        .iter()
        .map(|c| (c.key.to_string(), c.new, c.ids))
        .collect();
    assert_eq!(
        rows,
        [
            (r#"{ "seq": "filing", "period": "2024" }"#.to_owned(), 7, 1),
            (
                r#"{ "seq": "filing", "period": "2025" }"#.to_owned(),
                42,
                42
            ),
        ]
    );
    assert_eq!(report.skipped, 3);
    let id = Filing { id: String::new() }
        .insert_with_id(&filings)
        .await
        .unwrap();
    assert_eq!(id, "2025/00043/EU");

    let raw = db.collection::<Document>("orders");
    let ids: Vec<Document> = (1..=9_i64)
        // Below 10, a code's digits and its check symbol (n mod 37) are the number's digits.
        .map(|n| doc! { "_id": format!("ORD-{n:04}{n}") })
        .collect();
    raw.insert_many(ids).await.unwrap();
    let orders = db.collection::<Order>("orders");
    let report = Order::sync_counters(&orders).await.unwrap();
    assert_eq!(report.counters.len(), 1);
    assert_eq!((report.counters[0].new, report.skipped), (9, 0));
    let id = Order { id: String::new() }
        .insert_with_id(&orders)
        .await
        .unwrap();
    assert_eq!(id, "ORD-000AA", "10 is `A`, and so is its check symbol");
}

#[tokio::test]
async fn formats_work_with_ranges_and_scopes() {
    let db = common::database("readable_strategies").await;
    let vouchers = db.collection::<Voucher>("vouchers");
    let mut values = Vec::new();
    for _ in 0..8 {
        let id = Voucher { id: String::new() }
            .insert_with_id(&vouchers)
            .await
            .unwrap();
        assert!((1..=4).contains(&id.len()), "{id}");
        assert!(
            id.chars()
                .all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)),
            "{id}"
        );
        values.push(Voucher::parse_id(&id).unwrap().value);
    }
    values.sort_unstable();
    values.dedup();
    assert_eq!(values.len(), 8, "no value twice");
    let widest = 32_i64.pow(4) - 1;
    let shards: std::collections::BTreeSet<i64> =
        values.iter().map(|v| (v - 1) * 4 / widest).collect();
    assert!(
        shards.len() > 1,
        "the values come from several shards: {values:?}"
    );

    let tickets = db.collection::<Ticket>("tickets");
    let mut numbers = Vec::new();
    for tenant in ["acme", "globex", "acme"] {
        let mut t = Ticket {
            number: String::new(),
            tenant: tenant.into(),
        };
        t.insert_with_id(&tickets).await.unwrap();
        numbers.push((tenant, Ticket::parse_id(&t.number).unwrap().value, t.number));
    }
    assert_eq!(
        numbers.iter().map(|(t, v, _)| (*t, *v)).collect::<Vec<_>>(),
        [("acme", 1), ("globex", 1), ("acme", 2)]
    );
    assert!(numbers[0].2.starts_with("T-0001-"), "{}", numbers[0].2);
}
