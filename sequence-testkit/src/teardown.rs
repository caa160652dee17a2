//! Stopping servers started by this crate: ending their `mongod` processes
//! and watchdogs and deleting their directories, when a server is dropped
//! and, for the servers still running, at process exit.

use std::fs;
use std::io;
use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex, Once};
use std::thread;
use std::time::{Duration, Instant};

use crate::managed_server::ManagedServer;
use crate::mutex::lock;
use crate::watchdog;

/// How long stopping waits for `mongod` to exit after `SIGTERM` before it
/// sends `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// Stops a server, deletes its directory and forgets it. Idempotent.
pub(crate) fn shut_down(server: &Arc<ManagedServer>) {
    shutdown_all(std::slice::from_ref(server));
    unregister(server);
}

/// Stops the given deployments: `SIGTERM` to every node, a short grace
/// period, `SIGKILL` for the rest, then removes their directories and ends
/// their watchdogs. Idempotent.
fn shutdown_all(servers: &[Arc<ManagedServer>]) {
    let servers: Vec<&Arc<ManagedServer>> = servers.iter().filter(|s| s.mark_stopped()).collect();
    let mut children: Vec<Child> = servers
        .iter()
        .flat_map(|s| s.nodes.iter())
        .filter_map(|n| n.take_child())
        .collect();
    terminate(&mut children, TERM_GRACE);
    for server in &servers {
        remove_dir_retrying(server.root());
        if let Some(watchdog) = server.take_watchdog() {
            watchdog::end(watchdog);
        }
    }
}

/// `SIGTERM`s the children, waits up to `grace`, then `SIGKILL`s and reaps
/// what is left.
pub(crate) fn terminate(children: &mut Vec<Child>, grace: Duration) {
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

// ---------------------------------------------------------------------------
// Cleanup at process exit.

static REGISTRY: Mutex<Vec<Arc<ManagedServer>>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// Registers a server for cleanup at exit.
pub(crate) fn register(server: &Arc<ManagedServer>) {
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function without arguments.
        unsafe {
            libc::atexit(cleanup_at_exit);
        }
    });
    lock(&REGISTRY).push(Arc::clone(server));
}

/// Forgets a deployment that has been shut down.
fn unregister(server: &Arc<ManagedServer>) {
    lock(&REGISTRY).retain(|s| !Arc::ptr_eq(s, server));
}

extern "C" fn cleanup_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        // Another thread may hold the lock while the process exits; do not
        // wait for it forever (the watchdog still cleans up in that case).
        let deadline = Instant::now() + Duration::from_secs(1);
        let servers = loop {
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
        shutdown_all(&servers);
    });
}
