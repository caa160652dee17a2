//! `unique = "proxy"`: the uniqueness of IDs held by a proxy collection of claims. A replica
//! set stands in for a sharded cluster: the ID field of these models has no unique index,
//! which is exactly the restriction of a collection sharded on another field.

use mongo_sequence::{Error, SequentialId};
use mongodb::bson::{doc, oid::ObjectId, Document};
use mongodb::Collection;
use serde::{Deserialize, Serialize};

use crate::common;

/// Random two-digit numbers (90 of them) in a field that is not `_id`.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    name = "lot",
    strategy = "random",
    digits = 2,
    retries = 200,
    unique = "proxy"
)]
struct Lot {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
}

/// Counted numbers, cached 25 at a time, in a field that is not `_id`.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "ticket", batch = 25, unique = "proxy")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
}

/// The `number` of every document of `coll`.
async fn numbers<T: Send + Sync>(coll: &Collection<T>) -> Vec<i64> {
    common::all(&coll.clone_with_type::<Document>())
        .await
        .iter()
        .map(|d| d.get_i64("number").expect("a number"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_ids_are_stored_once_each_with_the_proxy_and_not_without_it() {
    let db = common::database("proxy_random").await;
    let coll = db.collection::<Lot>("lots");
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut stored = Vec::new();
                loop {
                    let mut lot = Lot {
                        oid: None,
                        number: None,
                    };
                    match lot.insert_with_id(&coll).await {
                        Ok(number) => stored.push(number),
                        Err(Error::RandomIdsExhausted { attempts, .. }) => {
                            assert_eq!(attempts, 201);
                            return stored;
                        }
                        Err(e) => panic!("expected RandomIdsExhausted, got {e:?}"),
                    }
                }
            })
        })
        .collect();
    let issued = common::distinct_ids(tasks).await;
    assert_eq!(issued, (10..=99).collect(), "every two-digit number, once");
    let mut stored = numbers(&coll).await;
    stored.sort_unstable();
    assert_eq!(stored, (10..=99).collect::<Vec<_>>(), "stored once each");
    common::claims_match(
        "random",
        &coll.clone_with_type(),
        &db.collection("lots.claims.number"),
    )
    .await;

    // The same draws without the proxy: nothing stops a second document with a number.
    let seq = mongo_sequence::Sequence::new(
        &db,
        common::opts("lot_unguarded")
            .strategy(mongo_sequence::Strategy::Random)
            .digits(2)
            .build(),
    )
    .unwrap();
    let unguarded = db.collection::<Document>("lots_unguarded");
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let (seq, unguarded) = (seq.clone(), unguarded.clone());
            tokio::spawn(async move {
                for _ in (task..90).step_by(16) {
                    let number = seq.next().await.unwrap();
                    unguarded
                        .insert_one(doc! { "number": number })
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let stored = numbers(&unguarded).await;
    let distinct: std::collections::HashSet<_> = stored.iter().collect();
    assert_eq!(stored.len(), 90);
    assert!(
        distinct.len() < stored.len(),
        "90 draws of 90 numbers repeat one (all distinct has a probability of 1e-38)"
    );
}

/// Stores documents numbered `numbers` in `docs`, each claimed in `claims`, as an import with
/// its claims (or documents inserted before) leaves them.
async fn import_claimed(
    docs: &Collection<Document>,
    claims: &Collection<Document>,
    numbers: std::ops::RangeInclusive<i64>,
) {
    let imported: Vec<Document> = numbers
        .map(|n| doc! { "_id": ObjectId::new(), "number": n })
        .collect();
    docs.insert_many(&imported).await.unwrap();
    let claimed = imported
        .iter()
        .map(|d| doc! { "_id": d.get_i64("number").unwrap(), "doc": d.get("_id").unwrap() });
    claims.insert_many(claimed).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_skip_ahead_past_claimed_ids() {
    let db = common::database("proxy_counter").await;
    let coll = db.collection::<Ticket>("tickets");
    let claims = db.collection::<Document>("tickets.claims.number");
    // Imported documents, claimed: 1 to 500.
    import_claimed(&coll.clone_with_type(), &claims, 1..=500).await;

    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..25 {
                    let mut ticket = Ticket {
                        oid: None,
                        number: None,
                    };
                    ids.push(ticket.insert_with_id(&coll).await.unwrap());
                }
                ids
            })
        })
        .collect();
    let issued = common::distinct_ids(tasks).await;
    assert_eq!(issued.len(), 200);
    assert!(issued.iter().all(|&n| n > 500), "past the claimed IDs");
    let stored = numbers(&coll).await;
    let distinct: std::collections::HashSet<_> = stored.iter().collect();
    assert_eq!(
        (stored.len(), distinct.len()),
        (700, 700),
        "no number twice"
    );
    common::claims_match("counters", &coll.clone_with_type(), &claims).await;
}

