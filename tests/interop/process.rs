//! A writer process of a round, foreign or this crate's, driven through the protocol of
//! `node/protocol.js`: `ready` once its first document is saved, a line on stdin to start the
//! rest, `done <count>` at the end.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a writer may take to save its first document (a cold Node start included).
const READY_WITHIN: Duration = Duration::from_secs(90);
/// How long a writer may take for the rest.
const DONE_WITHIN: Duration = Duration::from_secs(120);

/// A running writer; killed if dropped before it exits.
pub struct Writer {
    tag: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stdout: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

impl Writer {
    /// Starts `command` as the writer tagged `tag`.
    pub fn spawn(tag: &str, mut command: Command) -> Writer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the writer {tag} ({command:?}): {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("piped stderr");
        let sink = stderr.clone();
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            sink.lock().unwrap().push_str(&text);
        });
        Writer {
            tag: tag.to_owned(),
            child,
            stdin,
            lines,
            stdout: Vec::new(),
            stderr,
        }
    }

    /// Waits until the writer saved its first document.
    pub fn ready(&mut self) {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == "ready" => return,
                Ok(line) => self.stdout.push(line),
                Err(RecvTimeoutError::Timeout) => self.fail("was not ready in time"),
                Err(RecvTimeoutError::Disconnected) => self.fail("exited before it was ready"),
            }
        }
    }

    /// Lets the writer save the rest of its documents.
    pub fn go(&mut self) {
        let mut stdin = self.stdin.take().expect("started once");
        if writeln!(stdin, "go").and_then(|()| stdin.flush()).is_err() {
            self.fail("could not be started");
        }
    }

    /// Waits for the writer to exit, checks that it succeeded and saved `count` documents, and
    /// returns what else it printed.
    pub fn finish(mut self, count: usize) -> Vec<String> {
        let deadline = Instant::now() + DONE_WITHIN;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                Ok(None) => self.fail("did not finish in time"),
                Err(e) => self.fail(&format!("could not be waited for: {e}")),
            }
        };
        self.stdout.extend(self.lines.try_iter());
        // The stdout reader ends with the pipe; take what it read last.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stdout.push(line);
        }
        if !status.success() {
            self.fail(&format!("failed ({status})"));
        }
        let done = format!("done {count}");
        if !self.stdout.contains(&done) {
            self.fail(&format!("did not report `{done}`"));
        }
        std::mem::take(&mut self.stdout)
    }

    fn fail(&mut self, what: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        thread::sleep(Duration::from_millis(100));
        panic!(
            "the writer {} {what}\n--- stdout\n{}\n--- stderr\n{}",
            self.tag,
            self.stdout.join("\n"),
            self.stderr.lock().unwrap()
        );
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
