use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(unique = "proxy", gapless)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
