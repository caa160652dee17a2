use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(layout = "mongoose_auto_increment", scope = ["tenant", "year"])]
struct Ticket {
    #[seq(id)]
    number: i64,
    tenant: String,
    year: i32,
}

fn main() {}
