//! What the reliability suite (`reliability_*.rs`) shares: error classification and the count
//! of unconfirmed counter updates (fail points, counter reads and the shared models are in
//! `common`).

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};

use mongo_sequence::Error;
use mongodb::bson::Bson;
use mongodb::event::command::CommandEvent;

/// A short name for the kind of an error, for summaries and assertions.
pub fn kind(e: &Error) -> String {
    match e {
        Error::Mongo(m) => match &*m.kind {
            mongodb::error::ErrorKind::Io(_) => "mongo:io".into(),
            mongodb::error::ErrorKind::ServerSelection { .. } => "mongo:server-selection".into(),
            mongodb::error::ErrorKind::ConnectionPoolCleared { .. } => "mongo:pool-cleared".into(),
            mongodb::error::ErrorKind::Command(c) => format!("mongo:command:{}", c.code),
            mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteConcernError(
                w,
            )) => format!("mongo:write-concern:{}", w.code),
            mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(w)) => {
                format!("mongo:write:{}", w.code)
            }
            _ => "mongo:other".into(),
        },
        Error::DuplicateKey { .. } => "duplicate-key".into(),
        Error::Exhausted { .. } => "exhausted".into(),
        Error::CorruptCounter { .. } => "corrupt-counter".into(),
        Error::IdOutOfRange { .. } => "id-out-of-range".into(),
        other => format!("other:{other}"),
    }
}

/// Counts per kind, for summary lines: `io=3,command:91=2`.
pub fn tally(kinds: &[String]) -> String {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for k in kinds {
        *counts.entry(k.as_str()).or_default() += 1;
    }
    if counts.is_empty() {
        return "none".into();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k}={n}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Counter updates whose outcome the client did not see confirmed (failed, or answered with a
/// write concern error), per counter: each may have consumed the values it reserved without
/// handing them out. Counts those values, and every command the client sent, by name (each
/// one a chance for a fail point on it to fire).
#[derive(Clone, Default)]
pub struct Unconfirmed {
    started: Arc<StdMutex<HashMap<i32, (String, i64)>>>,
    counts: Arc<StdMutex<HashMap<String, i64>>>,
    sent: Arc<StdMutex<HashMap<String, i64>>>,
}

/// How many values a counter update reserves: the `n` of its `{ $add: [v, n] }`.
fn reserved_by(update: &Bson) -> Option<i64> {
    match update {
        Bson::Document(d) => d.iter().find_map(|(k, v)| match (k.as_str(), v) {
            ("$add", Bson::Array(a)) => a.get(1).and_then(Bson::as_i64),
            _ => reserved_by(v),
        }),
        Bson::Array(a) => a.iter().find_map(reserved_by),
        _ => None,
    }
}

impl Unconfirmed {
    pub fn of(&self, counter: &str) -> i64 {
        self.counts
            .lock()
            .unwrap()
            .get(counter)
            .copied()
            .unwrap_or(0)
    }

    /// How many of `commands` the client sent (retries included).
    pub fn sent(&self, commands: &[&str]) -> i64 {
        let sent = self.sent.lock().unwrap();
        commands.iter().filter_map(|c| sent.get(*c)).sum()
    }

    pub fn observe(&self, event: CommandEvent) {
        if let CommandEvent::Started(e) = &event {
            *self
                .sent
                .lock()
                .unwrap()
                .entry(e.command_name.clone())
                .or_default() += 1;
        }
        let unconfirmed = match event {
            CommandEvent::Started(e) if e.command_name == "findAndModify" => {
                let counter = e
                    .command
                    .get_document("query")
                    .ok()
                    .and_then(|q| q.get_str("_id").ok())
                    .unwrap_or_default()
                    .to_owned();
                let n = e.command.get("update").and_then(reserved_by).unwrap_or(1);
                self.started
                    .lock()
                    .unwrap()
                    .insert(e.request_id, (counter, n));
                return;
            }
            CommandEvent::Succeeded(e) if e.command_name == "findAndModify" => {
                let counter = self.started.lock().unwrap().remove(&e.request_id);
                counter.filter(|_| e.reply.contains_key("writeConcernError"))
            }
            CommandEvent::Failed(e) if e.command_name == "findAndModify" => {
                self.started.lock().unwrap().remove(&e.request_id)
            }
            _ => None,
        };
        if let Some((counter, n)) = unconfirmed {
            *self.counts.lock().unwrap().entry(counter).or_default() += n;
        }
    }
}
