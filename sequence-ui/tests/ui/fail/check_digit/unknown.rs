use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(check_digit = "lunh")]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
