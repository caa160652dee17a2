//! Starts real `mongod` servers and checks what the test kit promises:
//! a working shared replica set, failover on a 3-node set, `--auth` with the
//! localhost exception, and cleanup when the process exits or is killed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use mongodb::bson::{doc, Document};
use mongodb::options::WriteConcern;
use mongodb::Client;
use sequence_testkit::{unique_db_name, ServerOptions, TestServer};

async fn hello(uri: &str) -> Document {
    let client = Client::with_uri_str(uri).await.unwrap();
    client
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .await
        .unwrap()
}

#[tokio::test]
async fn shared_server_reads_and_writes() {
    let server = TestServer::shared_or_panic();
    if std::env::var_os("MONGODB_URI").is_none() {
        assert!(server.is_managed());
        assert_eq!(server.nodes().len(), 1);
        assert!(
            server.uri().ends_with("/?replicaSet=rs0"),
            "{}",
            server.uri()
        );
        let node = &server.nodes()[0];
        assert!(node.is_running());
        assert!(server.dir().unwrap().is_dir());
    }

    let client = server.client().await;
    let db = client.database(&unique_db_name("shared_server_reads_and_writes"));
    let coll = db.collection::<Document>("items");
    coll.insert_one(doc! { "_id": 1, "name": "first" })
        .await
        .unwrap();
    let found = coll.find_one(doc! { "_id": 1 }).await.unwrap().unwrap();
    assert_eq!(found.get_str("name").unwrap(), "first");

    let reply = db.run_command(doc! { "hello": 1 }).await.unwrap();
    assert!(reply.get_bool("isWritablePrimary").unwrap(), "{reply}");
    if server.is_managed() {
        assert_eq!(reply.get_str("setName").unwrap(), "rs0");
    } else {
        assert!(
            reply.get_str("setName").is_ok(),
            "MONGODB_URI must be a replica set"
        );
    }
    db.drop().await.unwrap();
}

#[tokio::test]
async fn shared_is_one_server_for_all_threads() {
    let handles: Vec<_> = (0..4)
        .map(|_| thread::spawn(|| TestServer::shared().unwrap() as *const TestServer as usize))
        .collect();
    let addresses: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mine = TestServer::shared_or_panic() as *const TestServer as usize;
    assert!(addresses.iter().all(|a| *a == mine));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_node_set_fails_over_and_recovers() {
    let server = TestServer::start(
        ServerOptions::default()
            .nodes(3)
            .replica_set_name("rs_failover")
            .election_timeout(Duration::from_secs(2)),
    )
    .unwrap();
    assert!(server.is_managed());
    assert_eq!(server.nodes().len(), 3);
    let hosts: Vec<String> = server.nodes().iter().map(|n| n.host()).collect();
    assert_eq!(
        server.uri(),
        format!("mongodb://{}/?replicaSet=rs_failover", hosts.join(","))
    );

    let mut primaries = 0;
    let mut secondaries = 0;
    for node in server.nodes() {
        let reply = hello(&node.direct_uri()).await;
        assert_eq!(reply.get_str("setName").unwrap(), "rs_failover");
        if reply.get_bool("isWritablePrimary").unwrap() {
            primaries += 1;
        }
        if reply.get_bool("secondary").unwrap() {
            secondaries += 1;
        }
    }
    assert_eq!((primaries, secondaries), (1, 2));

    let client = server.client().await;
    let coll = client
        .database(&unique_db_name("failover"))
        .collection::<Document>("items");
    coll.insert_one(doc! { "_id": 1 })
        .with_options(
            mongodb::options::InsertOneOptions::builder()
                .write_concern(WriteConcern::majority())
                .build(),
        )
        .await
        .unwrap();

    let old = server.primary().expect("a primary");
    let old_pid = server.nodes()[old].pid().unwrap();
    server.kill_node(old);
    assert!(!server.nodes()[old].is_running());
    assert!(!pid_alive(old_pid));

    let srv = &server;
    let new =
        tokio::task::block_in_place(|| srv.wait_for_primary(Duration::from_secs(30))).unwrap();
    assert_ne!(new, old);
    coll.insert_one(doc! { "_id": 2 }).await.unwrap();

    tokio::task::block_in_place(|| srv.restart_node(old)).unwrap();
    assert!(server.nodes()[old].is_running());
    tokio::task::block_in_place(|| srv.wait_until_ready(Duration::from_secs(60))).unwrap();
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 2);
    drop(client);

    let dir = server.dir().unwrap().to_path_buf();
    let pids: Vec<u32> = server.nodes().iter().filter_map(|n| n.pid()).collect();
    assert_eq!(pids.len(), 3);
    tokio::task::block_in_place(|| server.stop());
    assert!(!dir.exists(), "{} still exists", dir.display());
    for pid in pids {
        assert!(!pid_alive(pid), "mongod {pid} still running");
    }
}

