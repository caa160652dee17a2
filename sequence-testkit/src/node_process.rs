//! The `mongod` processes of a server started by this crate: starting them
//! (on another port if the chosen one was taken meanwhile), killing,
//! stopping and restarting one.

use std::fs::{self, OpenOptions};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::ProvisionError;
use crate::managed_server::{pick_port, ManagedServer};
use crate::teardown::terminate;
use crate::wire;

/// How often startup retries on a port that turned out to be taken.
const PORT_ATTEMPTS: usize = 5;

enum StartFailure {
    AddressInUse(String),
    Failed(ProvisionError),
}

impl ManagedServer {
    /// Starts every node and waits until all accept connections.
    pub(crate) fn start_all(&self, deadline: Instant) -> Result<(), ProvisionError> {
        for i in 0..self.nodes.len() {
            self.spawn(i)?;
        }
        for i in 0..self.nodes.len() {
            let mut attempt = 1;
            loop {
                match self.wait_accepting(i, deadline) {
                    Ok(()) => break,
                    Err(StartFailure::AddressInUse(_)) if attempt < PORT_ATTEMPTS => {
                        attempt += 1;
                        let port = pick_port().map_err(|e| {
                            ProvisionError::new(format!(
                                "cannot find a free port on 127.0.0.1: {e}"
                            ))
                        })?;
                        let node = &self.nodes[i];
                        node.set_port(port);
                        let _ = fs::remove_dir_all(node.dbpath());
                        fs::create_dir(node.dbpath()).map_err(|e| {
                            ProvisionError::new(format!(
                                "cannot create {}: {e}",
                                node.dbpath().display()
                            ))
                        })?;
                        self.spawn(i)?;
                    }
                    Err(StartFailure::AddressInUse(log)) => {
                        return Err(ProvisionError::new(format!(
                            "mongod could not bind a port on 127.0.0.1 after {PORT_ATTEMPTS} \
                             attempts; last log lines:\n{log}"
                        )))
                    }
                    Err(StartFailure::Failed(e)) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// `SIGKILL`s a node and reaps it; returns its exit status (`None` without a process).
    pub(crate) fn kill_node(&self, i: usize) -> Option<std::process::ExitStatus> {
        let status = self.nodes[i].take_child().map(|mut child| {
            // A process that already exited is reaped all the same: its status says so.
            let _ = child.kill();
            child.wait().expect("waitpid on the node's mongod")
        });
        self.write_pids();
        status
    }

    /// `SIGTERM`s a node and waits for it to exit (`SIGKILL` after `grace`).
    pub(crate) fn stop_node(&self, i: usize, grace: Duration) {
        let Some(child) = self.nodes[i].take_child() else {
            return;
        };
        let mut children = vec![child];
        terminate(&mut children, grace);
        self.write_pids();
    }

    /// Starts a stopped node again with the same port and data directory.
    pub(crate) fn restart_node(&self, i: usize, deadline: Instant) -> Result<(), ProvisionError> {
        if self.is_stopped() {
            return Err(ProvisionError::new(
                "cannot restart a node of a server that has been stopped",
            ));
        }
        let node = &self.nodes[i];
        if node.is_running() {
            return Err(ProvisionError::new(format!(
                "node {i} ({}) is still running; kill or stop it before restarting it",
                node.host()
            )));
        }
        self.spawn(i)?;
        match self.wait_accepting(i, deadline) {
            Ok(()) => Ok(()),
            Err(StartFailure::AddressInUse(log)) => Err(ProvisionError::new(format!(
                "cannot restart node {i}: port {} is now used by another process; \
                 last log lines:\n{log}",
                node.port()
            ))),
            Err(StartFailure::Failed(e)) => Err(e),
        }
    }

    fn spawn(&self, i: usize) -> Result<(), ProvisionError> {
        let node = &self.nodes[i];
        let port = node.port().to_string();
        let console_path = node.console_path();
        let console = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&console_path)
            .map_err(|e| {
                ProvisionError::new(format!("cannot create {}: {e}", console_path.display()))
            })?;
        let console_err = console
            .try_clone()
            .map_err(|e| ProvisionError::new(format!("cannot duplicate a file handle: {e}")))?;
        let ip = node.address().ip().to_string();
        // On a `Network`, `ip netns exec` enters the node's namespace and then
        // executes `mongod` itself, so the child is still the `mongod`.
        let mut command = match node.namespace() {
            Some(ns) => {
                let mut command = Command::new("ip");
                command.args(["netns", "exec", ns]).arg(&self.binary);
                command
            }
            None => Command::new(&self.binary),
        };
        command
            .args(["--bind_ip", &ip, "--port", &port, "--dbpath"])
            .arg(node.dbpath())
            .args(if self.standalone {
                Vec::new()
            } else {
                vec!["--replSet", &self.set_name]
            })
            .args(["--setParameter", "enableTestCommands=1"])
            .args(["--setParameter", "diagnosticDataCollectionEnabled=false"])
            .args(["--oplogSize", "64", "--wiredTigerCacheSizeGB", "0.25"])
            .args(["--nounixsocket", "--quiet", "--logappend", "--logpath"])
            .arg(node.log_path())
            .args(&self.extra_args)
            .stdin(Stdio::null())
            .stdout(console)
            .stderr(console_err);
        let mut spawned = command.spawn();
        // A freshly written executable can briefly be "busy" while another
        // thread of this process forks; retry a few times.
        for _ in 0..20 {
            match &spawned {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                    thread::sleep(Duration::from_millis(50));
                    spawned = command.spawn();
                }
                _ => break,
            }
        }
        let child = spawned.map_err(|e| {
            ProvisionError::new(format!(
                "cannot start {}: {e}; set MONGOD_BINARY to a working mongod or MONGODB_URI \
                 to an existing deployment",
                self.binary.display()
            ))
        })?;
        node.set_child(child);
        self.write_pids();
        Ok(())
    }

    fn wait_accepting(&self, i: usize, deadline: Instant) -> Result<(), StartFailure> {
        let node = &self.nodes[i];
        loop {
            if let Some(how) = node.ended() {
                self.write_pids();
                let tail = node.log_tail();
                if tail.contains("Address already in use") {
                    return Err(StartFailure::AddressInUse(tail));
                }
                return Err(StartFailure::Failed(ProvisionError::new(format!(
                    "mongod ({}) for {} {how} while starting; last log lines:\n{tail}",
                    self.binary.display(),
                    node.host(),
                ))));
            }
            if wire::accepts_connections(node.address(), Duration::from_millis(250)) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(StartFailure::Failed(ProvisionError::new(format!(
                    "mongod for {} did not accept connections in time; if the \
                     machine is very busy, raise ServerOptions::startup_timeout; last log \
                     lines:\n{}",
                    node.host(),
                    node.log_tail()
                ))));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}
