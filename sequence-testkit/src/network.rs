//! A network of its own for the nodes of a server, to cut and heal links between them and the
//! test: each node in a Linux network namespace of its own, linked by a veth pair to a bridge
//! in the test's namespace, on a private subnet (`10.213.x.0/24`) that exists only on these
//! interfaces. Nothing is routed anywhere else: the bridge has no other port.
//!
//! A partition is a pair of `blackhole` routes, one in each side's namespace, so each side
//! drops what it would send to the other; healing deletes them. Making namespaces needs root
//! and the `ip` command (iproute2); [`Network::create`] says which is missing.
//!
//! Everything is deleted when the `Network` is dropped (the namespaces, the bridge and the
//! veth pairs); if the process dies first, the watchdog of the network's directory runs its
//! cleanup script.

use std::collections::BTreeSet;
use std::fs;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::ProvisionError;
use crate::mutex::lock;
use crate::root_dir::create_root_dir;
use crate::watchdog;

/// One end of a link that [`Network::cut`] can cut: the test process (the client, in the
/// namespace the test runs in) or a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The test process and its clients.
    Client,
    /// Node `i` of the server started on this network.
    Node(usize),
}

/// Network namespaces, veth pairs and a bridge for the nodes of one server: each node in a
/// namespace of its own, linked by a veth pair to a bridge beside the test, on a private
/// subnet (`10.213.x.0/24`) that exists only on these interfaces. A cut link is a pair of
/// `blackhole` routes, one in each side's namespace. Give it to
/// [`ServerOptions::network`](crate::ServerOptions::network); everything is deleted when it is
/// dropped, or by a watchdog if the process dies first.
#[derive(Debug)]
pub struct Network {
    /// The prefix of every name this network made (namespaces, interfaces).
    id: String,
    /// The third byte of the subnet `10.213.x.0/24`.
    subnet: u8,
    nodes: usize,
    /// The links cut now, each as (lower side, higher side).
    cut: Mutex<BTreeSet<(Side, Side)>>,
    /// The directory of the cleanup script and the watchdog that runs it.
    root: PathBuf,
    watchdog: Mutex<Option<Child>>,
}

