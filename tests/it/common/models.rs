//! The models more than one test module inserts, each standing for one counter configuration.
//! Models whose configuration is what a test is about (a strategy, a prefix, a width, a layout,
//! a scope, an ID type) stay beside that test.

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// Counter `item` with every option at its default (one round trip per ID), the ID in `_id`.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "item")]
pub struct Item {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// Gapless counter `receipt`, the number in `_id`, with a `code` the tests make unique (with an
/// index), so that a repeated code fails one insert on purpose.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "receipt", gapless)]
pub struct Receipt {
    /// The gapless number.
    #[serde(rename = "_id")]
    pub id: i64,
    /// Unique.
    pub code: String,
}

/// The receipt of call `i` of the inserts labelled `prefix`: one call in eight repeats the code
/// of the call before, so that the unique index on `code` refuses it. Returns it with whether
/// it repeats.
pub fn receipt(prefix: &str, i: u64) -> (Receipt, bool) {
    let repeats = i % 8 == 7;
    let n = if repeats { i - 1 } else { i };
    let receipt = Receipt {
        id: 0,
        code: format!("{prefix}-{n}"),
    };
    (receipt, repeats)
}

/// Counter `claimed` (batch 25), the number in a field that is not `_id`, its uniqueness held
/// by a proxy collection (`claimed.claims.number`).
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "claimed", batch = 25, unique = "proxy")]
pub struct Claimed {
    /// An ObjectId, given at the first insert attempt.
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub oid: Option<mongodb::bson::oid::ObjectId>,
    /// The number.
    #[seq(id)]
    pub number: Option<i64>,
    /// Which call inserted it.
    pub call: String,
}

/// Counter `event` (one round trip per ID), the number in `_id`, labelled with the call that
/// inserted it.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "event")]
pub struct Event {
    /// The number.
    #[serde(rename = "_id")]
    pub id: i64,
    /// Which call inserted it.
    pub call: String,
}

/// Counter `reading` (batch 25), the number in a field without a unique index, so that a
/// number issued twice would be stored twice.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "reading", batch = 25)]
pub struct Reading {
    /// The number.
    #[seq(id)]
    pub number: i64,
    /// Which call inserted it.
    pub call: String,
}

/// An hourly counter with a batch: IDs `YYMMDDHH-000042`, each naming the call that stored it.
#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "hourly", prefix = "YYMMDDHH-", batch = 25)]
pub struct Hourly {
    #[seq(id)]
    pub id: String,
    pub call: String,
}

/// The hour (`YYMMDDHH`) of an instant, as an hourly ID begins.
pub fn hour(at: mongo_sequence::jiff::Timestamp) -> String {
    at.strftime("%y%m%d%H").to_string()
}

/// An hourly ID as one number for the checker: its hour and its number.
pub fn hourly_key(id: &str) -> i64 {
    let (hour, n) = id.split_once('-').expect("an ID with an hour");
    hour.parse::<i64>().unwrap() * 1_000_000 + n.parse::<i64>().unwrap()
}
