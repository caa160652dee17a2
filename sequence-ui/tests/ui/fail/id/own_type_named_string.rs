use mongo_sequence::{IdValue, SequentialId};
use serde::{Deserialize, Serialize};

/// A type of one's own that happens to be named `String`: a number, not text.
#[derive(Clone, Debug, Serialize, Deserialize, IdValue)]
struct String(i64);

#[derive(Serialize, SequentialId)]
#[seq(prefix = "INV-YYMMDD-")]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
