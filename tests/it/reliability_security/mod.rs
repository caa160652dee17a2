//! Access control: a server started with `--auth`, users with the least privileges the README
//! documents, and users without write access to the counters, which get a clear error:
//!
//! - `least_privilege.rs`: the documented minimal role numbers; a user without a privilege on
//!   the counters or on the target collection gets it named;
//! - `missing_privileges.rs`: every path that talks to the server names the privilege missing;
//! - `privilege_table.rs`: the rows of the privileges table beyond reserving and inserting,
//!   each privilege named when missing, and each minimal role numbering its path.
//!
//! Here: the server with `--auth`, its roles and users, one insert of each kind
//! (`insert_all`), and the checks of `Error::Unauthorized`.

mod least_privilege;
mod missing_privileges;
mod privilege_table;

use std::fmt::Debug;

use mongo_sequence::{Error, SequentialId};
use mongodb::bson::{doc, Document};
use mongodb::Client;
use sequence_testkit::{ServerOptions, TestServer};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "order25", batch = 25)]
struct CachedOrder {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, SequentialId)]
#[seq(name = "invoice", gapless)]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

/// Inserts one document of each model into `db` as `client`; returns the IDs.
async fn insert_all(client: &Client, db: &str) -> Result<Vec<i64>, Error> {
    let db = client.database(db);
    let mut ids = Vec::new();
    ids.push(
        Order { id: 0 }
            .insert_with_id(&db.collection("orders"))
            .await?,
    );
    ids.push(
        CachedOrder { id: 0 }
            .insert_with_id(&db.collection("cached_orders"))
            .await?,
    );
    ids.push(
        Invoice { id: 0 }
            .insert_with_id(&db.collection("invoices"))
            .await?,
    );
    let mut many = vec![Order { id: 0 }, Order { id: 0 }];
    ids.extend(Order::insert_many_with_ids(&mut many, &db.collection("orders")).await?);
    Ok(ids)
}

/// A server started with `--auth`, and a client of its `root` user.
async fn auth_server() -> (TestServer, Client) {
    let server =
        tokio::task::spawn_blocking(|| TestServer::start(ServerOptions::default().arg("--auth")))
            .await
            .unwrap()
            .expect("a mongod with --auth starts");
    let root = server.create_root_user("root", "root-pw").await;
    (server, root)
}

/// Creates in `db`, as `root`, a role of each name with its privileges, and a user of the same
/// name holding it (password `<name>-pw`).
async fn users_with_roles<'a>(
    root: &Client,
    db: &str,
    roles: impl IntoIterator<Item = (&'a str, Vec<Document>)>,
) {
    let admin = root.database("admin");
    for (name, privileges) in roles {
        root.database(db)
            .run_command(doc! { "createRole": name, "privileges": privileges, "roles": [] })
            .await
            .unwrap();
        admin
            .run_command(doc! {
                "createUser": name,
                "pwd": format!("{name}-pw"),
                "roles": [{ "role": name, "db": db }],
            })
            .await
            .unwrap();
    }
}

/// Stops `server` (off the async runtime, since stopping waits for the process).
async fn stop(server: TestServer) {
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}

/// The collection, the needed privileges and the server's code of an `Error::Unauthorized`.
fn refused(e: &Error) -> (String, &'static str, i32) {
    match e {
        Error::Unauthorized {
            namespace,
            needs,
            source,
        } => match &*source.kind {
            mongodb::error::ErrorKind::Command(c) => (namespace.clone(), *needs, c.code),
            other => panic!("expected a server error as source, got {other:?}"),
        },
        other => panic!("expected Error::Unauthorized, got {other:?}"),
    }
}

/// The database of the paths test.
const PATHS: &str = "paths";

/// Asserts that `result` is `Error::Unauthorized` on `paths.<collection>` for an operation
/// whose needs mention `needs`, with the server's error 13 as source.
fn assert_refused<T: Debug>(path: &str, result: Result<T, Error>, collection: &str, needs: &str) {
    match result {
        Err(e @ Error::Unauthorized { .. }) => {
            let (namespace, what, code) = refused(&e);
            assert_eq!(
                (namespace.as_str(), code),
                (format!("{PATHS}.{collection}").as_str(), 13),
                "{path}: {e}"
            );
            assert!(what.contains(needs), "{path}: {what}");
        }
        other => panic!("{path}: expected Error::Unauthorized, got {other:?}"),
    }
}
