//! IDs of one's own types: a newtype over each kind of ID stands for it, and the rules about
//! the ID's type follow the type it wraps.

use mongo_sequence::{IdValue, SequentialId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, IdValue)]
#[serde(transparent)]
pub struct OrderNo(i64);

#[derive(Serialize, Deserialize, SequentialId)]
#[seq(name = "orders", batch = 25)]
pub struct Order {
    #[serde(rename = "_id")]
    pub id: OrderNo,
    pub total: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, IdValue)]
#[serde(transparent)]
pub struct InvoiceNo(String);

#[derive(Serialize, Deserialize, SequentialId)]
#[seq(prefix = "INV-YYMMDD-", width = 4)]
pub struct Invoice {
    #[serde(rename = "_id")]
    pub id: Option<InvoiceNo>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, IdValue)]
#[serde(transparent)]
pub struct EventId(mongodb::bson::Uuid);

#[derive(Serialize, Deserialize, SequentialId)]
#[seq(strategy = "uuid_v7")]
pub struct Event {
    #[serde(rename = "_id")]
    pub id: Option<EventId>,
}

fn main() {
    use mongo_sequence::id::Rendering;
    assert_eq!(<OrderNo as IdValue>::from_counter(7).unwrap(), OrderNo(7));
    let rendered = <InvoiceNo as IdValue>::render(3, &Rendering::new("INV-251124-", Some(4)));
    assert_eq!(rendered.unwrap(), InvoiceNo("INV-251124-0003".into()));
    const { assert!(<InvoiceNo as IdValue>::STORED_AS_TEXT) };
    const { assert!(!<OrderNo as IdValue>::STORED_AS_TEXT) };
}
