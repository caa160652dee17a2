use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(prefix = "YYMMDD", layout = "mongoose_sequence")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
