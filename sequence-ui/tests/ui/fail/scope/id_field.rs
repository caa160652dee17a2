use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(scope = ["tenant", "number"])]
struct Invoice {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn main() {}
