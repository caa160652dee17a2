use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(layout = "typegoose", scope = "tenant")]
struct Ticket {
    #[seq(id)]
    number: i64,
    tenant: String,
}

fn main() {}
