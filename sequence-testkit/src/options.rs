//! The options of a dedicated server started with `TestServer::start`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::network::Network;

/// How to start a dedicated server with [`TestServer::start`](crate::TestServer::start).
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
    pub(crate) nodes: usize,
    pub(crate) replica_set_name: String,
    pub(crate) args: Vec<String>,
    pub(crate) binary: Option<PathBuf>,
    pub(crate) startup_timeout: Duration,
    pub(crate) election_timeout: Option<Duration>,
    pub(crate) standalone: bool,
    pub(crate) network: Option<Arc<Network>>,
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
            network: None,
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
    /// [`TestServer::client`](crate::TestServer::client) (the server only allows roles on `admin` for
    /// that first user, e.g. `root` or `userAdminAnyDatabase`), then connect
    /// with [`TestServer::uri_with_credentials`](crate::TestServer::uri_with_credentials). `--auth` is supported for
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

    /// Runs node `i` in namespace `i` of `network`, on its address there
    /// instead of 127.0.0.1, so that a test can cut and heal the links
    /// between the nodes and itself ([`Network::cut`]). The network needs a
    /// namespace per node; it outlives the server.
    pub fn network(mut self, network: Arc<Network>) -> Self {
        self.network = Some(network);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
