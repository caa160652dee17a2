use mongo_sequence::{IdValue, SequentialId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, IdValue)]
#[serde(transparent)]
struct AccountNo(i32);

#[derive(Serialize, SequentialId)]
#[seq(digits = 12)]
struct Account {
    #[serde(rename = "_id")]
    id: AccountNo,
}

fn main() {}
