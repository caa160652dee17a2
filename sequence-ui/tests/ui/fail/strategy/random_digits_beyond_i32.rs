use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "random", digits = 12)]
struct Voucher {
    #[serde(rename = "_id")]
    code: i32,
}

fn main() {}