/// Runs `ip` with `args`; the error names the command and what it printed.
fn ip(args: &[&str]) -> Result<(), ProvisionError> {
    let output = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ProvisionError::new(format!("cannot run `ip` (iproute2): {e}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(ProvisionError::new(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

/// The subnets `10.213.x.0/24` some interface of this host has an address in.
fn subnets_in_use() -> BTreeSet<u8> {
    let Ok(output) = Command::new("ip")
        .args(["-4", "-o", "addr", "show"])
        .output()
    else {
        return BTreeSet::new();
    };
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .filter_map(|word| word.strip_prefix("10.213."))
        .filter_map(|rest| rest.split('.').next()?.parse().ok())
        .collect()
}

impl Network {
    /// Makes a namespace for each of `nodes` nodes and the bridge between them and the test.
    ///
    /// Fails, with the reason, where namespaces cannot be made: not root, no `ip`, or a kernel
    /// without network namespaces.
    pub fn create(nodes: usize) -> Result<Arc<Network>, ProvisionError> {
        // SAFETY: a plain syscall without arguments.
        if unsafe { libc::geteuid() } != 0 {
            return Err(ProvisionError::new(
                "network namespaces need root (the test runs as an unprivileged user)",
            ));
        }
        ip(&["-V"])?;
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let id = format!("ms{:x}{n:x}", std::process::id() & 0xffff);
        let used = subnets_in_use();
        let subnet = (1..=254u8)
            .map(|k| ((std::process::id() as usize + n as usize * 7 + k as usize) % 254 + 1) as u8)
            .find(|s| !used.contains(s))
            .ok_or_else(|| ProvisionError::new("no free subnet in 10.213.0.0/16"))?;
        let root = create_root_dir()?;
        let watchdog = watchdog::spawn(&root).map_err(|e| {
            ProvisionError::new(format!("cannot start the watchdog (/bin/sh): {e}"))
        })?;
        let network = Network {
            id,
            subnet,
            nodes,
            cut: Mutex::new(BTreeSet::new()),
            root,
            watchdog: Mutex::new(Some(watchdog)),
        };
        network.write_cleanup()?;
        network.build()?;
        Ok(Arc::new(network))
    }

    fn bridge(&self) -> String {
        format!("{}b", self.id)
    }

    fn host_end(&self, i: usize) -> String {
        format!("{}h{i}", self.id)
    }

    /// The name of node `i`'s namespace (for `ip netns exec`).
    pub fn namespace(&self, i: usize) -> String {
        format!("{}n{i}", self.id)
    }

    /// How many nodes this network has room for.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The address of a side: the bridge's (`.1`) for the client, `.10 + i` for node `i`.
    pub fn address(&self, side: Side) -> Ipv4Addr {
        match side {
            Side::Client => Ipv4Addr::new(10, 213, self.subnet, 1),
            Side::Node(i) => Ipv4Addr::new(10, 213, self.subnet, 10 + i as u8),
        }
    }

    /// The commands that delete everything this network makes, also what a watchdog runs if
    /// the process dies first.
    fn teardown_commands(&self) -> Vec<Vec<String>> {
        let mut commands = vec![vec!["link".into(), "del".into(), self.bridge()]];
        for i in 0..self.nodes {
            commands.push(vec!["link".into(), "del".into(), self.host_end(i)]);
            commands.push(vec!["netns".into(), "del".into(), self.namespace(i)]);
        }
        for i in 0..self.nodes {
            let address = format!("{}/32", self.address(Side::Node(i)));
            commands.push(vec![
                "route".into(),
                "del".into(),
                "blackhole".into(),
                address,
            ]);
        }
        commands
    }

    fn write_cleanup(&self) -> Result<(), ProvisionError> {
        let script: String = self
            .teardown_commands()
            .iter()
            .map(|c| format!("ip {} 2>/dev/null\n", c.join(" ")))
            .collect();
        let path = self.root.join("cleanup");
        fs::write(&path, script)
            .map_err(|e| ProvisionError::new(format!("cannot write {}: {e}", path.display())))
    }

    fn build(&self) -> Result<(), ProvisionError> {
        let bridge = self.bridge();
        let client = format!("{}/24", self.address(Side::Client));
        ip(&["link", "add", &bridge, "type", "bridge"])?;
        ip(&["addr", "add", &client, "dev", &bridge])?;
        ip(&["link", "set", &bridge, "up"])?;
        for i in 0..self.nodes {
            let (ns, host_end) = (self.namespace(i), self.host_end(i));
            let node_end = format!("{}c{i}", self.id);
            let address = format!("{}/24", self.address(Side::Node(i)));
            ip(&["netns", "add", &ns])?;
            ip(&[
                "link", "add", &host_end, "type", "veth", "peer", "name", &node_end,
            ])?;
            ip(&["link", "set", &node_end, "netns", &ns])?;
            ip(&["link", "set", &host_end, "master", &bridge])?;
            ip(&["link", "set", &host_end, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            ip(&["-n", &ns, "addr", "add", &address, "dev", &node_end])?;
            ip(&["-n", &ns, "link", "set", &node_end, "up"])?;
        }
        Ok(())
    }

    /// The `ip` arguments of the route in `from`'s namespace that drops what it sends to `to`.
    fn blackhole(&self, from: Side, to: Side, verb: &str) -> Vec<String> {
        let mut args = Vec::new();
        if let Side::Node(i) = from {
            args.extend(["-n".to_owned(), self.namespace(i)]);
        }
        let to = format!("{}/32", self.address(to));
        args.extend(["route", verb, "blackhole"].map(str::to_owned));
        args.push(to);
        args
    }

    fn check(&self, side: Side) {
        if let Side::Node(i) = side {
            assert!(
                i < self.nodes,
                "node {i} is not on this network of {}",
                self.nodes
            );
        }
    }

    /// Cuts the link between `a` and `b` both ways: each drops what it sends to the other,
    /// while both still reach everyone else. Does nothing if it is cut already.
    ///
    /// # Panics
    ///
    /// If `a` and `b` are the same side or a node is not on this network.
    pub fn cut(&self, a: Side, b: Side) -> Result<(), ProvisionError> {
        assert_ne!(a, b, "a side cannot be cut from itself");
        self.check(a);
        self.check(b);
        let link = (a.min(b), a.max(b));
        let mut cut = lock(&self.cut);
        if cut.contains(&link) {
            return Ok(());
        }
        for (from, to) in [(a, b), (b, a)] {
            let args = self.blackhole(from, to, "add");
            ip(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        cut.insert(link);
        Ok(())
    }

    /// Cuts `side` from every other side given.
    pub fn isolate(&self, side: Side, from: &[Side]) -> Result<(), ProvisionError> {
        from.iter().try_for_each(|&other| self.cut(side, other))
    }

    /// Heals every link cut.
    pub fn heal(&self) -> Result<(), ProvisionError> {
        let mut cut = lock(&self.cut);
        while let Some(&(a, b)) = cut.iter().next() {
            for (from, to) in [(a, b), (b, a)] {
                let args = self.blackhole(from, to, "del");
                ip(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
            }
            cut.remove(&(a, b));
        }
        Ok(())
    }

    /// The links cut now.
    pub fn cut_links(&self) -> Vec<(Side, Side)> {
        lock(&self.cut).iter().copied().collect()
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        let _ = self.heal();
        for command in self.teardown_commands() {
            let args: Vec<&str> = command.iter().map(String::as_str).collect();
            let _ = Command::new("ip")
                .args(&args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = fs::remove_dir_all(&self.root);
        if let Some(watchdog) = lock(&self.watchdog).take() {
            watchdog::end(watchdog);
        }
    }
}
