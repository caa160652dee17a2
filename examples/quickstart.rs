//! Inserts a few users with sequential IDs and prints them as stored in MongoDB.
//!
//! Uses `MONGODB_URI` if set (database `mongo_sequence_quickstart`, so numbering continues from
//! run to run); otherwise starts a throw-away local `mongod` (fetching it on first use), so every
//! run starts again at 1.

use futures_util::TryStreamExt;
use mongo_sequence::SequentialId;
use mongodb::bson::doc;
use sequence_testkit::TestServer;
use serde::{Deserialize, Serialize};

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

    for name in ["Sarah C.", "Bob D.", "Alice E."] {
        let mut user = User {
            id: 0,
            name: name.to_owned(),
        };
        let id = user.insert_with_id(&users).await?;
        println!("inserted {name:?} with _id {id}");
    }

    println!("stored in {}:", users.namespace());
    let mut cursor = users.find(doc! {}).sort(doc! { "_id": 1 }).await?;
    while let Some(user) = cursor.try_next().await? {
        println!("  {{ _id: {}, name: {:?} }}", user.id, user.name);
    }
    Ok(())
}
