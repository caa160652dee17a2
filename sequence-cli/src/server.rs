//! Reaching the deployment: the client of `--uri`, and the collection a `DB.COLLECTION`
//! argument names.

use mongodb::bson::Document;
use mongodb::{Client, Collection, Database};

use crate::failure::Failure;

/// The client of the deployment `uri` names (`--uri` or `MONGODB_URI`).
pub(crate) async fn connect(uri: Option<&str>) -> Result<Client, Failure> {
    let Some(uri) = uri else {
        return Err(
            Failure::usage("no deployment: give `--uri mongodb://…` or set MONGODB_URI")
                .hint("mongo-sequence --uri mongodb://localhost:27017 list DB"),
        );
    };
    Client::with_uri_str(uri)
        .await
        .map_err(|e| Failure::usage(format!("`--uri` is not a usable connection string: {e}")))
}

/// About how many documents `coll` holds (the server's estimate, from its metadata), for a
/// progress display; `None` where it cannot say.
pub(crate) async fn estimated_count(coll: &Collection<Document>) -> Option<u64> {
    coll.estimated_document_count().await.ok()
}

/// The database and the collection `target`, given as `DB.COLLECTION`, names.
pub(crate) fn collection(
    client: &Client,
    target: &str,
) -> Result<(Database, Collection<Document>), Failure> {
    let Some((db, coll)) = target.split_once('.') else {
        return Err(Failure::usage(format!("`{target}` is not `DB.COLLECTION`"))
            .hint("name the collection with its database: `shop.orders`"));
    };
    let db = client.database(db);
    let coll = db.collection::<Document>(coll);
    Ok((db, coll))
}
