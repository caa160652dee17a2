#![deny(warnings)]

//! Counters shared with the conventions of other libraries and of one's own.

use mongo_sequence::options::{FilterField, FilterValue, Layout};
use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// @typegoose/auto-increment's `{ field: "_id", modelName: "Ticket", count }`; typegoose
/// numbers from 0.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "Ticket", layout = "typegoose", start = 0)]
pub struct Ticket {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// mongoose-plugin-autoinc's grouped counters: `{ model: "Order", field: "number",
/// groupingField: <tenant>, count }`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "Order", layout = "mongoose_auto_increment", scope = "tenant")]
pub struct Order {
    #[seq(id)]
    pub number: i64,
    pub tenant: String,
}

/// MongoEngine's `SequenceField`: `{ _id: "ticket.id", next }` in `mongoengine.counters`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket.id", counters = "mongoengine.counters", field = "next")]
pub struct PyTicket {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// Seed 001's daily IDs: `{ prefix: 251125, count }` in `ids`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(counters = "ids", field = "count", prefix = "YYMMDD", filter(prefix = period as number))]
pub struct Daily {
    #[serde(rename = "_id")]
    pub id: String,
}

/// mongoose-auto-increment-reworked's `{ m: "Ticket", f: "_id", c }` in `idcounters`, the
/// filter written as the command line takes it.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    counters = "idcounters",
    field = "c",
    filter = r#"f = id_field, m = "Ticket""#
)]
pub struct Reworked {
    #[serde(rename = "_id")]
    pub id: i64,
}

fn main() {
    let ticket = <Ticket as SequentialId>::SEQUENCE;
    assert_eq!(ticket.layout, Layout::Typegoose);
    assert_eq!(
        (ticket.counters, ticket.field),
        ("identitycounters", "count")
    );
    let order = <Order as SequentialId>::SEQUENCE;
    assert_eq!(
        (order.counters, order.id_field),
        ("identitycounters", "number")
    );
    assert_eq!(<PyTicket as SequentialId>::SEQUENCE.name, "ticket.id");
    assert_eq!(
        <Daily as SequentialId>::SEQUENCE.filter,
        &[FilterField {
            field: "prefix",
            value: FilterValue::PeriodNumber
        }]
    );
    let reworked = <Reworked as SequentialId>::SEQUENCE;
    assert_eq!(reworked.filter.len(), 2);
    assert_eq!(reworked.filter[0].value, FilterValue::IdField);
    assert_eq!(reworked.filter[1].value, FilterValue::Text("Ticket"));
}
