use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "ranges", scope = "tenant")]
struct Invoice {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn main() {}
