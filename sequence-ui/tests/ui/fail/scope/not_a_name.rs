use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(scope = 5)]
struct Invoice {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn main() {}
