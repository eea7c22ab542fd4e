//! A sidecar for the transport tests, speaking Extension
//! Protocol v2 over stdio with std threads only. `argv[1]` selects the
//! behaviour (see `main`); the intercept payload's `action` selects what a
//! well-behaved sidecar does with one intercept.
//!
//! Environment knobs: `TEST_INIT_RESULT` (raw InitializeResult JSON),
//! `TEST_PID_FILE` (where `grandchild` writes "<sidecar pid> <grandchild
//! pid>"), `TEST_EVENTS_FILE` (where the number of `extension/event`s
//! received before `extension/shutdown` is written).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

type Waiters = Arc<Mutex<HashMap<i64, mpsc::Sender<Value>>>>;

struct Peer {
    out: Mutex<std::io::Stdout>,
    next_id: AtomicI64,
    waiters: Waiters,
    events: AtomicUsize,
}

impl Peer {
    fn send_line(&self, line: &str) {
        let mut out = self.out.lock().unwrap();
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }

    fn send(&self, value: &Value) {
        self.send_line(&serde_json::to_string(value).unwrap());
    }

    fn result(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// A request to the host; blocks until the reader thread routes the
    /// response back.
    fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        self.waiters.lock().unwrap().insert(id, tx);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.recv().unwrap()
    }

    /// Pages a content ref out of the host, verifying like the upstream SDK.
    fn read_content(&self, descriptor: &Value) -> Result<Vec<u8>, String> {
        let content_ref = descriptor["contentRef"].as_str().unwrap_or_default();
        let mut data = Vec::new();
        let mut offset = 0u64;
        loop {
            let answer = self.request(
                "host/content/read",
                json!({"contentRef": content_ref, "offset": offset}),
            );
            let r = &answer["result"];
            if r.is_null() {
                return Err(format!("content read failed: {}", answer["error"]));
            }
            if r["contentRef"] != content_ref || r["offset"] != offset || r["encoding"] != "utf8" {
                return Err("content read echo mismatch".into());
            }
            let chunk = base64::engine::general_purpose::STANDARD
                .decode(r["dataBase64"].as_str().unwrap_or_default())
                .map_err(|e| e.to_string())?;
            if chunk.len() > 262_144 {
                return Err("chunk too large".into());
            }
            data.extend_from_slice(&chunk);
            match r["nextOffset"].as_u64() {
                Some(next) if next > offset => offset = next,
                Some(_) => return Err("no progress".into()),
                None => break,
            }
        }
        if data.len() as u64 != descriptor["totalBytes"].as_u64().unwrap_or(u64::MAX) {
            return Err("length mismatch".into());
        }
        let sha = hex::encode(Sha256::digest(&data));
        if !sha.eq_ignore_ascii_case(descriptor["sha256"].as_str().unwrap_or_default()) {
            return Err("sha256 mismatch".into());
        }
        Ok(data)
    }
}

fn default_init_result() -> Value {
    json!({
        "protocolVersion": "2",
        "name": "test-sidecar",
        "version": "1.0.0",
        "stateSchemaVersion": 0,
        "subscriptions": ["tool.before"]
    })
}

fn init_result() -> Value {
    match std::env::var("TEST_INIT_RESULT") {
        Ok(text) => serde_json::from_str(&text).expect("TEST_INIT_RESULT is JSON"),
        Err(_) => default_init_result(),
    }
}

