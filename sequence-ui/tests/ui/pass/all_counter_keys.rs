#![deny(warnings)]

use mongo_sequence::options::Stores;
use mongo_sequence::{Batch, SequentialId};
use serde::{Deserialize, Serialize};

/// Keys split over several attributes, in any order.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(batch = 25, name = "userid")]
#[seq(start = 1000, max = 999_999)]
#[seq(counters = "ids")]
pub struct User {
    #[serde(rename = "_id")]
    #[seq(id)]
    pub id: i64,
    pub name: String,
}

/// An adaptive batch between its bounds, and an unsigned ID.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(batch = 5..=500)]
pub struct Event {
    #[serde(rename = "_id")]
    pub id: u64,
}

/// The default name is the struct name in snake_case; negative bounds are fine.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(start = -10, max = -1)]
pub struct LedgerEntry {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// Counter documents written by other code: `{ _id: "personIdCounter", sequence: N }` (the
/// last value issued) and `{ _id: "invoice", COUNT: N }` (the next free value).
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "personIdCounter", field = "sequence")]
pub struct Person {
    #[serde(rename = "_id")]
    pub id: i64,
}

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", field = "COUNT", stores = "next_free")]
pub struct Invoice {
    #[serde(rename = "_id")]
    pub id: i64,
}

fn main() {
    let c = <User as SequentialId>::SEQUENCE;
    assert_eq!(
        (c.name, c.counters, c.start, c.max),
        ("userid", "ids", 1000, 999_999)
    );
    assert_eq!(c.batch, Batch::Fixed(25));
    let e = <Event as SequentialId>::SEQUENCE;
    assert_eq!(e.name, "event");
    assert_eq!(e.batch, Batch::from(5..=500));
    let l = <LedgerEntry as SequentialId>::SEQUENCE;
    assert_eq!((l.name, l.start, l.max), ("ledger_entry", -10, -1));
    let p = <Person as SequentialId>::SEQUENCE;
    assert_eq!((p.field, p.stores), ("sequence", Stores::LastIssued));
    let i = <Invoice as SequentialId>::SEQUENCE.options();
    assert_eq!((i.field.as_str(), i.stores), ("COUNT", Stores::NextFree));
}
