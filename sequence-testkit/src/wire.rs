//! A minimal, blocking client for the MongoDB wire protocol (`OP_MSG`).
//!
//! Provisioning only needs to send a handful of admin commands (`hello`,
//! `replSetInitiate`) to a single node. Doing that over a plain
//! [`TcpStream`] keeps provisioning free of any async runtime, so it can be
//! called from synchronous code and from inside any tokio runtime alike.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use mongodb::bson::{Bson, Document};

const OP_MSG: i32 = 2013;
const CHECKSUM_PRESENT: u32 = 1;
const MAX_MESSAGE_LEN: usize = 48 * 1024 * 1024;

static REQUEST_ID: AtomicI32 = AtomicI32::new(1);

/// Runs `command` against the `admin` database of the node listening on
/// `address` and returns the reply document when it has `ok: 1`.
///
/// A reply with `ok: 0` is reported as an error carrying the server's
/// `codeName` and `errmsg`.
pub(crate) fn admin_command(
    address: SocketAddr,
    command: Document,
    timeout: Duration,
) -> Result<Document, String> {
    let reply = raw_command(address, command, timeout)?;
    if is_ok(&reply) {
        Ok(reply)
    } else {
        Err(format!(
            "{} ({}): {}",
            reply.get_str("codeName").unwrap_or("UnknownError"),
            reply
                .get("code")
                .map(|c| c.to_string())
                .unwrap_or_else(|| "?".into()),
            reply.get_str("errmsg").unwrap_or("no error message")
        ))
    }
}

/// Whether `address` accepts TCP connections right now.
pub(crate) fn accepts_connections(address: SocketAddr, timeout: Duration) -> bool {
    TcpStream::connect_timeout(&address, timeout).is_ok()
}

/// Whether a reply document reports success (`ok: 1`).
pub(crate) fn is_ok(reply: &Document) -> bool {
    match reply.get("ok") {
        Some(Bson::Double(v)) => *v == 1.0,
        Some(Bson::Int32(v)) => *v == 1,
        Some(Bson::Int64(v)) => *v == 1,
        Some(Bson::Boolean(v)) => *v,
        _ => false,
    }
}

fn raw_command(
    address: SocketAddr,
    mut command: Document,
    timeout: Duration,
) -> Result<Document, String> {
    command.insert("$db", "admin");
    let mut body = Vec::new();
    command
        .to_writer(&mut body)
        .map_err(|e| format!("cannot encode command: {e}"))?;

    let request_id = REQUEST_ID.fetch_add(1, Ordering::Relaxed);
    let total = 16 + 4 + 1 + body.len();
    let mut message = Vec::with_capacity(total);
    message.extend_from_slice(&(total as i32).to_le_bytes());
    message.extend_from_slice(&request_id.to_le_bytes());
    message.extend_from_slice(&0i32.to_le_bytes());
    message.extend_from_slice(&OP_MSG.to_le_bytes());
    message.extend_from_slice(&0u32.to_le_bytes());
    message.push(0);
    message.extend_from_slice(&body);

    let io = |e: std::io::Error| format!("{address}: {e}");
    let mut stream = TcpStream::connect_timeout(&address, timeout).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    stream.set_nodelay(true).map_err(io)?;
    stream.write_all(&message).map_err(io)?;

    let mut header = [0u8; 16];
    stream.read_exact(&mut header).map_err(io)?;
    let len = i32::from_le_bytes(header[0..4].try_into().expect("4 bytes")) as usize;
    let response_to = i32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
    let op_code = i32::from_le_bytes(header[12..16].try_into().expect("4 bytes"));
    if !(16 + 5..=MAX_MESSAGE_LEN).contains(&len) {
        return Err(format!("{address}: invalid reply length {len}"));
    }
    if op_code != OP_MSG || response_to != request_id {
        return Err(format!(
            "{address}: unexpected reply (opCode {op_code}, responseTo {response_to})"
        ));
    }
    let mut rest = vec![0u8; len - 16];
    stream.read_exact(&mut rest).map_err(io)?;
    let flags = u32::from_le_bytes(rest[0..4].try_into().expect("4 bytes"));
    let mut sections = &rest[4..];
    if flags & CHECKSUM_PRESENT != 0 {
        sections = &sections[..sections.len().saturating_sub(4)];
    }
    match sections.first() {
        Some(0) => Document::from_reader(&sections[1..])
            .map_err(|e| format!("{address}: cannot decode reply: {e}")),
        _ => Err(format!("{address}: reply without a body section")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::doc;
    use std::net::Ipv4Addr;

    #[test]
    fn ok_field_variants() {
        assert!(is_ok(&doc! { "ok": 1.0 }));
        assert!(is_ok(&doc! { "ok": 1 }));
        assert!(is_ok(&doc! { "ok": 1_i64 }));
        assert!(!is_ok(&doc! { "ok": 0.0 }));
        assert!(!is_ok(&doc! {}));
    }

    #[test]
    fn closed_port_is_an_error() {
        // Bind and drop to get a port that is (almost certainly) closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        assert!(!accepts_connections(address, Duration::from_millis(200)));
        let err =
            admin_command(address, doc! { "hello": 1 }, Duration::from_millis(200)).unwrap_err();
        assert!(err.contains(&port.to_string()), "{err}");
    }
}
