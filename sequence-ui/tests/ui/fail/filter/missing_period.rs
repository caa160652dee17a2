use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "YYMMDD", filter(m = "Ticket"))]
struct Daily {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
