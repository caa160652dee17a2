//! The minimal role the README documents (and `readWrite`) numbers plain, cached, gapless and
//! bulk inserts; users without write access to the counters, or without `insert` on the target
//! collection, get `Error::Unauthorized` naming it, and a refused gapless insert takes no
//! number.

use mongodb::bson::{doc, Document};
use mongodb::Client;

use super::{auth_server, insert_all, refused, stop, Invoice, Order};

/// The database of the least-privileged users.
const DB: &str = "shop";
/// The database of the `readWrite` user. (A cache of reserved IDs is shared per database name
/// within a process, so the two must not share one for the test to reach the server.)
const RW_DB: &str = "open";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn least_privilege_works_and_missing_privileges_are_named() {
    let (server, root) = auth_server().await;
    let shop = root.database(DB);
    // The documented minimum: find, update and insert on the counters, insert on the target
    // collections.
    shop.run_command(doc! {
        "createRole": "sequenceWriter",
        "privileges": [
            { "resource": { "db": DB, "collection": "counters" }, "actions": ["find", "update", "insert"] },
            { "resource": { "db": DB, "collection": "orders" }, "actions": ["insert"] },
            { "resource": { "db": DB, "collection": "cached_orders" }, "actions": ["insert"] },
            { "resource": { "db": DB, "collection": "invoices" }, "actions": ["insert"] },
        ],
        "roles": [],
    })
    .await
    .unwrap();
    // Writes to the target collections only.
    shop.run_command(doc! {
        "createRole": "ordersOnly",
        "privileges": [
            { "resource": { "db": DB, "collection": "orders" }, "actions": ["find", "insert"] },
        ],
        "roles": [],
    })
    .await
    .unwrap();
    // The counters, but not the target collection.
    shop.run_command(doc! {
        "createRole": "countersOnly",
        "privileges": [
            { "resource": { "db": DB, "collection": "counters" }, "actions": ["find", "update", "insert"] },
        ],
        "roles": [],
    })
    .await
    .unwrap();
    let admin = root.database("admin");
    for (user, role, db) in [
        ("rw", "readWrite", RW_DB),
        ("minimal", "sequenceWriter", DB),
        ("reader", "read", DB),
        ("orders_only", "ordersOnly", DB),
        ("counters_only", "countersOnly", DB),
    ] {
        admin
            .run_command(doc! {
                "createUser": user,
                "pwd": format!("{user}-pw"),
                "roles": [{ "role": role, "db": db }],
            })
            .await
            .unwrap();
    }
    let login = |user: &str| {
        let uri = server.uri_with_credentials(user, &format!("{user}-pw"));
        async move { Client::with_uri_str(uri).await.unwrap() }
    };

    // `readWrite` on the database is enough, from the first upsert of each counter on.
    let ids = insert_all(&login("rw").await, RW_DB).await.unwrap();
    assert_eq!(ids, vec![1, 1, 1, 2, 3]);
    // So is the minimal role, for plain, cached, gapless and bulk inserts.
    let ids = insert_all(&login("minimal").await, DB).await.unwrap();
    assert_eq!(ids, vec![1, 1, 1, 2, 3]);

    let mut messages = Vec::new();
    // Without write access to the counters: `Error::Unauthorized` naming the counters
    // collection and the actions a reservation needs, with the server's error 13 as source;
    // nothing is inserted.
    for user in ["reader", "orders_only"] {
        let client = login(user).await;
        let orders = client.database(DB).collection::<Order>("orders");
        let err = Order { id: 0 }.insert_with_id(&orders).await.unwrap_err();
        let (namespace, needs, code) = refused(&err);
        assert_eq!(
            (namespace.as_str(), code),
            ("shop.counters", 13),
            "{user}: {err}"
        );
        assert!(
            needs.contains("`find`, `update` and `insert`"),
            "{user}: {needs}"
        );
        let text = err.to_string();
        assert!(text.len() < 200, "{user}: a short message: {text}");
        println!("security: {user}: {text}");
        messages.push(format!("{user}: unauthorized on {namespace}"));
    }
    // Without insert on the target collection: the same for the target collection; the
    // number taken for the document is skipped.
    let client = login("counters_only").await;
    let orders = client.database(DB).collection::<Order>("orders");
    let err = Order { id: 0 }.insert_with_id(&orders).await.unwrap_err();
    let (namespace, needs, code) = refused(&err);
    assert_eq!((namespace.as_str(), code), ("shop.orders", 13), "{err}");
    assert!(needs.contains("`insert` action"), "{needs}");
    println!("security: counters_only: {err}");
    messages.push(format!("counters_only: unauthorized on {namespace}"));
    // A gapless insert refused the same way consumes no number: the transaction aborts.
    let invoices = client.database(DB).collection::<Invoice>("invoices");
    let err = Invoice { id: 0 }
        .insert_with_id(&invoices)
        .await
        .unwrap_err();
    let (namespace, _, code) = refused(&err);
    assert_eq!((namespace.as_str(), code), ("shop.invoices", 13), "{err}");
    let invoice_counter = shop
        .collection::<Document>("counters")
        .find_one(doc! { "_id": "invoice" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        invoice_counter.get_i64("seq"),
        Ok(1),
        "no gapless number consumed"
    );
    messages.push(format!(
        "counters_only gapless: unauthorized on {namespace}"
    ));

    let stored = shop
        .collection::<Document>("orders")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(stored, 3, "only the authorized inserts are stored");
    println!(
        "reliability: security users=5 authorized_inserts=10 refused=4 ({})",
        messages.join(", ")
    );
    drop((root, shop, admin));
    stop(server).await;
}
