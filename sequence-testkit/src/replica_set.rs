//! The replica set of a server started by this crate: initiating it, making
//! node 0 the first primary, and asking the nodes what they are until there
//! is a primary.

use std::thread;
use std::time::{Duration, Instant};

use mongodb::bson::{doc, Document};

use crate::error::ProvisionError;
use crate::managed_server::ManagedServer;
use crate::wire;

/// Timeout of a single probe (`hello`) sent to a node.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// What a `hello` says about a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeState {
    Down,
    Primary,
    Secondary,
    Other,
}

impl ManagedServer {
    /// Runs `replSetInitiate` on node 0.
    pub(crate) fn initiate(
        &self,
        election_timeout: Option<Duration>,
        deadline: Instant,
    ) -> Result<(), ProvisionError> {
        let members: Vec<Document> = self
            .nodes
            .iter()
            .map(|n| doc! { "_id": n.index() as i32, "host": n.host() })
            .collect();
        let mut config = doc! { "_id": self.set_name.clone(), "members": members };
        if let Some(timeout) = election_timeout {
            config.insert(
                "settings",
                doc! { "electionTimeoutMillis": timeout.as_millis() as i64 },
            );
        }
        let address = self.nodes[0].address();
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let timeout = remaining.clamp(Duration::from_secs(1), Duration::from_secs(30));
            match wire::admin_command(address, doc! { "replSetInitiate": config.clone() }, timeout)
            {
                Ok(_) => return Ok(()),
                Err(e) if e.contains("AlreadyInitialized") => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(ProvisionError::new(format!(
                        "replSetInitiate on {address} failed: {e}\n{}",
                        self.log_tails()
                    )))
                }
                Err(_) => thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// Makes node 0 the first primary with `replSetStepUp` instead of
    /// waiting for an election timeout (multi-node sets only; a single node
    /// elects itself at once).
    pub(crate) fn step_up_first_node(&self, deadline: Instant) -> Result<(), ProvisionError> {
        if self.nodes.len() < 2 {
            return Ok(());
        }
        let address = self.nodes[0].address();
        loop {
            let states: Vec<NodeState> =
                (0..self.nodes.len()).map(|i| self.node_state(i)).collect();
            if states.contains(&NodeState::Primary) {
                return Ok(());
            }
            if states.iter().all(|s| *s == NodeState::Secondary) {
                // Fails until node 0 has heard from a majority; just retry.
                let _ = wire::admin_command(address, doc! { "replSetStepUp": 1 }, PROBE_TIMEOUT);
            }
            if Instant::now() >= deadline {
                // Let wait_ready report the states and logs.
                return Ok(());
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Asks one node what it is.
    pub(crate) fn node_state(&self, i: usize) -> NodeState {
        let node = &self.nodes[i];
        if !node.is_running() {
            return NodeState::Down;
        }
        match wire::admin_command(node.address(), doc! { "hello": 1 }, PROBE_TIMEOUT) {
            Ok(reply) if reply.get_bool("isWritablePrimary").unwrap_or(false) => NodeState::Primary,
            Ok(reply) if reply.get_bool("secondary").unwrap_or(false) => NodeState::Secondary,
            Ok(_) => NodeState::Other,
            Err(_) => NodeState::Down,
        }
    }

    /// Waits until some node is a writable primary and, if `all_members` is
    /// set, every running node is a primary or secondary. Returns the
    /// primary's index.
    pub(crate) fn wait_ready(
        &self,
        all_members: bool,
        deadline: Instant,
    ) -> Result<usize, ProvisionError> {
        loop {
            let states: Vec<NodeState> =
                (0..self.nodes.len()).map(|i| self.node_state(i)).collect();
            let primary = states.iter().position(|s| *s == NodeState::Primary);
            let settled = !all_members
                || states.iter().enumerate().all(|(i, s)| {
                    matches!(s, NodeState::Primary | NodeState::Secondary)
                        || (*s == NodeState::Down && !self.nodes[i].is_running())
                });
            if let (Some(primary), true) = (primary, settled) {
                return Ok(primary);
            }
            if Instant::now() >= deadline {
                let states: Vec<String> = states
                    .iter()
                    .zip(&self.nodes)
                    .map(|(s, n)| format!("{}: {s:?}", n.host()))
                    .collect();
                return Err(ProvisionError::new(format!(
                    "replica set {} did not get a writable primary{} in time ({}); \
                     if the machine is very busy, raise ServerOptions::startup_timeout\n{}",
                    self.set_name,
                    if all_members { " and secondaries" } else { "" },
                    states.join(", "),
                    self.log_tails()
                )));
            }
            thread::sleep(Duration::from_millis(100));
        }
    }
}
