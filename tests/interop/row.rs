//! The rows of the suite: which foreign writer shares which counter, and how a stored ID and
//! the counter documents read.

use mongodb::bson::{doc, Bson, Document};

/// A foreign convention the suite runs beside this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// `@typegoose/auto-increment` 5 on mongoose 9.
    Typegoose,
    /// `mongoose-plugin-autoinc` 1.1.9 (the fork of `mongoose-auto-increment`) on mongoose 5.13.
    AutoIncrement,
    /// Seed 001's `nextId` on mongoose 5.13: daily counters found by `prefix`.
    Seed001,
    /// MongoEngine's `SequenceField` on pymongo.
    MongoEngine,
}

impl Row {
    /// Every row, in the order the suite runs them.
    pub const ALL: [Row; 4] = [
        Row::Typegoose,
        Row::AutoIncrement,
        Row::Seed001,
        Row::MongoEngine,
    ];

    /// The row's name on the command line and in `INTEROP_ROWS`.
    pub fn name(self) -> &'static str {
        match self {
            Row::Typegoose => "typegoose",
            Row::AutoIncrement => "autoinc",
            Row::Seed001 => "seed001",
            Row::MongoEngine => "mongoengine",
        }
    }

    /// The row named `name`.
    pub fn named(name: &str) -> Option<Row> {
        Row::ALL.into_iter().find(|row| row.name() == name)
    }

    /// The foreign writer: its runtime and its script, relative to the installed suite.
    pub fn writer(self) -> (Runtime, &'static str) {
        match self {
            Row::Typegoose => (Runtime::Node, "node/mongoose9/typegoose.js"),
            Row::AutoIncrement => (Runtime::Node, "node/mongoose5/autoinc.js"),
            Row::Seed001 => (Runtime::Node, "node/mongoose5/seed001.js"),
            Row::MongoEngine => (Runtime::Python, "python/mongoengine_writer.py"),
        }
    }

    /// The counters collection, and the filter that finds every counter document of the
    /// period `period` (as [`number`] reads it from an ID) — more than one is a failure.
    pub fn counter(self, period: &str) -> (&'static str, Document, &'static str) {
        match self {
            Row::Typegoose => (
                "identitycounters",
                doc! { "field": "_id", "modelName": "Ticket" },
                "count",
            ),
            // The original plugin's document has no `groupingField`: not in the filter, so a
            // second document of either shape is seen.
            Row::AutoIncrement => (
                "identitycounters",
                doc! { "model": "Ticket", "field": "_id" },
                "count",
            ),
            Row::Seed001 => (
                "ids",
                doc! { "prefix": period.parse::<i32>().expect("a day as a number") },
                "count",
            ),
            Row::MongoEngine => ("mongoengine.counters", doc! { "_id": "ticket.id" }, "next"),
        }
    }
}

/// What runs a foreign writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// Node.js with npm.
    Node,
    /// Python 3 with pip.
    Python,
}

/// A stored ID as a period and a number: an integer ID is its own number (no period); seed
/// 001's text ID is its day (`YYMMDD`) and the 6-digit number after it.
pub fn number(id: &Bson) -> (String, i64) {
    match id {
        Bson::Int32(n) => (String::new(), i64::from(*n)),
        Bson::Int64(n) => (String::new(), *n),
        Bson::Double(n) if n.fract() == 0.0 => (String::new(), *n as i64),
        Bson::String(s) if s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit()) => {
            (s[..6].to_owned(), s[6..].parse().expect("digits"))
        }
        other => panic!("an ID no writer of the suite stores: {other}"),
    }
}

/// A counter's value as a number.
pub fn counter_value(value: Option<&Bson>) -> i64 {
    match value {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Double(n)) => *n as i64,
        other => panic!("a counter without a number: {other:?}"),
    }
}
