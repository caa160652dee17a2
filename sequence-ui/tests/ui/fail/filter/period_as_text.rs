use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "YYMMDD", filter(p = period as text))]
struct Daily {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
