//! The progress display of long commands, on a pseudo-terminal: a spinner saying what the
//! command reads and for how long, and a last line with the count and the rate; nothing of it
//! when stderr is piped or with `--json`.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Output, Stdio};

use mongodb::bson::{doc, Document};

use crate::support::{cli, command, fresh_database, stderr};

/// Runs the command line with `args`, its stderr on a pseudo-terminal: its output, and what
/// the terminal received.
fn on_terminal(args: &[&str]) -> (Output, String) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: `openpty` writes two new descriptors, owned below, and reads no other argument.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "a pseudo-terminal opens");
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let child = command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()
        .expect("the command line runs");
    let reader = std::thread::spawn(move || {
        let mut master = master;
        let mut seen = Vec::new();
        let mut buf = [0_u8; 4096];
        // The read fails (EIO) once the child, the last holder of the other side, exits.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    });
    let out = child.wait_with_output().unwrap();
    let seen = reader.join().unwrap();
    (out, String::from_utf8_lossy(&seen).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_commands_show_their_progress_on_a_terminal_only() {
    let (db, database) = fresh_database("cli_progress").await;
    let docs: Vec<Document> = (1..=20_000_i64).map(|n| doc! { "_id": n }).collect();
    database
        .collection::<Document>("big")
        .insert_many(docs)
        .await
        .unwrap();
    let target = format!("{db}.big");
    let args = ["check", &target, "--field", "_id"];
    let (out, terminal) = on_terminal(&args);
    assert_eq!(
        out.status.code(),
        Some(3),
        "unclaimed documents: {terminal}"
    );
    assert!(
        terminal.contains(&format!("checking `{target}`: about 20000 documents")),
        "the spinner: {terminal:?}"
    );
    // The spinner's line is redrawn in place (`\r`, erase line); the last line follows it.
    let last = terminal
        .rsplit("\u{1b}[2K")
        .next()
        .unwrap_or_default()
        .trim_end();
    assert!(
        last.starts_with("checked about 20000 documents in ") && last.ends_with(" documents/s)"),
        "the last line: {terminal:?}"
    );
    // Piped, and with `--json` on a terminal, nothing of it.
    let piped = cli(&args);
    assert_eq!(stderr(&piped), "", "piped: {}", stderr(&piped));
    let (_, json) = on_terminal(&[&args[..], &["--json"]].concat());
    assert!(!json.contains("checked about"), "with --json: {json:?}");

    let (out, terminal) = on_terminal(&["sync", &target, "--name", "big", "--create", "--dry-run"]);
    assert!(out.status.success(), "{terminal}");
    assert!(
        terminal.contains("read about 20000 documents in "),
        "sync: {terminal:?}"
    );
}
