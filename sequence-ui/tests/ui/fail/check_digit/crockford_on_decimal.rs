use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(check_digit = "crockford")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
