use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(scope = "tenant", batch = 10..=1000)]
struct Invoice {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn main() {}
