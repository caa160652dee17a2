use mongo_sequence::IdValue;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, IdValue)]
struct OrderNo(i64, i64);

fn main() {}