fn read_line(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> Option<Value> {
    loop {
        let line = lines.next()?.ok()?;
        if line.trim().is_empty() {
            continue;
        }
        return serde_json::from_str(&line).ok();
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "good".into());
    if mode == "stderr-secret" {
        eprintln!(
            "starting with api_key=supersecret123 and token sk-abcdefghijklmnopqrstuvwxyz0123"
        );
        eprintln!("fatal: cannot continue");
        std::process::exit(1);
    }
    if mode == "daemon-init" {
        start_daemon();
    }
    if mode == "grandchild" {
        let child = std::process::Command::new("/bin/sleep")
            .arg("1000")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn grandchild");
        if let Ok(path) = std::env::var("TEST_PID_FILE") {
            std::fs::write(&path, format!("{} {}", std::process::id(), child.id())).unwrap();
        }
        std::mem::forget(child);
    }

    let peer = Arc::new(Peer {
        out: Mutex::new(std::io::stdout()),
        next_id: AtomicI64::new(1),
        waiters: Arc::new(Mutex::new(HashMap::new())),
        events: AtomicUsize::new(0),
    });
    let stdin = std::io::stdin();
    let mut lines = BufReader::with_capacity(1 << 16, stdin.lock()).lines();

    // --- handshake ---
    let Some(init) = read_line(&mut lines) else {
        return;
    };
    assert_eq!(init["method"], "extension/initialize");
    let id = init["id"].clone();
    let mut result = init_result();
    match mode.as_str() {
        "early-request" => {
            peer.send(&json!({"jsonrpc":"2.0","id":1,"method":"host/content/read","params":{"contentRef":"content_000000000000000000000000","offset":0}}));
            // The host must answer protocol_error before killing us.
            if let Some(answer) = read_line(&mut lines) {
                eprintln!("early answer: {answer}");
            }
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        "early-notification" => {
            peer.send(&json!({"jsonrpc":"2.0","method":"extension/provider/stream/end","params":{"streamId":"es_x","lastSeq":0}}));
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        "garbage" | "float-id" | "string-id" => {
            let bad = match mode.as_str() {
                "garbage" => "this is not json".to_owned(),
                "float-id" => format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{}}}",
                    default_init_result()
                ),
                _ => format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{}}}",
                    default_init_result()
                ),
            };
            peer.send_line(&bad);
            let answer = read_line(&mut lines).unwrap_or(Value::Null);
            // Report what the host answered through the declared name.
            let name = format!(
                "answer-{}-{}",
                answer["error"]["code"],
                if answer["id"].is_null() {
                    "idnull"
                } else {
                    "id"
                }
            );
            result["name"] = Value::String(name);
        }
        "unknown-field" => {
            result["bogus"] = json!(true);
        }
        "env" => {
            let var = |k: &str| std::env::var(k).unwrap_or_else(|_| "<unset>".into());
            result["componentId"] = Value::String(format!(
                "{}|{}|{}|{}|{}",
                var("REASONIX_PLUGIN_ROOT"),
                var("REASONIX_PLUGIN_NAME"),
                var("REASONIX_PLUGIN_VERSION"),
                var("TEST_MANIFEST_VAR"),
                std::env::args().skip(2).collect::<Vec<_>>().join(",")
            ));
        }
        "echo-init" => {
            // Report the initialize params verbatim through componentId.
            result["componentId"] = Value::String(serde_json::to_string(&init["params"]).unwrap());
        }
        _ => {}
    }
    peer.result(&id, result);
    let Some(initialized) = read_line(&mut lines) else {
        return;
    };
    assert_eq!(
        initialized["method"], "extension/initialized",
        "{initialized}"
    );

    if mode == "stop-reading" {
        std::thread::sleep(Duration::from_secs(120));
        return;
    }

    // --- serve ---
    for line in lines {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let Ok(frame) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if frame.get("method").is_none() {
            // A response to one of our requests.
            if let Some(id) = frame["id"].as_i64()
                && let Some(tx) = peer.waiters.lock().unwrap().remove(&id)
            {
                let _ = tx.send(frame);
            }
            continue;
        }
        let method = frame["method"].as_str().unwrap_or_default().to_owned();
        match method.as_str() {
            "extension/event" => {
                peer.events.fetch_add(1, Ordering::Relaxed);
            }
            "extension/shutdown" => {
                // What arrived before the shutdown request, for the ordering test.
                if let Ok(path) = std::env::var("TEST_EVENTS_FILE") {
                    let _ = std::fs::write(path, peer.events.load(Ordering::Relaxed).to_string());
                }
                if mode == "ignore-shutdown" {
                    std::thread::sleep(Duration::from_secs(120));
                    return;
                }
                if mode == "await-eof" {
                    // No answer: only the end of stdin ends us.
                    continue;
                }
                peer.result(&frame["id"], json!({"accepted": true}));
                std::process::exit(0);
            }
            _ if frame.get("id").is_some() => {
                let peer = peer.clone();
                std::thread::spawn(move || serve(&peer, &method, &frame));
            }
            _ => {}
        }
    }
    if mode == "ignore-shutdown" {
        // Ignore EOF too: only the group kill ends us.
        std::thread::sleep(Duration::from_secs(120));
    }
}

