//! Inserts a few users with sequential IDs and prints them as stored in MongoDB.
//!
//! Uses `MONGODB_URI` if set (database `mongo_sequence_quickstart`, so numbering continues from
//! run to run); otherwise starts a throw-away local `mongod` (fetching it on first use), so every
//! run starts again at 1. It checks what it prints and exits with an error if a claim does not
//! hold.

use futures_util::TryStreamExt;
use mongo_sequence::SequentialId;
use mongodb::bson::doc;
use sequence_testkit::TestServer;
use serde::{Deserialize, Serialize};

mod support;
use support::check;

#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "userid")]
struct User {
    #[serde(rename = "_id")]
    #[seq(id)]
    id: i64,
    name: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::shared()?;
    let client = server.client().await;
    let users = client
        .database("mongo_sequence_quickstart")
        .collection::<User>("users");

    let names = ["Sarah C.", "Bob D.", "Alice E."];
    let mut ids = Vec::new();
    for name in names {
        let mut user = User {
            id: 0,
            name: name.to_owned(),
        };
        let id = user.insert_with_id(&users).await?;
        println!("inserted {name:?} with _id {id}");
        ids.push(id);
    }

    println!("stored in {}:", users.namespace());
    let mut cursor = users
        .find(doc! { "_id": { "$in": &ids } })
        .sort(doc! { "_id": 1 })
        .await?;
    let mut stored = Vec::new();
    while let Some(user) = cursor.try_next().await? {
        println!("  {{ _id: {}, name: {:?} }}", user.id, user.name);
        stored.push((user.id, user.name));
    }
    check(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "the three users got consecutive IDs",
    )?;
    let expected: Vec<_> = ids.iter().copied().zip(names.map(String::from)).collect();
    check(
        stored == expected,
        "each user is stored once, under the ID it was given",
    )?;
    Ok(())
}
