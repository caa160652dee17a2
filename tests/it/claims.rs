//! Checking and repairing the claims of a proxy collection (`mongo_sequence::claims`): a
//! planted orphan claim and unclaimed documents are found and fixed, a dry run writes nothing,
//! and two documents holding one ID make `repair` refuse and list them.

use mongo_sequence::claims::{Claims, OrphanClaim};
use mongo_sequence::{Error, SequentialId};
use mongodb::bson::{doc, oid::ObjectId, Bson, Document};
use mongodb::Collection;
use serde::{Deserialize, Serialize};

use crate::common;

/// Counted numbers in a field that is not `_id`, claimed in `stubs.claims.number`.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "stub", unique = "proxy")]
struct Stub {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
}

/// Numbers per tenant, the tenant stored as `t`, claimed in `bills.claims.number` under
/// `{ t, id }`.
#[derive(Clone, Debug, Serialize, Deserialize, SequentialId)]
#[seq(name = "bill", scope = "tenant", unique = "proxy")]
struct Bill {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    oid: Option<ObjectId>,
    #[seq(id)]
    number: Option<i64>,
    #[serde(rename = "t")]
    tenant: String,
}

/// Inserts `n` stubs through the model (each with its claim); returns their `_id`s.
async fn stubs(coll: &Collection<Stub>, n: usize) -> Vec<ObjectId> {
    let mut oids = Vec::new();
    for _ in 0..n {
        let mut stub = Stub {
            oid: Some(ObjectId::new()),
            number: None,
        };
        stub.insert_with_id(coll).await.unwrap();
        oids.push(stub.oid.unwrap());
    }
    oids
}

/// The claims, in `_id` order.
async fn claims_of(proxy: &Collection<Document>) -> Vec<Document> {
    common::all(proxy).await
}

