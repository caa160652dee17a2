//! A server started by this crate: its nodes, its directory (data
//! directories, key file, the pids the watchdog reads) and its watchdog.
//!
//! Starting and stopping its processes is in `node_process`, its replica set
//! in `replica_set`, and stopping it as a whole in `teardown`.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::ProvisionError;
use crate::mutex::lock;
use crate::network::{Network, Side};
use crate::node::Node;
use crate::options::ServerOptions;
use crate::root_dir::create_root_dir;
use crate::watchdog;

/// The processes and directories of a deployment started by this crate.
#[derive(Debug)]
pub(crate) struct ManagedServer {
    root: PathBuf,
    pub(crate) set_name: String,
    pub(crate) standalone: bool,
    pub(crate) binary: PathBuf,
    pub(crate) extra_args: Vec<String>,
    pub(crate) nodes: Vec<Node>,
    /// The namespaces the nodes run in, if any; kept until the nodes are gone.
    _network: Option<Arc<Network>>,
    stopped: AtomicBool,
    watchdog: Mutex<Option<Child>>,
    pids_file: Mutex<()>,
}

impl ManagedServer {
    /// Creates the directories, picks ports and starts the watchdog. Starts
    /// no `mongod`.
    pub(crate) fn create(
        opts: &ServerOptions,
        binary: PathBuf,
    ) -> Result<Arc<ManagedServer>, ProvisionError> {
        let root = create_root_dir()?;
        let fail = |what: &str, e: io::Error| {
            let _ = fs::remove_dir_all(&root);
            ProvisionError::new(format!("{what}: {e}"))
        };

        let mut extra_args = opts.args.clone();
        let auth = extra_args.iter().any(|a| a == "--auth");
        let has_key_file = extra_args
            .iter()
            .any(|a| a == "--keyFile" || a.starts_with("--keyFile="));
        if auth && !has_key_file {
            let key_file = root.join("keyfile");
            write_key_file(&key_file)
                .map_err(|e| fail(&format!("cannot write {}", key_file.display()), e))?;
            extra_args.push("--keyFile".into());
            extra_args.push(key_file.to_string_lossy().into_owned());
        }

        let mut nodes = Vec::with_capacity(opts.nodes);
        for index in 0..opts.nodes {
            let dbpath = root.join(format!("node{index}"));
            fs::create_dir(&dbpath)
                .map_err(|e| fail(&format!("cannot create {}", dbpath.display()), e))?;
            let port = pick_port().map_err(|e| fail("cannot find a free port on 127.0.0.1", e))?;
            let place = opts
                .network
                .as_ref()
                .map(|n| (n.address(Side::Node(index)), Some(n.namespace(index))));
            let (ip, namespace) = place.unwrap_or((Ipv4Addr::LOCALHOST, None));
            nodes.push(Node::new(index, port, dbpath, ip, namespace));
        }

        let watchdog =
            watchdog::spawn(&root).map_err(|e| fail("cannot start the watchdog (/bin/sh)", e))?;
        Ok(Arc::new(ManagedServer {
            root,
            set_name: opts.replica_set_name.clone(),
            standalone: opts.standalone,
            binary,
            extra_args,
            nodes,
            _network: opts.network.clone(),
            stopped: AtomicBool::new(false),
            watchdog: Mutex::new(Some(watchdog)),
            pids_file: Mutex::new(()),
        }))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Marks the server as stopped; `false` if it already was.
    pub(crate) fn mark_stopped(&self) -> bool {
        !self.stopped.swap(true, Ordering::SeqCst)
    }

    /// Whether the server has been stopped.
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Takes the watchdog process, once.
    pub(crate) fn take_watchdog(&self) -> Option<Child> {
        lock(&self.watchdog).take()
    }

    /// Last lines of the console output and log file of every node.
    pub(crate) fn log_tails(&self) -> String {
        self.nodes.iter().map(Node::log_tail).collect()
    }

    /// Records the pids of the running nodes for the watchdog.
    pub(crate) fn write_pids(&self) {
        let _guard = lock(&self.pids_file);
        let pids: String = self
            .nodes
            .iter()
            .filter_map(|n| n.unreaped_pid().map(|pid| format!("{pid}\n")))
            .collect();
        let temp = self.root.join("pids.tmp");
        if fs::write(&temp, pids).is_ok() {
            let _ = fs::rename(&temp, self.root.join("pids"));
        }
    }
}

/// Picks a port that is free on 127.0.0.1 and that this process has not
/// handed out before.
pub(crate) fn pick_port() -> io::Result<u16> {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    for _ in 0..100 {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        if lock(&HANDED_OUT).insert(port) {
            return Ok(port);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrInUse,
        "no unused port found",
    ))
}

/// Writes a random key file for internal authentication (mode 0600).
fn write_key_file(path: &Path) -> io::Result<()> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut random = [0u8; 756];
    File::open("/dev/urandom")?.read_exact(&mut random)?;
    let key: Vec<u8> = random
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()])
        .collect();
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    io::Write::write_all(&mut file, &key)?;
    file.set_permissions(fs::Permissions::from_mode(0o600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_file_is_private_and_base64() {
        let dir = create_root_dir().unwrap();
        let path = dir.join("keyfile");
        write_key_file(&path).unwrap();
        let key = fs::read(&path).unwrap();
        assert_eq!(key.len(), 756);
        assert!(key
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/'));
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn ports_are_not_handed_out_twice() {
        let ports: BTreeSet<u16> = (0..20).map(|_| pick_port().unwrap()).collect();
        assert_eq!(ports.len(), 20);
        assert!(!ports.contains(&0));
    }
}
