//! What gapless numbering refuses, before anything is written: numbers outside an insert
//! (`next_id`, the sequence's own calls), a standalone server (no transactions), and a write
//! concern of the caller's.

use crate::common;

use mongo_sequence::Error;

use super::{invoice, Invoice};

#[tokio::test]
async fn next_id_is_refused_for_gapless_sequences() {
    let db = common::database("gapless_next_id").await;
    let coll = db.collection::<Invoice>("invoices");
    match Invoice::next_id(&coll).await {
        Err(e @ Error::Unsupported { .. }) => {
            let message = e.to_string();
            assert!(message.contains("`gapless` sequences"), "{message}");
            assert!(message.contains("insert_with_id"), "{message}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    // Nor does the model's sequence hand out numbers outside a session.
    let seq = Invoice::sequence(&coll);
    assert!(matches!(
        seq.next().await,
        Err(Error::Unsupported {
            strategy: "gapless",
            ..
        })
    ));
    assert!(matches!(
        seq.reserve(2).await,
        Err(Error::Unsupported {
            strategy: "gapless",
            ..
        })
    ));
    assert_eq!(common::counter(&db, "invoice").await, None);
}

/// On a standalone server the first call fails with a typed error and nothing is written.
#[tokio::test]
async fn a_standalone_server_gets_a_typed_error() {
    let server = common::standalone_server().await;
    let client = server.client().await;
    let db = client.database("gapless_standalone");
    let coll = db.collection::<Invoice>("invoices");
    match invoice("a").insert_with_id(&coll).await {
        Err(e @ Error::TransactionsUnsupported { .. }) => {
            let message = e.to_string();
            assert!(
                message.starts_with("gapless numbering needs transactions")
                    && message.contains("replica set"),
                "{message}"
            );
        }
        other => panic!("expected TransactionsUnsupported, got {other:?}"),
    }
    let names = db.list_collection_names().await.unwrap();
    assert!(names.is_empty(), "nothing was written: {names:?}");
    drop(client);
    tokio::task::spawn_blocking(move || server.stop())
        .await
        .unwrap();
}

/// A gapless insert commits its own transaction with `majority`: a write concern of its own is
/// refused before anything is written.
#[tokio::test]
async fn gapless_inserts_refuse_a_write_concern_of_their_own() {
    let db = common::database("gapless_write_concern").await;
    let coll = db.collection::<Invoice>("invoices");
    let mut doc = invoice("a");
    let e = doc
        .insert_with_id(&coll)
        .write_concern(mongodb::options::WriteConcern::nodes(1))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::InvalidArgument {
                argument: "write_concern",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("remove `write_concern`"), "{e}");
    assert_eq!(common::all(&coll).await.len(), 0);
    assert_eq!(common::counter(&db, "invoice").await, None);
}
