use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(strategy = "uuid", check_digit = "luhn")]
struct Account {
    #[serde(rename = "_id")]
    id: mongo_sequence::mongodb::bson::Uuid,
}

fn main() {}
