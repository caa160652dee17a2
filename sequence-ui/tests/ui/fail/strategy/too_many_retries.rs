use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "random", retries = 10_001)]
struct Voucher {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
