//! A scriptable test sidecar for the dispatcher's end-to-end tests.
//!
//! Usage: `scripted_sidecar SCRIPT.json` (or `REASONIX_TEST_SCRIPT=…`). It
//! speaks Extension Protocol v2 over stdio using `reasonix-protocol` types and
//! behaves as the JSON script says:
//!
//! ```json
//! {
//!   "name": "alpha", "version": "1.0.0",
//!   "subscriptions": ["input.receive"], "replaces": [], "tools": [],
//!   "uiActions": [{"actionId": "refresh", "label": "Refresh"}],
//!   "providers": [{"ref": "plugin/alpha/echo/small"}],
//!   "startup": {"sleepMs": 0, "exit": null, "protocolVersion": "2"},
//!   "intercept": {
//!     "input.receive": {"decision": "replace", "appendText": "-alpha"},
//!     "*": {"decision": "continue", "sleepMs": 0, "crash": false,
//!           "error": null, "publish": [], "request": null}
//!   },
//!   "toolResults": {"lookup": {"content": "…", "isError": false}},
//!   "streams": {"*": {"chunks": [[1, {"type": "text", "text": "hi"}]],
//!                     "end": {"lastSeq": 1}, "crash": false}},
//!   "log": "/tmp/calls.log"
//! }
//! ```
//!
//! Every handled message is appended to `log` as one line:
//! `<name> <method> [<detail>]`.

use std::io::{BufRead, Write};
use std::time::Duration;

use reasonix_protocol::frame::{
    Frame, Id, Outcome, decode_frame, encode_error, encode_notification, encode_request,
    encode_result, trim_line,
};
use reasonix_protocol::methods as m;
use reasonix_protocol::types::{
    InitializeParams, InitializeResult, InterceptParams, ProviderDescriptor, StreamCancelParams,
    StreamOpenParams, ToolCallParams, UIActionDecl,
};
use reasonix_protocol::{ErrorReason, RpcError};
use serde_json::{Value, json};

