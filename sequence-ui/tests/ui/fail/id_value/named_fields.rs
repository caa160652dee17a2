use mongo_sequence::IdValue;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, IdValue)]
struct OrderNo {
    value: i64,
}

fn main() {}
