//! The public `TestServer`: the shared server, dedicated servers, their
//! connection strings and what tests can do with their nodes.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::binary;
use crate::env_vars::MONGODB_URI_ENV;
use crate::error::ProvisionError;
use crate::managed_server::ManagedServer;
use crate::node::Node;
use crate::options::ServerOptions;
use crate::replica_set::NodeState;
use crate::teardown;

/// A running (or external) MongoDB deployment.
///
/// Either started by this crate ([`TestServer::shared`] without
/// `MONGODB_URI`, or [`TestServer::start`]) or an existing deployment named by
/// `MONGODB_URI`.
#[derive(Debug)]
pub struct TestServer {
    uri: String,
    managed: Option<Arc<ManagedServer>>,
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
                            managed: None,
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
        if let Some(network) = &opts.network {
            if network.nodes() < opts.nodes {
                return Err(ProvisionError::new(format!(
                    "the network has namespaces for {} nodes, not {}",
                    network.nodes(),
                    opts.nodes
                )));
            }
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
        let managed = ManagedServer::create(&opts, binary)?;
        teardown::register(&managed);
        let started = if opts.standalone {
            managed
                .start_all(deadline)
                .and_then(|()| managed.wait_ready(true, deadline))
        } else {
            managed
                .start_all(deadline)
                .and_then(|()| managed.initiate(opts.election_timeout, deadline))
                .and_then(|()| managed.step_up_first_node(deadline))
                .and_then(|()| managed.wait_ready(true, deadline))
        };
        if let Err(e) = started {
            teardown::shut_down(&managed);
            return Err(e);
        }
        let hosts: Vec<String> = managed.nodes.iter().map(Node::host).collect();
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
            managed: Some(managed),
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
        self.managed.is_some()
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

    /// For a server started with `--auth` and without users: creates `user` with the `root`
    /// role through the localhost exception (which lets the first user have roles on `admin`
    /// only, and closes once there is one), and returns a client of it.
    ///
    /// # Panics
    ///
    /// If the server refuses the user (started without `--auth`, or with a user already),
    /// or the driver the connection string.
    pub async fn create_root_user(&self, user: &str, password: &str) -> mongodb::Client {
        let created = self
            .client()
            .await
            .database("admin")
            .run_command(mongodb::bson::doc! {
                "createUser": user,
                "pwd": password,
                "roles": [{ "role": "root", "db": "admin" }],
            })
            .await;
        if let Err(e) = created {
            panic!("cannot create the root user `{user}`: {e}");
        }
        match mongodb::Client::with_uri_str(self.uri_with_credentials(user, password)).await {
            Ok(client) => client,
            Err(e) => panic!(
                "cannot create a MongoDB client of `{user}` for {}: {e}",
                redact(&self.uri)
            ),
        }
    }

    /// The nodes of a managed replica set; empty for an external server.
    pub fn nodes(&self) -> &[Node] {
        self.managed.as_deref().map_or(&[], |d| &d.nodes)
    }

    /// The directory holding the data directories (and key file) of a
    /// managed server; it is deleted when the server stops.
    pub fn dir(&self) -> Option<&Path> {
        self.managed.as_deref().map(ManagedServer::root)
    }

    /// Kills node `i`'s `mongod` with `SIGKILL` and waits for it to exit; returns how it
    /// exited, as `waitpid` reports it (of a process the kill ended, `signal()` is
    /// `Some(9)`), or `None` if the node had no process.
    ///
    /// # Panics
    ///
    /// If this server is not managed or `i` is out of range.
    pub fn kill_node(&self, i: usize) -> Option<std::process::ExitStatus> {
        self.managed_with_node("kill_node", i).kill_node(i)
    }

    /// Stops node `i` gracefully (`SIGTERM`, `SIGKILL` after 30 s) and waits
    /// for it to exit. Does nothing if it is not running.
    ///
    /// # Panics
    ///
    /// If this server is not managed or `i` is out of range.
    pub fn stop_node(&self, i: usize) {
        self.managed_with_node("stop_node", i)
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
        self.managed_with_node("restart_node", i)
            .restart_node(i, Instant::now() + Duration::from_secs(60))
    }

    /// The index of the node that currently reports itself as writable
    /// primary, if any (asks each running node with `hello`).
    pub fn primary(&self) -> Option<usize> {
        let managed = self.managed.as_deref()?;
        (0..managed.nodes.len()).find(|&i| managed.node_state(i) == NodeState::Primary)
    }

    /// Waits until some node is a writable primary and returns its index.
    ///
    /// For failover tests: after killing the primary, this returns the new
    /// one (elected after the replica set's election timeout).
    pub fn wait_for_primary(&self, timeout: Duration) -> Result<usize, ProvisionError> {
        self.require_managed("wait_for_primary")?
            .wait_ready(false, Instant::now() + timeout)
    }

    /// Waits until some node is a writable primary and every running node is
    /// a primary or secondary (e.g. after [`TestServer::restart_node`]).
    /// Returns the primary's index.
    pub fn wait_until_ready(&self, timeout: Duration) -> Result<usize, ProvisionError> {
        self.require_managed("wait_until_ready")?
            .wait_ready(true, Instant::now() + timeout)
    }

    /// Stops all nodes started for this server and deletes their
    /// directories (the same as dropping it). Does nothing for an external
    /// server.
    pub fn stop(self) {
        drop(self);
    }

    fn require_managed(&self, what: &str) -> Result<&ManagedServer, ProvisionError> {
        self.managed.as_deref().ok_or_else(|| {
            ProvisionError::new(format!(
                "{what} needs a server started by this crate, but this one comes from \
                 MONGODB_URI"
            ))
        })
    }

    fn managed_with_node(&self, what: &str, i: usize) -> &ManagedServer {
        let managed = match self.require_managed(what) {
            Ok(managed) => managed,
            Err(e) => panic!("{e}"),
        };
        assert!(
            i < managed.nodes.len(),
            "{what}({i}): this server has only {} node(s)",
            managed.nodes.len()
        );
        managed
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(managed) = self.managed.take() {
            teardown::shut_down(&managed);
        }
    }
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
    use std::path::PathBuf;

    use super::*;

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
            managed: None,
        };
        assert_eq!(
            server.uri_with_credentials("app", "p@ss:w/rd"),
            "mongodb://app:p%40ss%3Aw%2Frd@127.0.0.1:1/?replicaSet=rs0&authSource=admin"
        );
        let bare = TestServer {
            uri: "mongodb://old:pw@h1:1,h2:2".into(),
            managed: None,
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
            managed: None,
        };
        assert!(!server.is_managed());
        assert!(server.nodes().is_empty());
        assert!(server.dir().is_none());
        assert_eq!(server.primary(), None);
        assert!(server.wait_for_primary(Duration::from_millis(1)).is_err());
    }
}
