//! The far ends the benchmarks talk to, served by the bench binary itself
//! (re-executed with [`ROLE`] set), so `cargo bench` needs no helper built
//! beforehand:
//!
//! - `echo`: every stdin line back as it came (the transport floor);
//! - `sidecar`: a lean Extension Protocol v2 sidecar that answers
//!   `initialize` with [`INIT`] (or the built-in declaration), `continue` to
//!   every intercept and `accepted` to shutdown. Like the echo it does not
//!   parse what it does not use: it reads `id` and `method` from the head of
//!   the frame (where the host's encoder puts them) and skips the payload,
//!   so a benchmark against the echo measures the host's side of the
//!   transport, not the peer's JSON parser.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

/// Set to `echo` or `sidecar` to make the bench binary serve that role.
pub const ROLE: &str = "REASONIX_BENCH_PEER";
/// The `initialize` result the `sidecar` role answers (JSON).
pub const INIT: &str = "REASONIX_BENCH_PEER_INIT";

/// First thing in a bench's `main`: serve the requested role and exit.
pub fn serve_if_requested() {
    match std::env::var(ROLE).as_deref() {
        Ok("echo") => {
            echo();
            std::process::exit(0);
        }
        Ok("sidecar") => {
            sidecar();
            std::process::exit(0);
        }
        _ => {}
    }
}

/// This bench binary: the program of every peer.
pub fn program() -> PathBuf {
    std::env::current_exe().expect("the bench binary's path")
}

/// A `tokio` command for the peer in `role`.
pub fn command(role: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program());
    command.env(ROLE, role);
    command
}

/// The built-in declaration: intercepts `tool.before`.
pub fn default_init() -> String {
    r#"{"protocolVersion":"2","name":"bench-peer","version":"1.0.0","stateSchemaVersion":0,"subscriptions":["tool.before"]}"#.to_string()
}

fn echo() {
    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if out.write_all(&line).is_err() || out.flush().is_err() {
            return;
        }
    }
}

/// `id` and `method` from the head of a request frame (the host writes
/// `{"jsonrpc":"2.0","id":N,"method":"…",` first); `None` for anything else
/// (notifications, responses), which the sidecar ignores.
fn head(frame: &[u8]) -> Option<(i64, &str)> {
    let head = &frame[..frame.len().min(256)];
    let find = |key: &[u8]| {
        head.windows(key.len())
            .position(|w| w == key)
            .map(|i| i + key.len())
    };
    let id_at = find(b"\"id\":")?;
    let digits = head[id_at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let id = std::str::from_utf8(&head[id_at..id_at + digits])
        .ok()?
        .parse()
        .ok()?;
    let method_at = find(b"\"method\":\"")?;
    let len = head[method_at..].iter().position(|&b| b == b'"')?;
    let method = std::str::from_utf8(&head[method_at..method_at + len]).ok()?;
    Some((id, method))
}

fn sidecar() {
    let init = std::env::var(INIT).unwrap_or_else(|_| default_init());
    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Some((id, method)) = head(&line) else {
            continue;
        };
        let reply = match method {
            "extension/initialize" => {
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{init}}}\n")
            }
            "extension/intercept" => {
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"decision\":\"continue\"}}}}\n"
                )
            }
            "extension/shutdown" => {
                let _ = writeln!(
                    out,
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"accepted\":true}}}}"
                );
                let _ = out.flush();
                return;
            }
            _ => format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":-32601,\"message\":\"method not found\"}}}}\n"
            ),
        };
        if out.write_all(reply.as_bytes()).is_err() || out.flush().is_err() {
            return;
        }
    }
}