/// Concurrent inserts of a batched model commit together: one `insert_many` of claims and one
/// of documents per round. Claims already stored in the middle of the numbers the rounds take
/// send only their own members to insert alone with new numbers: no number twice, every
/// document with its claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_commit_their_claims_together() {
    let name = sequence_testkit::unique_db_name("proxy_groups");
    let (client, commands) = common::monitored_client(&name).await;
    let db = client.database(&name);
    let coll = db.collection::<Ticket>("tickets");
    let claims = db.collection::<Document>("tickets.claims.number");
    let mut first = Ticket {
        oid: None,
        number: None,
    };
    assert_eq!(first.insert_with_id(&coll).await.unwrap(), 1);
    // Numbers 40 to 60 are claimed already (an import, say), ahead of the counter.
    import_claimed(&coll.clone_with_type(), &claims, 40..=60).await;

    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..10 {
                    let mut ticket = Ticket {
                        oid: None,
                        number: None,
                    };
                    let id = ticket.insert_with_id(&coll).await.unwrap();
                    assert_eq!(ticket.number, Some(id));
                    ids.push(id);
                }
                ids
            })
        })
        .collect();
    let issued = common::distinct_ids(tasks).await;
    assert_eq!(issued.len(), 320);
    assert!(
        issued.iter().all(|n| !(40..=60).contains(n)),
        "no claimed number given again"
    );
    let stored = numbers(&coll).await;
    let distinct: std::collections::HashSet<_> = stored.iter().collect();
    assert_eq!(
        (stored.len(), distinct.len()),
        (342, 342),
        "no number twice"
    );
    common::claims_match("groups", &coll.clone_with_type(), &claims).await;
    let grouped = commands
        .sent_on("insert", "tickets.claims.number")
        .iter()
        .filter(|c| c.get_array("documents").map_or(0, Vec::len) > 1)
        .count();
    assert!(grouped > 0, "some claims were committed together");
}

#[tokio::test]
async fn the_proxy_is_claimed_in_the_callers_transaction() {
    let db = common::database("proxy_session").await;
    let coll = db.collection::<Ticket>("tickets");
    let claims = db.collection::<Document>("tickets.claims.number");
    // The collections exist before the transaction (older servers cannot create them in one).
    claims.insert_one(doc! { "_id": "setup" }).await.unwrap();
    claims.delete_one(doc! { "_id": "setup" }).await.unwrap();
    coll.clone_with_type::<Document>()
        .insert_one(doc! { "setup": true })
        .await
        .unwrap();
    coll.clone_with_type::<Document>()
        .delete_many(doc! {})
        .await
        .unwrap();
    let mut session = db.client().start_session().await.unwrap();

    session.start_transaction().await.unwrap();
    let mut ticket = Ticket {
        oid: None,
        number: None,
    };
    let aborted = ticket
        .insert_with_id(&coll)
        .session(&mut session)
        .await
        .unwrap();
    session.abort_transaction().await.unwrap();
    assert_eq!(
        claims.count_documents(doc! {}).await.unwrap(),
        0,
        "the abort took the claim back"
    );

    session.start_transaction().await.unwrap();
    let mut ticket = Ticket {
        oid: None,
        number: None,
    };
    let kept = ticket
        .insert_with_id(&coll)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    // With the `counter` strategy the number is taken in the session too: the abort gave it
    // back with the claim.
    assert_eq!(kept, aborted);
    common::claims_match("session", &coll.clone_with_type(), &claims).await;
}

/// A ticket found by its code, for upserts.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "desk", unique = "proxy")]
struct Desk {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
    code: String,
    hits: i64,
}

