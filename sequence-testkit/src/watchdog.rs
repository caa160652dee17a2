//! The watchdog of a server (or a network) started by this crate: a small
//! `sh` process that stops the server's `mongod` processes, runs the
//! directory's cleanup script if it has one, and deletes the directory if
//! the process that started them dies without doing so.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Shell script run by the watchdog process: waits for the test process
/// (`$1`) to disappear, then kills the `mongod` processes listed in
/// `$2/pids` (only if their command line still mentions `$2`, to be safe
/// against pid reuse), runs `$2/cleanup` if there is one, and removes `$2`.
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
[ -f "$root/cleanup" ] && /bin/sh "$root/cleanup"
for attempt in 1 2 3 4 5; do
    rm -rf "$root" 2>/dev/null
    [ -d "$root" ] || exit 0
    sleep 1
done
"#;

/// Starts the watchdog for the server whose directory is `root`, in a
/// process group of its own.
pub(crate) fn spawn(root: &Path) -> io::Result<Child> {
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

/// Ends a watchdog that is no longer needed and reaps it.
pub(crate) fn end(mut watchdog: Child) {
    // The watchdog leads its own process group (it ran setsid), so
    // this also ends a `sleep` it may be waiting on.
    // SAFETY: plain syscall on a pid (group) we started and have not reaped yet.
    unsafe {
        libc::kill(-(watchdog.id() as libc::pid_t), libc::SIGKILL);
    }
    let _ = watchdog.wait();
}
