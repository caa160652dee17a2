//! Which deployment a client talks to, so that the state a process keeps per counter (cached
//! ranges, coalesced reservations, full shards, created indexes) is kept per deployment: two
//! deployments with a database of the same name (a migration, a blue/green switch) each get
//! their own, and the IDs inserted into each are covered by its own counter.
//!
//! The driver gives a `Client` no public identity: its only field is private, and its public
//! getters return either owned values or options that are unset by default. What it does show
//! is its `Debug` output, whose `options: ClientOptions { .. }` part holds the connection
//! options it was built with (seed list, replica set name, TLS, credentials with the password
//! redacted, ...): fixed for the client's life and equal for clients built from the same
//! connection string. The identity of a deployment here is a hash of that part. Two clients of
//! one deployment built with different options get different identities, and so each a cache
//! of its own, as two processes do: safe, only less shared.
//!
//! Formatting a connected client takes about 16 µs, so each thread remembers the identity of the
//! last handles (databases, collections) it saw, by address. A remembered handle is held (a
//! clone), so that its address cannot be reused by another handle while it is remembered.

use std::any::Any;
use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::hash::{DefaultHasher, Hasher};
use std::sync::Once;

use mongodb::{Client, Collection, Database};

use crate::observability::STORE;

/// The identity of the deployment a client talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Deployment(u64);

impl fmt::Display for Deployment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// How many handles each thread remembers.
const REMEMBERED: usize = 8;

/// A handle seen: the address of its client field, a clone that keeps that address its own,
/// and its deployment.
type Seen = (usize, Box<dyn Any>, Deployment);

thread_local! {
    /// The handles whose deployment this thread looked up last. Most recently used last.
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

impl Deployment {
    /// The identity of no deployment in particular: that of clients whose options cannot be
    /// read, and of stores outside MongoDB.
    const NONE: Deployment = Deployment(0);

    /// The deployment of the client `db` belongs to.
    pub(crate) fn of_database(db: &Database) -> Self {
        remembered(db.client(), || Box::new(db.clone()))
    }

    /// The deployment of the client `coll` belongs to.
    pub(crate) fn of_collection<T: Send + Sync + 'static>(coll: &Collection<T>) -> Self {
        remembered(coll.client(), || Box::new(coll.clone()))
    }

    /// The address of a handle's client field, which tells the handle (a database or a
    /// collection, and its clones) apart from other handles while it lives: each handle made by
    /// `database` or `collection` holds a client of its own; clones of it share that one.
    pub(crate) fn handle_address(client: &Client) -> usize {
        std::ptr::from_ref(client) as usize
    }

    /// The deployment of `client`, from its connection options.
    fn of_client(client: &Client) -> Self {
        let mut scan = OptionsScan::default();
        // The scan stops the formatting once it has passed the options.
        let _ = write!(scan, "{client:?}");
        match scan.finish() {
            Some(hash) => Deployment(hash),
            None => {
                static WARNED: Once = Once::new();
                WARNED.call_once(|| {
                    tracing::warn!(
                        target: STORE,
                        consequence = "per-process counter caches are kept per database name \
                                       only, so two deployments with a database of the same \
                                       name must not be used from one process",
                        "Client options unreadable"
                    );
                });
                Deployment::NONE
            }
        }
    }
}

/// The deployment of `client`, remembered by the address of the handle field it is read from
/// (`keep` makes the clone that keeps that address).
fn remembered(client: &Client, keep: impl FnOnce() -> Box<dyn Any>) -> Deployment {
    let address = Deployment::handle_address(client);
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if let Some(i) = seen.iter().rposition(|(a, _, _)| *a == address) {
            let last = seen.len() - 1;
            seen.swap(i, last);
            return seen[last].2;
        }
        let deployment = Deployment::of_client(client);
        if seen.len() == REMEMBERED {
            seen.remove(0);
        }
        seen.push((address, keep(), deployment));
        deployment
    })
}

/// Hashes the `options: ClientOptions { .. }` part of a `Debug` output written into it, and
/// stops the writing after it.
#[derive(Default)]
struct OptionsScan {
    /// What was written since the last `options:` candidate could start (for a marker split
    /// across writes).
    tail: String,
    hasher: DefaultHasher,
    /// Inside the options: the depth of braces, and whether inside a string (and after a
    /// backslash in it).
    depth: Option<u32>,
    in_string: bool,
    escaped: bool,
    done: bool,
}

