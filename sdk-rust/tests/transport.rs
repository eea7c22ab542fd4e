//! The stdio transport, driven over real pipes: this test plays the host
//! against the `sdk-test-extension` binary (a real child process).

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Upper bound on waiting for one frame, so a broken transport fails the
/// test instead of hanging it (not a timing assertion).
const PATIENCE: Duration = Duration::from_secs(60);

struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: mpsc::Receiver<Value>,
    stderr: mpsc::Receiver<String>,
}

impl Peer {
    fn spawn() -> Peer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sdk-test-extension"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the test extension");
        let stdout = child.stdout.take().unwrap();
        let (tx, frames) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the extension wrote a non-JSON line {line:?}: {e}")
                });
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stderr_pipe = child.stderr.take().unwrap();
        let (etx, stderr) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                let _ = etx.send(line);
            }
        });
        let stdin = child.stdin.take();
        Peer {
            child,
            stdin,
            frames,
            stderr,
        }
    }

    fn ready() -> Peer {
        let mut peer = Peer::spawn();
        let result = peer.call(1, "extension/initialize", initialize_params());
        assert_eq!(result["result"]["name"], "sdk-test", "{result}");
        peer.send(json!({"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}));
        peer
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, frame: Value) {
        let mut line = serde_json::to_vec(&frame).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    fn recv(&mut self) -> Value {
        self.frames
            .recv_timeout(PATIENCE)
            .expect("the extension answers")
    }

    fn request(&mut self, id: i64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// Sends a request and returns the response with that id (frames in
    /// between must not be requests from the extension).
    fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        let frame = self.recv();
        assert_eq!(frame["id"], id, "expected the answer to {id}, got {frame}");
        frame
    }

    /// Like `call`, skipping stream chunks that arrive in between.
    fn call_among_chunks(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        loop {
            let frame = self.recv();
            if frame["method"] != "extension/provider/stream/chunk" {
                assert_eq!(frame["id"], id, "expected the answer to {id}, got {frame}");
                return frame;
            }
        }
    }

    fn answer(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn close_stdin(&mut self) {
        self.stdin.take();
    }

    fn wait(&mut self) -> ExitStatus {
        self.close_stdin();
        self.child.wait().unwrap()
    }

    /// Everything the extension wrote to stderr; call after it exited.
    fn stderr_after_exit(&self) -> String {
        self.stderr.iter().collect::<Vec<_>>().join("\n")
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize_params() -> Value {
    json!({
        "protocolId": "reasonix.extension.v2",
        "protocolVersion": "2",
        "manifest": {
            "intercepts": ["input.receive", "tool.before"],
            "capabilities": ["interceptors", "tools", "providers", "ui"],
            "tools": ["ask", "echo"]
        },
        "session": {"sessionId": "s1", "workspaceRoot": "/work", "generation": 7},
        "capabilities": {"contentRefs": true, "uiHost": "headless", "protocolVersion": "2"},
        "dependencySchemaVersion": 1
    })
}

fn intercept(text: &str) -> Value {
    json!({"event": "input.receive", "seq": 1, "payload": {"text": text}, "timeoutMillis": 5000})
}

fn reason(frame: &Value) -> &str {
    frame["error"]["data"]["reason"].as_str().unwrap_or("")
}

#[test]
fn handshake_declares_and_forces_the_protocol_version() {
    let mut peer = Peer::spawn();
    let r = peer.call(1, "extension/initialize", initialize_params());
    let result = &r["result"];
    assert_eq!(result["protocolVersion"], "2");
    assert_eq!(result["version"], "0.1.0");
    assert_eq!(result["stateSchemaVersion"], 0);
    assert_eq!(
        result["subscriptions"],
        json!(["input.receive", "tool.before"])
    );
    assert_eq!(
        result["tools"],
        json!(["ask", "echo"]),
        "tools are listed sorted"
    );
    assert_eq!(result["providers"][0]["ref"], "plugin/sdk-test/echo");
    assert_eq!(
        result["uiActions"],
        json!([{"actionId": "ping", "label": "Ping"}])
    );
}

#[test]
fn the_barrier_refuses_work_before_initialized() {
    let mut peer = Peer::spawn();
    // Before initialize: requests are protocol errors, notifications dropped.
    let early = peer.call(1, "extension/intercept", intercept("hi"));
    assert_eq!(early["error"]["code"], -32600);
    assert_eq!(reason(&early), "protocol_error");
    peer.send(json!({"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}));
    // A malformed initialize is invalid_params and does not burn the attempt.
    let bad = peer.call(
        2,
        "extension/initialize",
        json!({"protocolId": "reasonix.extension.v2"}),
    );
    assert_eq!(reason(&bad), "invalid_params", "{bad}");
    // The early `initialized` did not open the barrier.
    let still = peer.call(3, "extension/intercept", intercept("hi"));
    assert_eq!(reason(&still), "protocol_error");
    let ok = peer.call(4, "extension/initialize", initialize_params());
    assert_eq!(ok["result"]["name"], "sdk-test", "{ok}");
    let twice = peer.call(5, "extension/initialize", initialize_params());
    assert_eq!(reason(&twice), "protocol_error");
    // Between the initialize answer and `initialized`: still refused.
    let between = peer.call(6, "extension/intercept", intercept("hi"));
    assert_eq!(reason(&between), "protocol_error");
    peer.send(json!({"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}));
    let served = peer.call(7, "extension/intercept", intercept("hi"));
    assert_eq!(served["result"]["decision"], "replace", "{served}");
    assert_eq!(served["result"]["replacement"], json!({"text": "[sdk] hi"}));
}

#[test]
fn a_foreign_protocol_is_refused_and_the_process_exits_1() {
    let mut peer = Peer::spawn();
    let mut params = initialize_params();
    params["protocolVersion"] = json!("3");
    let r = peer.call(1, "extension/initialize", params);
    assert_eq!(r["error"]["code"], -32000);
    assert_eq!(reason(&r), "unsupported_version");
    let status = peer.child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn decisions_and_errors_of_interceptors() {
    let mut peer = Peer::ready();
    let blocked = peer.call(2, "extension/intercept", intercept("block me"));
    assert_eq!(
        blocked["result"],
        json!({"decision": "block", "reason": "blocked by sdk-test"})
    );
    let failed = peer.call(3, "extension/intercept", intercept("fail me"));
    assert_eq!(failed["error"]["code"], -32603);
    assert_eq!(reason(&failed), "internal");
    assert!(
        !failed.to_string().contains("private failure"),
        "handler text leaked: {failed}"
    );
    // A point with no interceptor of its own falls back to continue.
    let other = peer.call(
        4,
        "extension/intercept",
        json!({"event": "session.start", "seq": 2, "payload": {"phase": "start"}, "timeoutMillis": 100}),
    );
    assert_eq!(other["result"], json!({"decision": "continue"}));
    let bad_params = peer.call(5, "extension/intercept", json!({"event": "input.receive"}));
    assert_eq!(reason(&bad_params), "invalid_params");
    let unknown = peer.call(6, "extension/nope", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    assert!(peer.wait().success());
    // The text stays local: on stderr, which the host keeps as the log.
    assert!(peer.stderr_after_exit().contains("a private failure text"));
}

#[test]
fn a_panicking_handler_is_internal_and_the_connection_survives() {
    let mut peer = Peer::ready();
    let r = peer.call(
        2,
        "extension/intercept",
        json!({"event": "tool.before", "seq": 1, "payload": {"name": "panic"}, "timeoutMillis": 5000}),
    );
    assert_eq!(reason(&r), "internal", "{r}");
    let after = peer.call(3, "extension/intercept", intercept("still here"));
    assert_eq!(after["result"]["replacement"]["text"], "[sdk] still here");
}

#[test]
fn bad_frames_are_answered_and_the_connection_survives() {
    let mut peer = Peer::ready();
    peer.send_raw(b"this is not json\n");
    let parse = peer.recv();
    assert_eq!(
        parse["error"],
        json!({"code": -32700, "message": "parse error"})
    );
    assert_eq!(parse["id"], Value::Null);
    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"x\"}\n");
    let invalid = peer.recv();
    assert_eq!(
        invalid["error"],
        json!({"code": -32600, "message": "invalid request"})
    );
    // CRLF and blank lines are fine.
    let mut frame = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 9, "method": "extension/intercept", "params": intercept("crlf")
    }))
    .unwrap();
    frame.splice(0..0, b"\r\n   \n".iter().copied());
    frame.extend_from_slice(b"\r\n");
    peer.send_raw(&frame);
    let ok = peer.recv();
    assert_eq!(
        (ok["id"].clone(), ok["result"]["decision"].clone()),
        (json!(9), json!("replace"))
    );
}

#[test]
fn an_oversized_frame_is_answered_frame_too_large_then_the_process_exits_1() {
    let mut peer = Peer::ready();
    // 8 MiB of payload plus the envelope: over the cap including the newline.
    let text = "x".repeat(8 * 1024 * 1024);
    let frame = json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept", "params": intercept(&text)});
    let mut line = serde_json::to_vec(&frame).unwrap();
    line.push(b'\n');
    // The extension may stop reading midway: a broken pipe is expected.
    let _ = peer.stdin.as_mut().unwrap().write_all(&line);
    let answer = peer.recv();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32000);
    assert_eq!(reason(&answer), "frame_too_large");
    let status = peer.wait();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn a_frame_of_exactly_the_cap_is_accepted() {
    let mut peer = Peer::ready();
    let envelope = |text: &str| {
        let frame = json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept", "params": intercept(text)});
        serde_json::to_vec(&frame).unwrap()
    };
    let overhead = envelope("").len() + 1; // + newline
    let text = "y".repeat(8 * 1024 * 1024 - overhead);
    let mut line = envelope(&text);
    line.push(b'\n');
    assert_eq!(line.len(), 8 * 1024 * 1024);
    peer.send_raw(&line);
    let answer = peer.recv();
    assert_eq!(
        answer["result"]["decision"],
        "replace",
        "{}",
        reason(&answer)
    );
}

/// Serves the extension's `host/content/read` calls for one object.
fn serve_content(peer: &mut Peer, reference: &str, data: &[u8], corrupt: bool) -> Value {
    loop {
        let frame = peer.recv();
        if frame.get("method").is_none() {
            return frame; // the final answer
        }
        assert_eq!(frame["method"], "host/content/read", "{frame}");
        assert_eq!(frame["params"]["contentRef"], reference);
        let offset = frame["params"]["offset"].as_u64().unwrap() as usize;
        let end = (offset + 256 * 1024).min(data.len());
        let mut chunk = data[offset..end].to_vec();
        if corrupt {
            chunk[0] ^= 1;
        }
        let mut result = json!({
            "contentRef": reference,
            "offset": offset,
            "dataBase64": base64::engine::general_purpose::STANDARD.encode(&chunk),
            "totalBytes": data.len(),
            "sha256": hex::encode(Sha256::digest(data)),
            "encoding": "utf8",
        });
        if end < data.len() {
            result["nextOffset"] = json!(end);
        }
        let id = frame["id"].clone();
        peer.answer(&id, result);
    }
}

#[test]
fn externalized_payloads_are_paged_in_and_verified() {
    let mut peer = Peer::ready();
    let text = "z".repeat(600 * 1024);
    let data = serde_json::to_vec(&json!({"text": text})).unwrap();
    let reference = "content_0123456789abcdef01234567";
    let params = |seq: u64| {
        json!({
            "event": "input.receive", "seq": seq, "payload": null, "timeoutMillis": 5000,
            "externalized": [{
                "jsonPointer": "/payload", "contentRef": reference,
                "totalBytes": data.len(), "sha256": hex::encode(Sha256::digest(&data)),
            }]
        })
    };
    peer.request(2, "extension/intercept", params(1));
    let answer = serve_content(&mut peer, reference, &data, false);
    assert_eq!(
        answer["result"]["replacement"]["text"],
        format!(
            "[sdk] long input of {} chars (externalized: true)",
            600 * 1024
        ),
        "{answer}"
    );
    peer.request(3, "extension/intercept", params(2));
    let corrupt = serve_content(&mut peer, reference, &data, true);
    assert_eq!(reason(&corrupt), "protocol_error", "{corrupt}");
    // Inline and externalized at once is refused without a read.
    let mut both = params(3);
    both["payload"] = json!({"text": "inline"});
    let r = peer.call(4, "extension/intercept", both);
    assert_eq!(reason(&r), "protocol_error");
}

#[test]
fn host_errors_of_content_reads_keep_their_reason() {
    let mut peer = Peer::ready();
    peer.request(
        2,
        "extension/intercept",
        json!({"event": "input.receive", "seq": 1, "payload": null, "timeoutMillis": 5000,
               "externalized": [{"jsonPointer": "/payload", "contentRef": "content_0123456789abcdef01234567",
                                 "totalBytes": 10, "sha256": hex::encode(Sha256::digest(b"0123456789"))}]}),
    );
    let read = peer.recv();
    assert_eq!(read["method"], "host/content/read");
    let id = read["id"].clone();
    peer.send(json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32000, "message": "The referenced content has expired.",
        "data": {"reason": "content_ref_expired", "retryable": true}}}));
    let answer = peer.recv();
    assert_eq!(reason(&answer), "content_ref_expired", "{answer}");
}

#[test]
fn thirty_two_handlers_in_flight_then_server_busy() {
    let mut peer = Peer::ready();
    for i in 0..32 {
        peer.request(
            100 + i,
            "extension/tool/call",
            json!({"name": "ask", "arguments": {}, "timeoutMillis": 0}),
        );
    }
    // Every handler is now parked on its own host/ui/request.
    let mut asks = Vec::new();
    for _ in 0..32 {
        let frame = peer.recv();
        assert_eq!(frame["method"], "host/ui/request", "{frame}");
        assert_eq!(frame["params"]["sessionId"], "s1");
        assert_eq!(frame["params"]["generation"], 7);
        assert_eq!(frame["params"]["kind"], "input");
        assert_eq!(frame["params"]["payload"]["fields"][0]["key"], "value");
        asks.push(frame["id"].clone());
    }
    let busy = peer.call(
        200,
        "extension/tool/call",
        json!({"name": "echo", "arguments": {}, "timeoutMillis": 0}),
    );
    assert_eq!(
        busy["error"],
        json!({"code": -32099, "message": "server busy"})
    );
    for (i, id) in asks.iter().enumerate() {
        if i == 0 {
            peer.answer(id, json!({"cancelled": true}));
        } else {
            peer.answer(
                id,
                json!({"cancelled": false, "values": {"value": format!("a{i}")}}),
            );
        }
    }
    let mut results: Vec<String> = (0..32)
        .map(|_| {
            peer.recv()["result"]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    results.sort();
    assert_eq!(results.iter().filter(|r| *r == "cancelled").count(), 1);
    assert_eq!(
        results
            .iter()
            .filter(|r| r.starts_with("answer: a"))
            .count(),
        31
    );
    // Slots are free again.
    let echo = peer.call(
        201,
        "extension/tool/call",
        json!({"name": "echo", "arguments": {"k": 1}, "timeoutMillis": 0}),
    );
    assert_eq!(echo["result"], json!({"content": "{\"k\":1}"}));
}

#[test]
fn tool_calls_report_their_own_failures() {
    let mut peer = Peer::ready();
    let null = peer.call(
        2,
        "extension/tool/call",
        json!({"name": "echo", "arguments": null, "timeoutMillis": 10}),
    );
    assert_eq!(null["result"]["content"], "null");
    let failed = peer.call(
        3,
        "extension/tool/call",
        json!({"name": "echo", "arguments": {"mode": "fail"}, "timeoutMillis": 10}),
    );
    assert_eq!(
        failed["result"],
        json!({"content": "the tool failed on purpose", "isError": true})
    );
    let unknown = peer.call(
        4,
        "extension/tool/call",
        json!({"name": "grep", "arguments": {}, "timeoutMillis": 10}),
    );
    assert_eq!(reason(&unknown), "unknown_method");
    let missing = peer.call(
        5,
        "extension/tool/call",
        json!({"name": "echo", "timeoutMillis": 10}),
    );
    assert_eq!(reason(&missing), "invalid_params");
}

#[test]
fn ui_actions_publish_through_the_host() {
    let mut peer = Peer::ready();
    peer.request(
        2,
        "extension/ui/action",
        json!({"actionId": "ping", "sessionId": "s1", "generation": 7}),
    );
    let publish = peer.recv();
    assert_eq!(publish["method"], "host/ui/publish");
    assert_eq!(publish["params"]["kind"], "status");
    assert_eq!(publish["params"]["surfaceId"], "status");
    assert_eq!(
        publish["params"]["payload"],
        json!({"label": "pong", "detail": "from sdk-test"})
    );
    let id = publish["id"].clone();
    peer.answer(&id, json!({"accepted": false}));
    let answer = peer.recv();
    assert_eq!(
        answer["result"],
        json!({"accepted": true, "message": "published: false"})
    );
    let other = peer.call(
        3,
        "extension/ui/action",
        json!({"actionId": "nope", "sessionId": "s1", "generation": 7}),
    );
    assert_eq!(
        other["result"],
        json!({"accepted": false, "message": "no action nope"})
    );
    let submit = peer.call(
        4,
        "extension/ui/submit",
        json!({"surfaceId": "f", "sessionId": "s1", "generation": 7, "values": {}}),
    );
    assert_eq!(reason(&submit), "unknown_method");
}

fn open(model: &str, stream_id: &str) -> Value {
    json!({
        "streamId": stream_id, "providerRef": "plugin/sdk-test/echo", "model": model, "seqBase": 1,
        "request": {"messages": [{"role": "user", "content": "hello"}], "tools": [], "maxTokens": 100}
    })
}

#[test]
fn streams_are_pumped_after_the_ack_with_contiguous_seqs() {
    let mut peer = Peer::ready();
    let ack = peer.call(
        2,
        "extension/provider/stream/open",
        open("one", "es_000000000000000000000001"),
    );
    assert_eq!(
        ack["result"],
        json!({"accepted": true}),
        "the ack comes before any chunk"
    );
    let mut chunks = Vec::new();
    let end = loop {
        let frame = peer.recv();
        match frame["method"].as_str() {
            Some("extension/provider/stream/chunk") => chunks.push(frame["params"].clone()),
            Some("extension/provider/stream/end") => break frame["params"].clone(),
            _ => panic!("unexpected frame {frame}"),
        }
    };
    let seqs: Vec<u64> = chunks.iter().map(|c| c["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert_eq!(chunks[1]["chunk"], json!({"type": "text", "text": "hello"}));
    assert_eq!(chunks[2]["chunk"]["usage"]["totalTokens"], 5);
    assert_eq!(chunks[3]["chunk"], json!({"type": "done"}));
    assert_eq!(
        end,
        json!({"streamId": "es_000000000000000000000001", "lastSeq": 4})
    );

    let catalog = peer.call(3, "extension/provider/catalog", json!({}));
    assert_eq!(
        catalog["result"]["providers"][0]["ref"],
        "plugin/sdk-test/echo"
    );
}

#[test]
fn stream_failures_refusals_and_cancels() {
    let mut peer = Peer::ready();
    let ack = peer.call(2, "extension/provider/stream/open", open("fail", "es_a"));
    assert_eq!(ack["result"]["accepted"], true);
    let first = peer.recv();
    assert_eq!(first["params"]["chunk"]["text"], "partial");
    let end = peer.recv();
    assert_eq!(end["method"], "extension/provider/stream/end");
    assert_eq!(
        end["params"],
        json!({"streamId": "es_a", "lastSeq": 1, "error": "the model fell over"})
    );

    let refused = peer.call(3, "extension/provider/stream/open", open("refuse", "es_b"));
    assert_eq!(reason(&refused), "provider_failed");

    let ack = peer.call(4, "extension/provider/stream/open", open("endless", "es_c"));
    assert_eq!(ack["result"]["accepted"], true);
    let dup = peer.call_among_chunks(5, "extension/provider/stream/open", open("one", "es_c"));
    assert_eq!(reason(&dup), "protocol_error");
    peer.request(
        6,
        "extension/provider/stream/cancel",
        json!({"streamId": "es_c"}),
    );
    let mut last_seq = None;
    let end = loop {
        let frame = peer.recv();
        match frame["method"].as_str() {
            Some("extension/provider/stream/chunk") => {
                let seq = frame["params"]["seq"].as_u64().unwrap();
                if let Some(last) = last_seq {
                    assert_eq!(seq, last + 1, "contiguous");
                }
                last_seq = Some(seq);
            }
            Some("extension/provider/stream/end") => break frame["params"].clone(),
            _ => panic!("the cancel answer must come after the end: {frame}"),
        }
    };
    assert_eq!(end["interrupted"], true);
    if let Some(last) = last_seq {
        assert_eq!(end["lastSeq"], last);
    }
    let cancelled = peer.recv();
    assert_eq!(cancelled["id"], 6);
    assert_eq!(cancelled["result"], json!({"cancelled": true}));
    let again = peer.call(
        7,
        "extension/provider/stream/cancel",
        json!({"streamId": "es_c"}),
    );
    assert_eq!(again["result"], json!({"cancelled": false}));
}

#[test]
fn shutdown_ends_streams_runs_the_hook_and_exits_0() {
    let mut peer = Peer::ready();
    let ack = peer.call(2, "extension/provider/stream/open", open("endless", "es_d"));
    assert_eq!(ack["result"]["accepted"], true);
    peer.request(3, "extension/shutdown", json!({"timeoutMillis": 5000}));
    let mut saw_end = false;
    let answer = loop {
        let frame = peer.recv();
        if frame["method"] == "extension/provider/stream/end" {
            assert_eq!(frame["params"]["interrupted"], true);
            saw_end = true;
            continue;
        }
        if frame.get("method").is_some() {
            continue; // chunks still in flight
        }
        break frame;
    };
    assert!(saw_end, "the stream end precedes the shutdown answer");
    assert_eq!(answer["result"], json!({"accepted": true}));
    let status = peer.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(peer.stderr_after_exit().contains("shutdown hook ran"));
}

#[test]
fn eof_on_stdin_ends_the_process_cleanly() {
    let mut peer = Peer::ready();
    assert!(peer.wait().success());
}

#[test]
fn frames_piped_at_once_then_eof_are_all_answered_before_exit() {
    let mut peer = Peer::spawn();
    let mut script = Vec::new();
    for frame in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "extension/initialize", "params": initialize_params()}),
        json!({"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept", "params": intercept("piped")}),
    ] {
        script.extend(serde_json::to_vec(&frame).unwrap());
        script.push(b'\n');
    }
    peer.send_raw(&script);
    let status = peer.wait(); // closes stdin right away
    assert!(status.success(), "{status:?}");
    let first = peer.recv();
    assert_eq!(first["id"], 1);
    let second = peer.recv();
    assert_eq!(second["id"], 2, "{second}");
    assert_eq!(second["result"]["replacement"]["text"], "[sdk] piped");
}
