use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "random", digits = 12)]
struct Voucher {
    #[seq(id)]
    code: i64,
    owner: String,
}

fn main() {}
