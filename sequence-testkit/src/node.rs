//! One `mongod` of a server started by this crate: its address, data
//! directory, log and process.

use std::fmt::Write as _;
use std::fs;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Mutex;

use crate::mutex::lock;

/// One `mongod` process of a deployment started by this crate.
#[derive(Debug)]
pub struct Node {
    index: usize,
    port: AtomicU16,
    ip: Ipv4Addr,
    namespace: Option<String>,
    dbpath: PathBuf,
    child: Mutex<Option<Child>>,
}

impl Node {
    /// A node that is not started yet.
    pub(crate) fn new(
        index: usize,
        port: u16,
        dbpath: PathBuf,
        ip: Ipv4Addr,
        namespace: Option<String>,
    ) -> Node {
        Node {
            index,
            port: AtomicU16::new(port),
            ip,
            namespace,
            dbpath,
            child: Mutex::new(None),
        }
    }

    /// Position of this node in [`TestServer::nodes`](crate::TestServer::nodes)
    /// (also its member `_id` in the replica set configuration).
    pub fn index(&self) -> usize {
        self.index
    }

    /// TCP port the node listens on.
    pub fn port(&self) -> u16 {
        self.port.load(Ordering::SeqCst)
    }

    /// The address the node listens on: 127.0.0.1, or its address on a
    /// [`Network`](crate::Network).
    pub fn address(&self) -> SocketAddr {
        SocketAddr::from((self.ip, self.port()))
    }

    /// The network namespace the node runs in, on a [`Network`](crate::Network).
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The node's address as it appears in the replica set configuration,
    /// e.g. `127.0.0.1:40123`.
    pub fn host(&self) -> String {
        self.address().to_string()
    }

    /// Connection string reaching only this node (`directConnection=true`),
    /// e.g. to run `replSetStepDown` on it or read from a secondary.
    pub fn direct_uri(&self) -> String {
        format!("mongodb://{}/?directConnection=true", self.host())
    }

    /// The node's data directory (`--dbpath`).
    pub fn dbpath(&self) -> &Path {
        &self.dbpath
    }

    /// The node's log file (`--logpath`).
    pub fn log_path(&self) -> PathBuf {
        self.dbpath.join("mongod.log")
    }

    /// Process id of the node's `mongod`, or `None` if it is not running.
    pub fn pid(&self) -> Option<u32> {
        let mut guard = lock(&self.child);
        let child = guard.as_mut()?;
        match child.try_wait() {
            Ok(None) => Some(child.id()),
            _ => None,
        }
    }

    /// Whether the node's `mongod` process is running.
    pub fn is_running(&self) -> bool {
        self.pid().is_some()
    }

    /// Moves the node to another port (before it is started again).
    pub(crate) fn set_port(&self, port: u16) {
        self.port.store(port, Ordering::SeqCst);
    }

    /// The file receiving the node's standard output and error.
    pub(crate) fn console_path(&self) -> PathBuf {
        self.dbpath.join("console.log")
    }

    /// Records the `mongod` just started for this node.
    pub(crate) fn set_child(&self, child: Child) {
        *lock(&self.child) = Some(child);
    }

    /// Takes the node's `mongod` process, leaving the node without one.
    pub(crate) fn take_child(&self) -> Option<Child> {
        lock(&self.child).take()
    }

    /// The pid of the node's `mongod` while it has not been reaped, running
    /// or not.
    pub(crate) fn unreaped_pid(&self) -> Option<u32> {
        lock(&self.child).as_ref().map(Child::id)
    }

    /// How the node's `mongod` ended, if it did: it was stopped (there is no
    /// process), it exited (it is reaped then), or it cannot be waited for.
    /// `None` while it runs.
    pub(crate) fn ended(&self) -> Option<String> {
        let mut guard = lock(&self.child);
        match guard.as_mut() {
            None => Some("was stopped".to_string()),
            Some(child) => match child.try_wait() {
                Ok(Some(status)) => {
                    guard.take();
                    Some(format!("exited with {status}"))
                }
                Ok(None) => None,
                Err(e) => Some(format!("cannot be waited for: {e}")),
            },
        }
    }

    /// Last lines of a node's console output and log file.
    pub(crate) fn log_tail(&self) -> String {
        let mut out = String::new();
        for path in [self.console_path(), self.log_path()] {
            let tail = tail_lines(&path, 15);
            if !tail.trim().is_empty() {
                let _ = writeln!(out, "--- {}", path.display());
                out.push_str(&tail);
            }
        }
        if out.is_empty() {
            out.push_str("(no log output)\n");
        }
        out
    }
}

fn tail_lines(path: &Path, n: usize) -> String {
    let Ok(text) = fs::read(path) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].iter().map(|l| format!("{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_last_lines() {
        let dir =
            std::env::temp_dir().join(format!("mongo-sequence-unit-tail-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        fs::write(&path, "a\nb\nc\nd\n").unwrap();
        assert_eq!(tail_lines(&path, 2), "c\nd\n");
        assert_eq!(tail_lines(&dir.join("missing"), 2), "");
        fs::remove_dir_all(dir).unwrap();
    }
}
