//! Starting, watching and tearing down the `mongod` processes of a deployment.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mongodb::bson::{doc, Document};

use crate::wire;
use crate::{ProvisionError, ServerOptions};

/// How long stopping waits for `mongod` to exit after `SIGTERM` before it
/// sends `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// Timeout of a single probe (`hello`) sent to a node.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How often startup retries on a port that turned out to be taken.
const PORT_ATTEMPTS: usize = 5;

/// Shell script run by the watchdog process: waits for the test process
/// (`$1`) to disappear, then kills the `mongod` processes listed in
/// `$2/pids` (only if their command line still mentions `$2`, to be safe
/// against pid reuse) and removes `$2`.
const WATCHDOG_SCRIPT: &str = r#"
parent=$1
root=$2
alive() {
    kill -0 "$parent" 2>/dev/null || return 1
    if [ -r "/proc/$parent/stat" ]; then
        read -r stat < "/proc/$parent/stat" 2>/dev/null || return 1
        state=${stat##*') '}
        state=${state%% *}
        [ "$state" = Z ] && return 1
    fi
    return 0
}
while alive; do sleep 1; done
[ -d "$root" ] || exit 0
if [ -f "$root/pids" ]; then
    for pid in $(cat "$root/pids"); do
        if [ -d /proc ]; then
            [ -r "/proc/$pid/cmdline" ] || continue
            tr '\000' '\n' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$root" || continue
        fi
        kill -9 "$pid" 2>/dev/null
    done
fi
for attempt in 1 2 3 4 5; do
    rm -rf "$root" 2>/dev/null
    [ -d "$root" ] || exit 0
    sleep 1
done
"#;

/// One `mongod` process of a deployment started by this crate.
#[derive(Debug)]
pub struct Node {
    index: usize,
    port: AtomicU16,
    dbpath: PathBuf,
    child: Mutex<Option<Child>>,
}

impl Node {
    /// Position of this node in [`TestServer::nodes`](crate::TestServer::nodes)
    /// (also its member `_id` in the replica set configuration).
    pub fn index(&self) -> usize {
        self.index
    }

    /// TCP port the node listens on (always on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port.load(Ordering::SeqCst)
    }

    /// The node's address as it appears in the replica set configuration,
    /// e.g. `127.0.0.1:40123`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port())
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
}

/// The processes and directories of a deployment started by this crate.
#[derive(Debug)]
pub(crate) struct Deployment {
    root: PathBuf,
    set_name: String,
    standalone: bool,
    binary: PathBuf,
    extra_args: Vec<String>,
    pub(crate) nodes: Vec<Node>,
    stopped: AtomicBool,
    watchdog: Mutex<Option<Child>>,
    pids_file: Mutex<()>,
}

enum StartFailure {
    AddressInUse(String),
    Failed(ProvisionError),
}

/// What a `hello` says about a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeState {
    Down,
    Primary,
    Secondary,
    Other,
}

impl Deployment {
    /// Creates the directories, picks ports, starts the watchdog and
    /// registers the deployment for cleanup at exit. Starts no `mongod`.
    pub(crate) fn create(
        opts: &ServerOptions,
        binary: PathBuf,
    ) -> Result<Arc<Deployment>, ProvisionError> {
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
            nodes.push(Node {
                index,
                port: AtomicU16::new(port),
                dbpath,
                child: Mutex::new(None),
            });
        }