const MARKER: &str = "options: ClientOptions {";

impl OptionsScan {
    fn finish(self) -> Option<u64> {
        self.done.then(|| self.hasher.finish())
    }

    /// Feeds `s`, from inside the options, to the hasher; stops the writing once their
    /// closing brace is passed.
    fn feed(&mut self, s: &str) -> fmt::Result {
        if self.inside(s) {
            self.done = true;
            return Err(fmt::Error);
        }
        Ok(())
    }

    /// Feeds `s`, from inside the options, to the hasher; true once their closing brace is
    /// passed.
    fn inside(&mut self, s: &str) -> bool {
        let depth = self.depth.as_mut().expect("inside the options");
        for (i, c) in s.char_indices() {
            if self.in_string {
                match (self.escaped, c) {
                    (true, _) => self.escaped = false,
                    (false, '\\') => self.escaped = true,
                    (false, '"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '{' => *depth += 1,
                '}' => {
                    *depth -= 1;
                    if *depth == 0 {
                        self.hasher.write(&s.as_bytes()[..i]);
                        return true;
                    }
                }
                _ => {}
            }
        }
        self.hasher.write(s.as_bytes());
        false
    }
}

impl fmt::Write for OptionsScan {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.done {
            return Err(fmt::Error);
        }
        if self.depth.is_none() {
            self.tail.push_str(s);
            let Some(at) = self.tail.find(MARKER) else {
                // Keep what could be the start of a marker split across writes.
                let cut = (self.tail.len().saturating_sub(MARKER.len())..=self.tail.len())
                    .find(|&i| self.tail.is_char_boundary(i))
                    .unwrap_or(self.tail.len());
                self.tail.drain(..cut);
                return Ok(());
            };
            self.depth = Some(1);
            let rest = self.tail.split_off(at + MARKER.len());
            self.tail.clear();
            return self.feed(&rest);
        }
        self.feed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(parts: &[&str]) -> Option<u64> {
        let mut scan = OptionsScan::default();
        for p in parts {
            if scan.write_str(p).is_err() {
                break;
            }
        }
        scan.finish()
    }

    const A: &str = r#"Client { inner: X { topology: T { servers: {a: 1} }, options: ClientOptions { hosts: [Tcp { host: "a", port: Some(1) }], repl_set_name: Some("r}s"), .. }, session_pool: P { data: [] } } }"#;

    #[test]
    fn the_options_part_is_hashed_however_it_is_written() {
        let whole = scan(&[A]).expect("found");
        let pieces: Vec<String> = A.chars().map(String::from).collect();
        let one_by_one: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(scan(&one_by_one), Some(whole));
        // What surrounds the options does not count.
        let other_state = A
            .replace("servers: {a: 1}", "servers: {}")
            .replace("data: []", "x");
        assert_eq!(scan(&[&other_state]), Some(whole));
        // The options do, braces inside strings included.
        assert_ne!(
            scan(&[&A.replace("port: Some(1)", "port: Some(2)")]),
            Some(whole)
        );
        assert_ne!(scan(&[&A.replace("r}s", "r}t")]), Some(whole));
        assert_eq!(scan(&["Client { no options }"]), None);
    }

    #[tokio::test]
    async fn clients_of_one_connection_string_share_a_deployment() {
        let uri = "mongodb://127.0.0.1:1,127.0.0.1:2/?replicaSet=rs0&serverSelectionTimeoutMS=10";
        let a = Client::with_uri_str(uri).await.unwrap();
        let b = Client::with_uri_str(uri).await.unwrap();
        let c = Client::with_uri_str(uri.replace(":2/", ":3/"))
            .await
            .unwrap();
        let (da, db, dc) = (
            Deployment::of_client(&a),
            Deployment::of_client(&b),
            Deployment::of_client(&c),
        );
        assert_ne!(da, Deployment::NONE, "the options are found");
        assert_eq!(da, db);
        assert_ne!(da, dc);
        // Handles are remembered, and stay theirs.
        let coll = a.database("x").collection::<mongodb::bson::Document>("y");
        assert_eq!(Deployment::of_collection(&coll), da);
        assert_eq!(Deployment::of_collection(&coll.clone()), da);
        assert_eq!(Deployment::of_database(&c.database("x")), dc);
    }
}