fn desk(code: &str, hits: i64) -> Desk {
    Desk {
        oid: None,
        number: None,
        code: code.into(),
        hits,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upserts_claim_only_what_they_insert() {
    let db = common::database("proxy_upsert").await;
    let coll = db.collection::<Desk>("desks");
    let claims = db.collection::<Document>("desks.claims.number");
    // Upserts of one key stay one document only with a unique index on the key.
    coll.create_index(
        mongodb::IndexModel::builder()
            .keys(doc! { "code": 1 })
            .options(
                mongodb::options::IndexOptions::builder()
                    .unique(true)
                    .build(),
            )
            .build(),
    )
    .await
    .unwrap();
    let first = desk("a", 1)
        .upsert_with_id(&coll, doc! { "code": "a" })
        .await
        .unwrap();
    let again = desk("a", 2)
        .upsert_with_id(&coll, doc! { "code": "a" })
        .await
        .unwrap();
    assert_eq!(first, again, "the update keeps the stored ID");
    // Concurrent upserts of one new key: one inserts, the others meet its document.
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let coll = coll.clone();
            tokio::spawn(async move {
                desk("b", i)
                    .upsert_with_id(&coll, doc! { "code": "b" })
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        ids.insert(t.await.unwrap());
    }
    assert_eq!(ids.len(), 1, "one ID for the key: {ids:?}");
    // In the caller's transaction.
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let c = desk("c", 1)
        .upsert_with_id(&coll, doc! { "code": "c" })
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    assert!(c != first && !ids.contains(&c));
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 3);
    common::claims_match("upserts", &coll.clone_with_type(), &claims).await;
}

#[tokio::test]
async fn sync_counters_reads_the_claims() {
    let db = common::database("proxy_sync").await;
    let coll = db.collection::<Ticket>("tickets");
    let claims = db.collection::<Document>("tickets.claims.number");
    claims
        .insert_many((1..=50_i64).map(|n| doc! { "_id": n, "doc": ObjectId::new() }))
        .await
        .unwrap();
    let report = Ticket::sync_counters(&coll).await.unwrap();
    assert_eq!(report.counters.len(), 1, "{report:?}");
    assert_eq!((report.counters[0].new, report.counters[0].ids), (50, 50));
    let mut ticket = Ticket {
        oid: None,
        number: None,
    };
    assert_eq!(ticket.insert_with_id(&coll).await.unwrap(), 51);
}

/// Gapless numbers in a field that is not `_id`, their uniqueness held by a proxy collection.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", gapless, unique = "proxy")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_numbers_are_claimed_in_their_transaction_and_skip_claimed_ones() {
    let db = common::database("proxy_gapless").await;
    let coll = db.collection::<Invoice>("invoices");
    let claims = db.collection::<Document>("invoices.claims.number");
    // Imported invoices 1 to 10, claimed.
    import_claimed(&coll.clone_with_type(), &claims, 1..=10).await;
    // Single inserts (grouped) and a bulk insert, at once.
    let singles: Vec<_> = (0..8)
        .map(|_| {
            let coll = coll.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..3 {
                    let mut invoice = Invoice {
                        oid: None,
                        number: None,
                    };
                    ids.push(invoice.insert_with_id(&coll).await.unwrap());
                }
                ids
            })
        })
        .collect();
    let mut bulk: Vec<Invoice> = (0..6)
        .map(|_| Invoice {
            oid: None,
            number: None,
        })
        .collect();
    let bulk_ids = Invoice::insert_many_with_ids(&mut bulk, &coll)
        .await
        .unwrap();
    let mut issued: Vec<i64> = common::distinct_ids(singles).await.into_iter().collect();
    issued.extend(bulk_ids);
    issued.sort_unstable();
    assert_eq!(
        issued,
        (11..=40).collect::<Vec<_>>(),
        "dense after the claimed ones"
    );
    common::claims_match("gapless", &coll.clone_with_type(), &claims).await;
}

/// Numbers per shop in a field that is not `_id`, their uniqueness held by a proxy collection.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "slip", scope = "shop", unique = "proxy", proxy = "slip_claims")]
struct Slip {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
    shop: String,
}

#[tokio::test]
async fn scoped_claims_hold_the_scope_and_are_indexed_for_the_highest() {
    let db = common::database("proxy_scoped").await;
    let coll = db.collection::<Slip>("slips");
    let claims = db.collection::<Document>("slip_claims");
    // Shop a's slips 1 to 5 were claimed before.
    claims
        .insert_many(
            (1..=5_i64).map(|n| doc! { "_id": { "shop": "a", "id": n }, "doc": ObjectId::new() }),
        )
        .await
        .unwrap();
    let slip = |shop: &str| Slip {
        oid: None,
        number: None,
        shop: shop.into(),
    };
    assert_eq!(
        slip("a").insert_with_id(&coll).await.unwrap(),
        6,
        "past shop a's claims"
    );
    assert_eq!(
        slip("b").insert_with_id(&coll).await.unwrap(),
        1,
        "shop b has none"
    );
    assert_eq!(slip("b").insert_with_id(&coll).await.unwrap(), 2);
    let stored = common::all(&coll.clone_with_type::<Document>()).await;
    for d in &stored {
        let key = doc! { "shop": d.get_str("shop").unwrap(), "id": d.get_i64("number").unwrap() };
        let claim = claims.find_one(doc! { "_id": key.clone() }).await.unwrap();
        assert_eq!(
            claim.and_then(|c| c.get("doc").cloned()).as_ref(),
            d.get("_id"),
            "the claim of {key}"
        );
    }
    let mut indexes = claims.list_index_names().await.unwrap();
    indexes.sort();
    assert_eq!(indexes, ["_id.shop_1__id.id_1", "_id_"]);
}

#[tokio::test]
async fn a_server_without_transactions_is_refused_naming_the_option() {
    let server = common::standalone_server().await;
    let client = server.client().await;
    let db = client.database("proxy_standalone");
    let coll = db.collection::<Ticket>("tickets");
    let mut ticket = Ticket {
        oid: None,
        number: None,
    };
    match ticket.insert_with_id(&coll).await {
        Err(e @ Error::TransactionsUnsupported { .. }) => {
            let message = e.to_string();
            assert!(
                message.starts_with("`unique = \"proxy\"` needs transactions"),
                "{message}"
            );
        }
        other => panic!("expected TransactionsUnsupported, got {other:?}"),
    }
    for name in ["tickets", "tickets.claims.number"] {
        let count = db
            .collection::<Document>(name)
            .count_documents(doc! {})
            .await
            .unwrap();
        assert_eq!(count, 0, "nothing written to {name}");
    }
}
