use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(scope = "tenant")]
struct Invoice {
    #[seq(id)]
    number: i64,
    tenat: String,
}

fn main() {}
