use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "random", layout = "mongoose_sequence")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