fn serve(peer: &Peer, method: &str, frame: &Value) {
    let id = &frame["id"];
    let params = &frame["params"];
    match method {
        "extension/intercept" => intercept(peer, id, params),
        "extension/tool/call" => peer.result(
            id,
            json!({"content": format!("{}:{}", params["name"].as_str().unwrap_or(""), params["arguments"])}),
        ),
        "extension/provider/catalog" => {
            peer.result(id, json!({"providers": [{"ref": "plugin/test/echo/m1"}]}))
        }
        "extension/provider/stream/open" => {
            let stream_id = params["streamId"].clone();
            peer.result(id, json!({"accepted": true}));
            for (seq, text) in ["hel", "lo"].iter().enumerate() {
                peer.send(&json!({"jsonrpc":"2.0","method":"extension/provider/stream/chunk",
                    "params":{"streamId": stream_id, "seq": seq + 1, "chunk": {"type":"text","text": text}}}));
            }
            peer.send(&json!({"jsonrpc":"2.0","method":"extension/provider/stream/chunk",
                "params":{"streamId": stream_id, "seq": 3, "chunk": {"type":"bogus"}}}));
            peer.send(&json!({"jsonrpc":"2.0","method":"extension/provider/stream/end",
                "params":{"streamId": stream_id, "lastSeq": 3}}));
        }
        "extension/ui/action" => {
            let answer = peer.request(
                "host/ui/publish",
                json!({"surfaceId":"s1","sessionId": params["sessionId"],"generation": params["generation"],
                       "kind":"status","payload":{"label":"busy"}}),
            );
            let accepted = answer["result"]["accepted"].as_bool().unwrap_or(false);
            peer.result(
                id,
                json!({"accepted": accepted, "message": answer["error"]["data"]["reason"]}),
            );
        }
        _ => peer.send(&json!({"jsonrpc":"2.0","id": id,"error":{"code":-32601,"message":"method not found",
            "data":{"reason":"unknown_method","retryable":false}}})),
    }
}

fn intercept(peer: &Peer, id: &Value, params: &Value) {
    if params["payload"].is_null() {
        // Externalised payload: page it in, verify, then answer with an
        // externalised replacement naming the same host ref.
        let descriptor = &params["externalized"][0];
        match peer.read_content(descriptor) {
            Ok(data) => {
                let payload: Value = serde_json::from_slice(&data).unwrap_or(Value::Null);
                if payload["action"] == "inline-back" {
                    peer.result(id, json!({"decision": "replace", "replacement": payload}));
                } else {
                    let mut d = descriptor.clone();
                    d["jsonPointer"] = json!("/replacement");
                    peer.result(
                        id,
                        json!({"decision": "replace", "replacement": null, "externalized": [d]}),
                    );
                }
            }
            Err(e) => peer.result(id, json!({"decision": "block", "reason": e})),
        }
        return;
    }
    let payload = &params["payload"];
    match payload["action"].as_str().unwrap_or("") {
        "block" => peer.result(
            id,
            json!({"decision": "block", "reason": "no: password=hunter2"}),
        ),
        "echo" => peer.result(id, json!({"decision": "replace", "replacement": payload})),
        "hang" => std::thread::sleep(Duration::from_secs(120)),
        "crash" => std::process::exit(3),
        "huge-line" => {
            let line = format!("{{\"pad\":\"{}\"}}", "x".repeat(9 * 1024 * 1024));
            peer.send_line(&line);
            std::thread::sleep(Duration::from_secs(60));
        }
        "events" => peer.result(
            id,
            json!({"decision": "block", "reason": peer.events.load(Ordering::Relaxed).to_string()}),
        ),
        "ask-host" => {
            // An extension→host request while this intercept is in flight.
            let answer = peer.request(
                "host/content/read",
                json!({"contentRef": "content_ffffffffffffffffffffffff", "offset": 0}),
            );
            let reason = answer["error"]["data"]["reason"]
                .as_str()
                .unwrap_or("none")
                .to_owned();
            std::thread::sleep(Duration::from_millis(
                payload["sleepMs"].as_u64().unwrap_or(0),
            ));
            peer.result(
                id,
                json!({"decision": "block", "reason": format!("{}:{}", payload["n"], reason)}),
            );
        }
        "bad-result" => peer.result(id, json!({"decision": "maybe"})),
        // Answer an id the host never sent, and never the real one.
        "wrong-id" => peer.result(
            &json!(id.as_i64().unwrap_or(0) + 1000),
            json!({"decision": "continue"}),
        ),
        "garbage-answer" => peer.send_line("this is not an answer"),
        "daemon" => {
            start_daemon();
            peer.result(id, json!({"decision": "continue"}));
        }
        "unknown-method" => {
            let answer = peer.request("host/browser/tab/list", json!({}));
            peer.result(
                id,
                json!({"decision": "block", "reason": answer["error"]["data"]["reason"]}),
            );
        }
        "bad-ref" => {
            let answer = peer.request("host/content/read", json!({"contentRef": "", "offset": 0}));
            peer.result(
                id,
                json!({"decision": "block", "reason": answer["error"]["data"]["reason"]}),
            );
        }
        _ => peer.result(id, json!({"decision": "continue"})),
    }
}

/// Starts a daemon the way a careless sidecar would: `setsid` in a
/// background job of a shell that then exits, so the daemon has its own
/// session and process group and its parent is gone. Its pid goes to
/// `TEST_PID_FILE`.
fn start_daemon() {
    let out = std::process::Command::new("/bin/sh")
        .args([
            "-c",
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("start the daemon");
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if let Ok(path) = std::env::var("TEST_PID_FILE") {
        std::fs::write(path, pid).unwrap();
    }
}
