//! What a sequence records of itself beside its counters (`<counters>.sequences`), for the
//! tools that read counters without the model's code, against a real server.

use crate::common;

use mongo_sequence::store::SequenceRecord;
use mongo_sequence::{SequentialId, Strategy};
use mongodb::bson::{doc, Document};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "receipt", gapless, prefix = "R-", width = 4)]
struct Receipt {
    #[serde(rename = "_id")]
    id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", scope = "tenant")]
struct Ticket {
    #[seq(id)]
    number: Option<i64>,
    tenant: String,
}

/// A gapless model's first insert records it: gapless, its limits as `width` leaves them, the
/// shape of its IDs; a scoped one its scope fields. Each process writes the record once.
#[tokio::test]
async fn the_first_write_records_the_sequences_settings() {
    let db = common::database("records").await;
    let receipts = db.collection::<Receipt>("receipts");
    for _ in 0..3 {
        Receipt { id: None }
            .insert_with_id(&receipts)
            .await
            .unwrap();
    }
    let record = SequenceRecord::read(&db, "counters", "receipt")
        .await
        .unwrap()
        .expect("the record of `receipt`");
    assert!(record.gapless);
    assert_eq!(record.strategy, Strategy::Counter);
    assert_eq!((record.start, record.max), (1, 9999));
    assert_eq!(
        (record.prefix.as_deref(), record.width),
        (Some("R-"), Some(4))
    );
    assert!(record.seen.is_some());
    assert_eq!(record.version, env!("CARGO_PKG_VERSION"));

    let tickets = db.collection::<Ticket>("tickets");
    let mut ticket = Ticket {
        number: None,
        tenant: "acme".into(),
    };
    ticket.insert_with_id(&tickets).await.unwrap();
    let records = SequenceRecord::read_all(&db, "counters").await.unwrap();
    let names: Vec<&str> = records.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["receipt", "ticket"]);
    assert_eq!(records[1].scope, ["tenant"]);
    assert!(!records[1].gapless);

    // Written once per process: deleting it and inserting again does not write it again.
    db.collection::<Document>("counters.sequences")
        .delete_many(doc! {})
        .await
        .unwrap();
    Receipt { id: None }
        .insert_with_id(&receipts)
        .await
        .unwrap();
    assert_eq!(
        SequenceRecord::read(&db, "counters", "receipt")
            .await
            .unwrap(),
        None
    );
}
