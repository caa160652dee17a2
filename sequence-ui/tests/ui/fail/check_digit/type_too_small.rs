use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(digits = 9, check_digit = "luhn")]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
