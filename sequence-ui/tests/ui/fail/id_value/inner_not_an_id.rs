use mongo_sequence::IdValue;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, IdValue)]
struct Price(f64);

fn main() {}