        let watchdog =
            spawn_watchdog(&root).map_err(|e| fail("cannot start the watchdog (/bin/sh)", e))?;
        let deployment = Arc::new(Deployment {
            root,
            set_name: opts.replica_set_name.clone(),
            standalone: opts.standalone,
            binary,
            extra_args,
            nodes,
            stopped: AtomicBool::new(false),
            watchdog: Mutex::new(Some(watchdog)),
            pids_file: Mutex::new(()),
        });
        register(&deployment);
        Ok(deployment)
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

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
                        self.nodes[i].port.store(port, Ordering::SeqCst);
                        let _ = fs::remove_dir_all(&self.nodes[i].dbpath);
                        fs::create_dir(&self.nodes[i].dbpath).map_err(|e| {
                            ProvisionError::new(format!(
                                "cannot create {}: {e}",
                                self.nodes[i].dbpath.display()
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

    /// Runs `replSetInitiate` on node 0.
    pub(crate) fn initiate(
        &self,
        election_timeout: Option<Duration>,
        deadline: Instant,
    ) -> Result<(), ProvisionError> {
        let members: Vec<Document> = self
            .nodes
            .iter()
            .map(|n| doc! { "_id": n.index as i32, "host": n.host() })
            .collect();
        let mut config = doc! { "_id": self.set_name.clone(), "members": members };
        if let Some(timeout) = election_timeout {
            config.insert(
                "settings",
                doc! { "electionTimeoutMillis": timeout.as_millis() as i64 },
            );
        }
        let port = self.nodes[0].port();
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let timeout = remaining.clamp(Duration::from_secs(1), Duration::from_secs(30));
            match wire::admin_command(port, doc! { "replSetInitiate": config.clone() }, timeout) {
                Ok(_) => return Ok(()),
                Err(e) if e.contains("AlreadyInitialized") => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(ProvisionError::new(format!(
                        "replSetInitiate on 127.0.0.1:{port} failed: {e}\n{}",
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
        let port = self.nodes[0].port();
        loop {
            let states: Vec<NodeState> =
                (0..self.nodes.len()).map(|i| self.node_state(i)).collect();
            if states.contains(&NodeState::Primary) {
                return Ok(());
            }
            if states.iter().all(|s| *s == NodeState::Secondary) {
                // Fails until node 0 has heard from a majority; just retry.
                let _ = wire::admin_command(port, doc! { "replSetStepUp": 1 }, PROBE_TIMEOUT);
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
        match wire::admin_command(node.port(), doc! { "hello": 1 }, PROBE_TIMEOUT) {
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

    /// `SIGKILL`s a node and reaps it.
    pub(crate) fn kill_node(&self, i: usize) {
        let node = &self.nodes[i];
        if let Some(mut child) = lock(&node.child).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.write_pids();
    }

    /// `SIGTERM`s a node and waits for it to exit (`SIGKILL` after `grace`).
    pub(crate) fn stop_node(&self, i: usize, grace: Duration) {
        let node = &self.nodes[i];
        let Some(child) = lock(&node.child).take() else {
            return;
        };
        let mut children = vec![child];
        terminate(&mut children, grace);
        self.write_pids();
    }

    /// Starts a stopped node again with the same port and data directory.
    pub(crate) fn restart_node(&self, i: usize, deadline: Instant) -> Result<(), ProvisionError> {
        if self.stopped.load(Ordering::SeqCst) {
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
        let console_path = node.dbpath.join("console.log");
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
        let mut command = Command::new(&self.binary);
        command
            .args(["--bind_ip", "127.0.0.1", "--port", &port, "--dbpath"])
            .arg(&node.dbpath)
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
        *lock(&node.child) = Some(child);
        self.write_pids();
        Ok(())
    }

    fn wait_accepting(&self, i: usize, deadline: Instant) -> Result<(), StartFailure> {
        let node = &self.nodes[i];
        loop {
            let exited = {
                let mut guard = lock(&node.child);
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
            };
            if let Some(how) = exited {
                self.write_pids();
                let tail = self.log_tail(i);
                if tail.contains("Address already in use") {
                    return Err(StartFailure::AddressInUse(tail));
                }
                return Err(StartFailure::Failed(ProvisionError::new(format!(
                    "mongod ({}) for 127.0.0.1:{} {how} while starting; last log lines:\n{tail}",
                    self.binary.display(),
                    node.port(),
                ))));
            }
            if wire::accepts_connections(node.port(), Duration::from_millis(250)) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(StartFailure::Failed(ProvisionError::new(format!(
                    "mongod for 127.0.0.1:{} did not accept connections in time; if the \
                     machine is very busy, raise ServerOptions::startup_timeout; last log \
                     lines:\n{}",
                    node.port(),
                    self.log_tail(i)
                ))));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Last lines of a node's console output and log file.
    fn log_tail(&self, i: usize) -> String {
        let node = &self.nodes[i];
        let mut out = String::new();
        for path in [node.dbpath.join("console.log"), node.log_path()] {
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

    fn log_tails(&self) -> String {
        (0..self.nodes.len()).map(|i| self.log_tail(i)).collect()
    }

    /// Records the pids of the running nodes for the watchdog.
    fn write_pids(&self) {
        let _guard = lock(&self.pids_file);
        let pids: String = self
            .nodes
            .iter()
            .filter_map(|n| lock(&n.child).as_ref().map(|c| format!("{}\n", c.id())))
            .collect();
        let temp = self.root.join("pids.tmp");
        if fs::write(&temp, pids).is_ok() {
            let _ = fs::rename(&temp, self.root.join("pids"));
        }
    }
}

/// Stops the given deployments: `SIGTERM` to every node, a short grace
/// period, `SIGKILL` for the rest, then removes their directories and ends
/// their watchdogs. Idempotent.
pub(crate) fn shutdown_all(deployments: &[Arc<Deployment>]) {
    let deployments: Vec<&Arc<Deployment>> = deployments
        .iter()
        .filter(|d| !d.stopped.swap(true, Ordering::SeqCst))
        .collect();
    let mut children: Vec<Child> = deployments
        .iter()
        .flat_map(|d| d.nodes.iter())
        .filter_map(|n| lock(&n.child).take())
        .collect();
    terminate(&mut children, TERM_GRACE);
    for deployment in &deployments {
        remove_dir_retrying(&deployment.root);
        if let Some(mut watchdog) = lock(&deployment.watchdog).take() {
            // The watchdog leads its own process group (it ran setsid), so
            // this also ends a `sleep` it may be waiting on.
            // SAFETY: plain syscall on a pid (group) we started and have not reaped yet.
            unsafe {
                libc::kill(-(watchdog.id() as libc::pid_t), libc::SIGKILL);
            }
            let _ = watchdog.wait();
        }
    }
}

/// `SIGTERM`s the children, waits up to `grace`, then `SIGKILL`s and reaps
/// what is left.
fn terminate(children: &mut Vec<Child>, grace: Duration) {
    for child in children.iter_mut() {
        if let Ok(None) = child.try_wait() {
            // SAFETY: plain syscall on the pid of a child we have not reaped yet.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
            }
        }
    }
    let deadline = Instant::now() + grace;
    loop {
        children.retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_)) | Err(_)));
        if children.is_empty() || Instant::now() >= deadline {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    for mut child in children.drain(..) {
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn remove_dir_retrying(dir: &Path) {
    for _ in 0..10 {
        match fs::remove_dir_all(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) => thread::sleep(Duration::from_millis(50)),
        }
    }
}

fn spawn_watchdog(root: &Path) -> io::Result<Child> {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(WATCHDOG_SCRIPT)
        .arg("mongo-sequence-watchdog")
        .arg(std::process::id().to_string())
        .arg(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn()
}

fn create_root_dir() -> Result<PathBuf, ProvisionError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut last_error = None;
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!(
            "mongo-sequence-{}-{n}-{stamp:08x}",
            std::process::id()
        ));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => {
                last_error = Some(e);
                break;
            }
        }
    }
    Err(ProvisionError::new(format!(
        "cannot create a directory under {} for mongod: {}; set TMPDIR to a writable directory",
        base.display(),
        last_error.map(|e| e.to_string()).unwrap_or_default()
    )))
}

/// Picks a port that is free on 127.0.0.1 and that this process has not
/// handed out before.
fn pick_port() -> io::Result<u16> {
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

fn tail_lines(path: &Path, n: usize) -> String {
    let Ok(text) = fs::read(path) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].iter().map(|l| format!("{l}\n")).collect()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ---------------------------------------------------------------------------
// Cleanup at process exit.

static REGISTRY: Mutex<Vec<Arc<Deployment>>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

fn register(deployment: &Arc<Deployment>) {
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function without arguments.
        unsafe {
            libc::atexit(cleanup_at_exit);
        }
    });
    lock(&REGISTRY).push(Arc::clone(deployment));
}

/// Forgets a deployment that has been shut down.
pub(crate) fn unregister(deployment: &Arc<Deployment>) {
    lock(&REGISTRY).retain(|d| !Arc::ptr_eq(d, deployment));
}

extern "C" fn cleanup_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        // Another thread may hold the lock while the process exits; do not
        // wait for it forever (the watchdog still cleans up in that case).
        let deadline = Instant::now() + Duration::from_secs(1);
        let deployments = loop {
            match REGISTRY.try_lock() {
                Ok(mut registry) => break std::mem::take(&mut *registry),
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    break std::mem::take(&mut *p.into_inner())
                }
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(10));
                }
                Err(std::sync::TryLockError::WouldBlock) => return,
            }
        };
        shutdown_all(&deployments);
    });
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

    #[test]
    fn root_dirs_are_unique() {
        let a = create_root_dir().unwrap();
        let b = create_root_dir().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(std::env::temp_dir()));
        fs::remove_dir_all(a).unwrap();
        fs::remove_dir_all(b).unwrap();
    }

    #[test]
    fn tail_keeps_last_lines() {
        let dir = create_root_dir().unwrap();
        let path = dir.join("log");
        fs::write(&path, "a\nb\nc\nd\n").unwrap();
        assert_eq!(tail_lines(&path, 2), "c\nd\n");
        assert_eq!(tail_lines(&dir.join("missing"), 2), "");
        fs::remove_dir_all(dir).unwrap();
    }
}
