use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "snowflake")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
