#![deny(warnings)]

use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// A field literally named `_id`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[allow(non_snake_case)]
pub struct Plain {
    pub _id: i32,
}

/// `Option` fields are `None` until inserted.
#[derive(Debug, Default, Serialize, Deserialize, SequentialId)]
pub struct Optional {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    pub note: String,
}

/// A `String` ID, marked explicitly, serialized as `_id` through the long `rename` form.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
pub struct Text {
    #[seq(id)]
    #[serde(rename(serialize = "_id", deserialize = "_id"))]
    pub code: String,
}

fn main() {
    let mut o = Optional::default();
    <Optional as SequentialId>::set_id(&mut o, 7);
    assert_eq!(o.id, Some(7));
    let mut t = Text {
        code: String::new(),
    };
    t.set_id("42".to_owned());
    assert_eq!(t.code, "42");
    let mut p = Plain { _id: 0 };
    p.set_id(3);
    assert_eq!(p._id, 3);
}
