#![deny(warnings)]

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// `INV-251122-0007`: a daily counter in Berlin time, rendered as text.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "invoice",
    prefix = "INV-YYMMDD-",
    width = 4,
    tz = "Europe/Berlin",
    batch = 20
)]
pub struct Invoice {
    #[serde(rename = "_id")]
    pub id: String,
}

/// `251122000007`: the same digits as a number.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(prefix = "YYMMDD")]
pub struct Ticket {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// `2025112214` then 3 digits: an hourly counter, quoted literal text in a String ID.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(prefix = "'H'YYYYMMDDHH'-'", width = 3, tz = "Asia/Tokyo")]
pub struct Slot {
    #[serde(rename = "_id")]
    pub id: Option<String>,
}

fn main() {
    let invoice = <Invoice as SequentialId>::SEQUENCE;
    assert_eq!(invoice.prefix, Some("INV-YYMMDD-"));
    assert_eq!(invoice.tz, Some("Europe/Berlin"));
    assert_eq!(invoice.width, Some(4));
    assert_eq!(<Ticket as SequentialId>::SEQUENCE.prefix, Some("YYMMDD"));
    assert_eq!(<Slot as SequentialId>::SEQUENCE.width, Some(3));
}