struct Sidecar {
    input: Box<dyn BufRead>,
    /// Frames read while waiting for responses, handled afterwards.
    pending: std::collections::VecDeque<Frame>,
    script: Value,
    name: String,
    log: Option<std::fs::File>,
    out: std::io::Stdout,
    next_id: i64,
    session_id: String,
    generation: u64,
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn sleep_ms(rule: &Value) {
    if let Some(ms) = rule.get("sleepMs").and_then(Value::as_u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

impl Sidecar {
    fn log(&mut self, line: &str) {
        if let Some(file) = &mut self.log {
            // One write per line: sidecars share the log (O_APPEND), and a
            // line written in pieces could interleave with another's.
            let _ = file.write_all(format!("{} {line}\n", self.name).as_bytes());
        }
    }

    fn send(&mut self, bytes: Vec<u8>) {
        let mut out = self.out.lock();
        let _ = out.write_all(&bytes);
        let _ = out.flush();
    }

    fn reply<T: serde::Serialize>(&mut self, id: Id, result: &T) {
        if let Ok(bytes) = encode_result(id, result) {
            self.send(bytes);
        }
    }

    fn reply_error(&mut self, id: Id, reason: &str, message: &str) {
        let reason = ErrorReason::from_name(reason).unwrap_or(ErrorReason::Internal);
        if let Ok(bytes) = encode_error(id, &RpcError::with_message(reason, message)) {
            self.send(bytes);
        }
    }

    fn notify<T: serde::Serialize>(&mut self, method: &str, params: &T) {
        if let Ok(bytes) = encode_notification(method, params) {
            self.send(bytes);
        }
    }

    fn request(&mut self, method: &str, params: &Value) {
        self.next_id += 1;
        if let Ok(bytes) = encode_request(Id::Number(self.next_id), method, params) {
            self.send(bytes);
        }
    }

    fn crash(&mut self, why: &str) -> ! {
        self.log(&format!("crash {why}"));
        std::process::exit(3);
    }

    fn rule_for(&self, section: &str, key: &str) -> Value {
        let table = &self.script[section];
        table
            .get(key)
            .or_else(|| table.get("*"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// The next frame from stdin (queued ones first); `None` at EOF.
    fn next_frame(&mut self) -> Option<Frame> {
        if let Some(frame) = self.pending.pop_front() {
            return Some(frame);
        }
        let mut line = Vec::new();
        loop {
            line.clear();
            match self.input.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let Some(trimmed) = trim_line(&line) else {
                continue;
            };
            match decode_frame(trimmed) {
                Ok(frame) => return Some(frame),
                Err(rejection) => {
                    let text = String::from_utf8_lossy(trimmed).into_owned();
                    self.log(&format!("rejected {text}"));
                    if let Ok(bytes) =
                        reasonix_protocol::frame::encode_response(&rejection.response())
                    {
                        self.send(bytes);
                    }
                }
            }
        }
    }

    /// Wait for `count` responses (as an SDK's blocking UI call would),
    /// logging each; other frames are kept for later.
    fn await_responses(&mut self, mut count: usize) {
        let mut held = Vec::new();
        while count > 0 {
            let Some(frame) = self.next_frame() else {
                break;
            };
            match frame {
                Frame::Response(_) => {
                    self.handle(frame);
                    count -= 1;
                }
                other => held.push(other),
            }
        }
        self.pending.extend(held);
    }

    /// UI traffic a rule asks for, sent (and answered) before the rule's answer.
    fn ui_traffic(&mut self, rule: &Value) {
        let mut sent = 0;
        for publish in rule["publish"].as_array().cloned().unwrap_or_default() {
            let mut params = json!({
                "surfaceId": publish.get("surfaceId").cloned().unwrap_or(json!("main")),
                "sessionId": publish.get("sessionId").cloned().unwrap_or(json!(self.session_id)),
                "generation": publish.get("generation").cloned().unwrap_or(json!(self.generation)),
                "kind": publish["kind"],
                "payload": publish["payload"],
            });
            if let Some(delta) = publish.get("generationDelta").and_then(Value::as_i64) {
                params["generation"] = json!((self.generation as i64 + delta).max(0));
            }
            self.log("publish");
            self.request(m::HOST_UI_PUBLISH, &params);
            sent += 1;
        }
        if let Some(request) = rule.get("request").filter(|r| !r.is_null()) {
            let params = json!({
                "surfaceId": request.get("surfaceId").cloned().unwrap_or(json!("ask")),
                "sessionId": self.session_id,
                "generation": self.generation,
                "kind": request["kind"],
                "payload": request["payload"],
            });
            self.log("request");
            self.request(m::HOST_UI_REQUEST, &params);
            sent += 1;
        }
        self.await_responses(sent);
    }

    fn initialize(&mut self, id: Id, params: InitializeParams) {
        self.session_id = params.session.session_id.clone();
        self.generation = params.session.generation;
        let startup = self.script["startup"].clone();
        if let Some(text) = startup.get("stderr").and_then(Value::as_str) {
            eprintln!("{text}");
        }
        sleep_ms(&startup);
        if let Some(code) = startup.get("exit").and_then(Value::as_i64) {
            self.log("exit-on-start");
            std::process::exit(code as i32);
        }
        self.log(&format!("initialize generation={}", self.generation));
        let ui_actions: Vec<UIActionDecl> =
            serde_json::from_value(self.script["uiActions"].clone()).unwrap_or_default();
        let providers: Vec<ProviderDescriptor> =
            serde_json::from_value(self.script["providers"].clone()).unwrap_or_default();
        let result = InitializeResult {
            protocol_version: startup
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("2")
                .to_string(),
            name: self.name.clone(),
            version: self.script["version"]
                .as_str()
                .unwrap_or("1.0.0")
                .to_string(),
            component_id: None,
            subscriptions: strings(&self.script["subscriptions"]),
            replaces: strings(&self.script["replaces"]),
            providers,
            ui_actions,
            requires: Vec::new(),
            provides: Vec::new(),
            state_schema_version: 0,
            tools: strings(&self.script["tools"]),
        };
        self.reply(id, &result);
    }

    fn intercept(&mut self, id: Id, params: InterceptParams) {
        let point = params.event.as_str();
        let payload: Value = serde_json::from_str(params.payload.get()).unwrap_or(Value::Null);
        self.log(&format!("intercept {point} {}", payload));
        let rule = self.rule_for("intercept", point);
        sleep_ms(&rule);
        if rule["crash"].as_bool() == Some(true) {
            self.crash(point);
        }
        self.ui_traffic(&rule);
        if let Some(reason) = rule["error"].as_str() {
            let message = rule["errorMessage"]
                .as_str()
                .unwrap_or("scripted error")
                .to_string();
            return self.reply_error(id, reason, &message);
        }
        let decision = rule["decision"].as_str().unwrap_or("continue").to_string();
        let mut result = json!({ "decision": decision });
        if let Some(reason) = rule.get("reason").filter(|r| !r.is_null()) {
            result["reason"] = reason.clone();
        }
        if let Some(suffix) = rule["appendText"].as_str() {
            let mut replacement = payload.clone();
            for field in ["text", "prompt", "summary", "result", "arguments"] {
                if let Some(Value::String(text)) = replacement.get_mut(field) {
                    text.push_str(suffix);
                    break;
                }
            }
            result["replacement"] = replacement;
        } else if let Some(replacement) = rule.get("replacement") {
            result["replacement"] = replacement.clone();
        }
        self.reply(id, &result);
    }

    fn tool_call(&mut self, id: Id, params: ToolCallParams) {
        self.log(&format!("tool {} {}", params.name, params.arguments.get()));
        let rule = self.rule_for("toolResults", &params.name);
        sleep_ms(&rule);
        if rule["crash"].as_bool() == Some(true) {
            self.crash("tool");
        }
        if let Some(reason) = rule["error"].as_str() {
            let message = rule["errorMessage"]
                .as_str()
                .unwrap_or("scripted tool error")
                .to_string();
            return self.reply_error(id, reason, &message);
        }
        let content = if rule["echoArguments"].as_bool() == Some(true) {
            format!("{}({})", params.name, params.arguments.get())
        } else {
            rule["content"].as_str().unwrap_or("ok").to_string()
        };
        let is_error = rule["isError"].as_bool().unwrap_or(false);
        let mut result = json!({ "content": content });
        if is_error {
            result["isError"] = json!(true);
        }
        self.reply(id, &result);
    }

    fn stream_open(&mut self, id: Id, params: StreamOpenParams) {
        let model = params.model.clone().unwrap_or_default();
        self.log(&format!("stream-open {} {model}", params.provider_ref));
        let rule = self.rule_for("streams", &model);
        if rule["refuse"].as_bool() == Some(true) {
            return self.reply(id, &json!({ "accepted": false }));
        }
        self.reply(id, &json!({ "accepted": true }));
        let last_user = params
            .request
            .messages
            .iter()
            .rev()
            .find_map(|m| m.content.clone())
            .unwrap_or_default();
        let chunks = rule["chunks"].as_array().cloned().unwrap_or_else(|| {
            vec![
                json!([1, {"type": "text", "text": format!("stream: {last_user}")}]),
                json!([2, {"type": "usage", "usage": {"promptTokens": 1, "completionTokens": 2, "totalTokens": 3, "cacheHitTokens": 0, "cacheMissTokens": 1, "reasoningTokens": 0}}]),
            ]
        });
        for chunk in chunks {
            sleep_ms(&rule);
            let params =
                json!({ "streamId": params.stream_id, "seq": chunk[0], "chunk": chunk[1] });
            self.notify(m::EXTENSION_PROVIDER_STREAM_CHUNK, &params);
        }
        if rule["crash"].as_bool() == Some(true) {
            self.crash("stream");
        }
        if rule["hold"].as_bool() == Some(true) {
            return;
        }
        let mut end = rule.get("end").cloned().unwrap_or(json!({ "lastSeq": 2 }));
        end["streamId"] = json!(params.stream_id);
        self.notify(m::EXTENSION_PROVIDER_STREAM_END, &end);
    }

    fn handle(&mut self, frame: Frame) -> bool {
        match frame {
            Frame::Request(request) => {
                let id = request.id;
                let params = request.params.get().to_string();
                match request.method.as_str() {
                    m::EXTENSION_INITIALIZE => match serde_json::from_str(&params) {
                        Ok(p) => self.initialize(id, p),
                        Err(e) => self.reply_error(id, "invalid_params", &e.to_string()),
                    },
                    m::EXTENSION_INTERCEPT => match serde_json::from_str(&params) {
                        Ok(p) => self.intercept(id, p),
                        Err(e) => self.reply_error(id, "invalid_params", &e.to_string()),
                    },
                    m::EXTENSION_TOOL_CALL => match serde_json::from_str(&params) {
                        Ok(p) => self.tool_call(id, p),
                        Err(e) => self.reply_error(id, "invalid_params", &e.to_string()),
                    },
                    m::EXTENSION_PROVIDER_CATALOG => {
                        self.log("catalog");
                        let catalog = self
                            .script
                            .get("catalog")
                            .cloned()
                            .unwrap_or_else(|| self.script["providers"].clone());
                        let providers = if catalog.is_array() {
                            catalog
                        } else {
                            json!([])
                        };
                        self.reply(id, &json!({ "providers": providers }));
                    }
                    m::EXTENSION_PROVIDER_STREAM_OPEN => match serde_json::from_str(&params) {
                        Ok(p) => self.stream_open(id, p),
                        Err(e) => self.reply_error(id, "invalid_params", &e.to_string()),
                    },
                    m::EXTENSION_PROVIDER_STREAM_CANCEL => {
                        let cancel: Option<StreamCancelParams> = serde_json::from_str(&params).ok();
                        self.log(&format!(
                            "stream-cancel {}",
                            cancel.map(|c| c.stream_id).unwrap_or_default()
                        ));
                        self.reply(id, &json!({ "cancelled": true }));
                    }
                    m::EXTENSION_UI_ACTION => {
                        self.log(&format!("ui-action {params}"));
                        self.reply(id, &json!({ "accepted": true, "message": "done" }));
                    }
                    m::EXTENSION_UI_SUBMIT => {
                        self.log(&format!("ui-submit {params}"));
                        self.reply(id, &json!({ "accepted": true }));
                    }
                    m::EXTENSION_SHUTDOWN => {
                        self.log("shutdown");
                        self.reply(id, &json!({ "accepted": true }));
                        return false;
                    }
                    other => {
                        self.log(&format!("unknown {other}"));
                        self.reply_error(id, "unknown_method", other);
                    }
                }
            }
            Frame::Notification(notification) => {
                let detail = match notification.method.as_str() {
                    m::EXTENSION_EVENT => serde_json::from_str::<Value>(notification.params.get())
                        .ok()
                        .and_then(|v| v["event"].as_str().map(str::to_string))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                self.log(format!("{} {detail}", notification.method).trim_end());
            }
            Frame::Response(response) => {
                let text = match response.outcome {
                    Outcome::Result(result) => result.get().to_string(),
                    Outcome::Error(error) => format!("error {}", error.message),
                };
                self.log(&format!("response {text}"));
            }
        }
        true
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("REASONIX_TEST_SCRIPT").ok())
        .expect("usage: scripted_sidecar SCRIPT.json");
    let script: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read script"))
        .expect("script is JSON");
    let log = script["log"].as_str().map(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .expect("open log")
    });
    let mut sidecar = Sidecar {
        input: Box::new(std::io::BufReader::new(std::io::stdin())),
        pending: std::collections::VecDeque::new(),
        name: script["name"].as_str().unwrap_or("scripted").to_string(),
        script,
        log,
        out: std::io::stdout(),
        next_id: 0,
        session_id: String::new(),
        generation: 0,
    };
    while let Some(frame) = sidecar.next_frame() {
        if !sidecar.handle(frame) {
            break;
        }
    }
    sidecar.log("exit");
}
