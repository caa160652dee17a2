use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(format = "ACC-{check}", check_digit = "luhn")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
