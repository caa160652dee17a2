use mongo_sequence::SequentialId;
use serde::Serialize;

#[derive(Serialize, SequentialId)]
#[seq(alphabet = "abcdefgh")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
