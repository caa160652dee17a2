#![deny(warnings, missing_docs, unused, clippy::all)]
//! Generated code in a module, beside other derives and attributes, with only
//! `mongo-sequence` (and serde) in scope, and usable from generic code; and a model that a
//! `macro_rules!` declares, its keys passed on as fragments.

mod reexport {
    pub use mongo_sequence as seq_facade;
}

mod models {
    use serde::{Deserialize, Serialize};

    /// A model with documentation and other attributes.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, mongo_sequence::SequentialId)]
    #[serde(rename_all = "camelCase")]
    #[seq(name = "orders", crate = "crate::reexport::seq_facade")]
    pub struct Order {
        /// The sequential ID.
        #[serde(rename = "_id")]
        pub id: i64,
        /// Something else.
        pub customer_name: String,
    }
}

/// Declares a model whose name and batch are a macro's fragments (`$name:literal`, `$batch:expr`).
macro_rules! model {
    ($ty:ident, $name:literal, $batch:expr) => {
        /// A model a macro declares.
        #[derive(Debug, serde::Serialize, serde::Deserialize, mongo_sequence::SequentialId)]
        #[seq(name = $name, batch = $batch)]
        pub struct $ty {
            /// The sequential ID.
            #[serde(rename = "_id")]
            pub id: i64,
        }
    };
}

model!(Ticket, "ticket", 25);

/// Generic code over any model.
pub fn counter_name<T: mongo_sequence::SequentialId>() -> &'static str {
    T::SEQUENCE.name
}

/// Callers of the generated methods need no trait import.
pub async fn insert(
    order: &mut models::Order,
    coll: &mongodb::Collection<models::Order>,
) -> mongo_sequence::Result<i64> {
    order.insert_with_id(coll).await
}

fn main() {
    assert_eq!(counter_name::<models::Order>(), "orders");
    assert_eq!(counter_name::<Ticket>(), "ticket");
    let _ = insert;
}
