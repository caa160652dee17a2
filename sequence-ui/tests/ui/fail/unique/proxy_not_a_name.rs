use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(unique = "proxy", proxy = "$ids")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn main() {}