#[tokio::test]
async fn auth_server_allows_first_user_via_localhost_exception() {
    let server = TestServer::start(ServerOptions::default().arg("--auth")).unwrap();
    let key_file = server.dir().unwrap().join("keyfile");
    assert!(key_file.is_file());

    let anonymous = server.client().await;
    let authenticated = server.create_root_user("app", "s3cret:/@").await;

    // The localhost exception is closed now: unauthenticated writes fail.
    let err = anonymous
        .database("app_db")
        .collection::<Document>("items")
        .insert_one(doc! { "x": 1 })
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("requires authentication")
            || err.to_string().contains("Unauthorized"),
        "{err}"
    );

    let coll = authenticated
        .database("app_db")
        .collection::<Document>("items");
    coll.insert_one(doc! { "x": 1 }).await.unwrap();
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 1);
}

// ---------------------------------------------------------------------------
// Cleanup when the process using the shared server ends.

const CHILD_MODE: &str = "SEQUENCE_TESTKIT_CHILD_MODE";
const CHILD_MARKER: &str = "SEQUENCE_TESTKIT_CHILD";

/// Runs only inside the child processes started by the tests below.
#[test]
fn child_process_entry() {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        return;
    };
    let server = TestServer::shared_or_panic();
    let node = &server.nodes()[0];
    println!(
        "{CHILD_MARKER} {} {}",
        node.pid().unwrap(),
        server.dir().unwrap().display()
    );
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    match mode.as_str() {
        "exit" => std::process::exit(0),
        "panic" => panic!("failing on purpose; the server must still be cleaned up"),
        "wait" => thread::sleep(Duration::from_secs(120)),
        other => panic!("unknown mode {other}"),
    }
}

struct ChildServer {
    child: Child,
    mongod_pid: u32,
    dir: PathBuf,
}

fn start_child(mode: &str) -> ChildServer {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_MODE, mode)
        .env_remove("MONGODB_URI")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // The harness may print "test child_process_entry ... " first.
            if let Some((_, rest)) = line.split_once(CHILD_MARKER) {
                let _ = tx.send(rest.trim().to_string());
            }
        }
    });
    let line = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(line) => line,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child process did not report its server: {e}");
        }
    };
    let (pid, dir) = line.split_once(' ').unwrap();
    ChildServer {
        child,
        mongod_pid: pid.parse().unwrap(),
        dir: PathBuf::from(dir),
    }
}

fn wait_exit(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child process did not exit in time");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a live (non-zombie) process.
fn pid_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    if unsafe { libc::kill(pid as libc::pid_t, 0) } != 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Live processes whose command line mentions `dir` (the `mongod` nodes and
/// the watchdog of that server).
fn processes_mentioning(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&needle) && pid_alive(pid) {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

fn assert_cleaned_up(server: &ChildServer, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let mongod_alive = pid_alive(server.mongod_pid);
        let dir_exists = server.dir.exists();
        let leftovers = processes_mentioning(&server.dir);
        if !mongod_alive && !dir_exists && leftovers.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            panic!(
                "not cleaned up after {within:?}: mongod {} alive: {mongod_alive}, {} exists: \
                 {dir_exists}, processes: {leftovers:?}",
                server.mongod_pid,
                server.dir.display()
            );
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn shared_server_is_removed_at_exit() {
    let mut server = start_child("exit");
    assert!(pid_alive(server.mongod_pid));
    assert!(server.dir.is_dir());
    let status = wait_exit(&mut server.child, Duration::from_secs(30));
    assert!(status.success(), "{status}");
    // The atexit handler has already run when the process is gone.
    assert!(!pid_alive(server.mongod_pid));
    assert!(!server.dir.exists());
    assert_cleaned_up(&server, Duration::from_secs(2));
}

#[test]
fn shared_server_is_removed_when_tests_fail() {
    let mut server = start_child("panic");
    let status = wait_exit(&mut server.child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(101), "{status}");
    assert!(!pid_alive(server.mongod_pid));
    assert!(!server.dir.exists());
    assert_cleaned_up(&server, Duration::from_secs(2));
}

#[test]
fn shared_server_is_removed_when_process_is_killed() {
    let mut server = start_child("wait");
    assert!(pid_alive(server.mongod_pid));
    // SAFETY: plain syscall on our own child.
    unsafe {
        libc::kill(server.child.id() as libc::pid_t, libc::SIGKILL);
    }
    let _ = server.child.wait();
    assert_cleaned_up(&server, Duration::from_secs(10));
}
