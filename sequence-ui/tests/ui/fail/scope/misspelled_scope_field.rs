use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(scope = "tenat")]
struct Order {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn main() {}