#[tokio::test]
async fn orphan_claims_and_unclaimed_documents_are_found_and_repaired() {
    let db = common::database("claims_repair").await;
    let coll = db.collection::<Stub>("stubs");
    let docs = coll.clone_with_type::<Document>();
    let proxy = db.collection::<Document>("stubs.claims.number");
    let oids = stubs(&coll, 3).await;

    // Planted: a claim whose document was never written, a document written without the
    // proxy, a document without the ID field, and a document whose ID was changed by hand
    // (its old claim names it, its new ID is unclaimed).
    let gone = ObjectId::new();
    proxy
        .insert_one(doc! { "_id": 99_i64, "doc": gone })
        .await
        .unwrap();
    let imported = ObjectId::new();
    docs.insert_one(doc! { "_id": imported, "number": 50_i64 })
        .await
        .unwrap();
    docs.insert_one(doc! { "_id": ObjectId::new() })
        .await
        .unwrap();
    docs.update_one(
        doc! { "_id": oids[2] },
        doc! { "$set": { "number": 60_i64 } },
    )
    .await
    .unwrap();

    let claims = Claims::with_default_proxy(&docs, "number");
    assert_eq!(claims.proxy().name(), "stubs.claims.number");
    let report = claims.check().await.unwrap();
    assert!(!report.is_clean());
    assert_eq!(
        (
            report.unclaimed_count,
            report.orphan_count,
            report.shared_count,
            report.without_id
        ),
        (2, 2, 0, 1),
        "{report:?}"
    );
    let mut unclaimed: Vec<(Bson, Bson, Option<Bson>)> = report
        .unclaimed
        .iter()
        .map(|u| (u.doc.clone(), u.id.clone(), u.claimed_for.clone()))
        .collect();
    unclaimed.sort_by_key(|(_, id, _)| id.as_i64());
    assert_eq!(
        unclaimed,
        [
            (imported.into(), Bson::Int64(50), None),
            (oids[2].into(), Bson::Int64(60), None),
        ]
    );
    let mut orphans = report.orphans.clone();
    orphans.sort_by_key(|o| o.id.as_i64());
    let described: Vec<(Bson, Bson, Option<Bson>, bool)> = orphans
        .iter()
        .map(|o: &OrphanClaim| {
            (
                o.id.clone(),
                o.doc.clone(),
                o.holds.clone(),
                o.document_gone(),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            (Bson::Int64(3), oids[2].into(), Some(Bson::Int64(60)), false),
            (Bson::Int64(99), gone.into(), None, true),
        ]
    );
    // The report serializes (the command line prints it).
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["unclaimed_count"], 2);

    // A dry run says what it would do and writes nothing.
    let before = claims_of(&proxy).await;
    let dry = claims.repair().prune(true).dry_run(true).await.unwrap();
    assert_eq!(
        (dry.claimed, dry.pruned, dry.dry_run),
        (2, 2, true),
        "{dry:?}"
    );
    assert_eq!(claims_of(&proxy).await, before, "a dry run wrote claims");

    // Without `prune` the orphans stay; the unclaimed documents are claimed.
    let repaired = claims.repair().await.unwrap();
    assert_eq!(
        (repaired.claimed, repaired.pruned, repaired.raced),
        (2, 0, 0)
    );
    let after = claims.check().await.unwrap();
    assert_eq!(
        (after.unclaimed_count, after.orphan_count),
        (0, 2),
        "{after:?}"
    );

    let pruned = claims.repair().prune(true).await.unwrap();
    assert_eq!((pruned.claimed, pruned.pruned), (0, 2), "{pruned:?}");
    let clean = claims.check().await.unwrap();
    assert!(clean.is_clean(), "{clean:?}");
    let keys: Vec<(Bson, Bson)> = claims_of(&proxy)
        .await
        .into_iter()
        .map(|c| {
            (
                c.get("_id").cloned().unwrap(),
                c.get("doc").cloned().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            (Bson::Int64(1), oids[0].into()),
            (Bson::Int64(2), oids[1].into()),
            (Bson::Int64(50), imported.into()),
            (Bson::Int64(60), oids[2].into()),
        ]
    );
}

#[tokio::test]
async fn two_documents_holding_one_id_make_repair_refuse_and_list_them() {
    let db = common::database("claims_shared").await;
    let coll = db.collection::<Stub>("stubs");
    let docs = coll.clone_with_type::<Document>();
    let proxy = db.collection::<Document>("stubs.claims.number");
    let oids = stubs(&coll, 2).await;
    // A second document with the ID 2, written without the proxy, and an unclaimed one.
    let twin = ObjectId::new();
    docs.insert_one(doc! { "_id": twin, "number": 2_i64 })
        .await
        .unwrap();
    docs.insert_one(doc! { "_id": ObjectId::new(), "number": 7_i64 })
        .await
        .unwrap();

    let claims = Claims::new(&docs, "number", &proxy);
    let report = claims.check().await.unwrap();
    assert_eq!(report.shared_count, 1, "{report:?}");
    assert_eq!(report.shared[0].id, Bson::Int64(2));
    assert_eq!(report.shared[0].count, 2);
    let mut holders = report.shared[0].docs.clone();
    holders.sort_by_key(|b| b.as_object_id());
    let mut expected: Vec<Bson> = vec![oids[1].into(), twin.into()];
    expected.sort_by_key(|b| b.as_object_id());
    assert_eq!(holders, expected);
    // The twin is unclaimed: the claim of 2 names the other document.
    let twin_row = report
        .unclaimed
        .iter()
        .find(|u| u.doc == Bson::ObjectId(twin))
        .expect("the twin is listed as unclaimed");
    assert_eq!(twin_row.claimed_for, Some(oids[1].into()));

    let before = claims_of(&proxy).await;
    for prune in [false, true] {
        match claims.repair().prune(prune).await {
            Err(e @ Error::SharedIds { .. }) => {
                let message = e.to_string();
                let Error::SharedIds {
                    namespace,
                    ids,
                    count,
                    ..
                } = e
                else {
                    unreachable!()
                };
                assert_eq!(namespace, docs.namespace().to_string());
                assert_eq!((count, ids.len()), (1, 1));
                assert_eq!(ids[0].id, Bson::Int64(2));
                assert!(message.contains(&twin.to_string()), "{message}");
                assert!(message.contains(&oids[1].to_string()), "{message}");
            }
            other => panic!("expected SharedIds, got {other:?}"),
        }
    }
    assert_eq!(claims_of(&proxy).await, before, "a refused repair wrote");
}

#[tokio::test]
async fn scoped_claims_are_keyed_by_the_stored_scope_fields_and_the_id() {
    let db = common::database("claims_scoped").await;
    let coll = db.collection::<Bill>("bills");
    let docs = coll.clone_with_type::<Document>();
    for tenant in ["acme", "acme", "zeta"] {
        let mut bill = Bill {
            oid: None,
            number: None,
            tenant: tenant.into(),
        };
        bill.insert_with_id(&coll).await.unwrap();
    }
    // ID 1 again, in another tenant: not a shared ID, but unclaimed.
    let other = ObjectId::new();
    docs.insert_one(doc! { "_id": other, "number": 1_i64, "t": "other" })
        .await
        .unwrap();

    let claims = Claims::with_default_proxy(&docs, "number").scope(["t"]);
    let report = claims.check().await.unwrap();
    assert_eq!(
        (
            report.unclaimed_count,
            report.orphan_count,
            report.shared_count
        ),
        (1, 0, 0),
        "{report:?}"
    );
    let key = Bson::Document(doc! { "t": "other", "id": 1_i64 });
    assert_eq!(report.unclaimed[0].id, key);
    // Unscoped, the same documents hold 1 twice.
    let unscoped = Claims::new(&docs, "number", claims.proxy());
    assert_eq!(unscoped.check().await.unwrap().shared_count, 1);

    let repaired = claims.repair().await.unwrap();
    assert_eq!(repaired.claimed, 1);
    assert!(claims.check().await.unwrap().is_clean());
    let claim = claims
        .proxy()
        .find_one(doc! { "_id": key })
        .await
        .unwrap()
        .expect("the claim was written");
    assert_eq!(claim.get("doc"), Some(&Bson::ObjectId(other)));
}

#[tokio::test]
async fn a_proxy_of_another_database_is_refused() {
    let db = common::database("claims_elsewhere").await;
    let other = common::database("claims_elsewhere_proxy").await;
    let docs = db.collection::<Document>("stubs");
    let proxy = other.collection::<Document>("stubs.claims.number");
    match Claims::new(&docs, "number", &proxy).check().await {
        Err(Error::InvalidArgument { argument, .. }) => assert_eq!(argument, "proxy"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}
