//! `reasonix acp` driven as a child process over real pipes by the ACP
//! crate's client side: initialize → session/new → prompts with the real
//! starter and status-ui extensions, the available commands, structured UI
//! as vendor notifications or as text, extension forms, permissions, the
//! reload vendor method mid-turn (queued, then applied), cancel of a
//! provider stream, the model picker, session/load, typed errors, and a
//! clean exit when stdin closes.

#[path = "examples_support.rs"]
mod support;

mod dispatch_common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, CloseSessionRequest, ContentBlock, ImageContent,
    InitializeRequest, InitializeResponse, LoadSessionRequest, NewSessionRequest,
    NewSessionResponse, PermissionOptionId, PromptRequest, PromptResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SetSessionConfigOptionRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, Error, ErrorCode, JsonRpcRequest, Lines, UntypedMessage,
};
use dispatch_common::Env;
use serde_json::{Value, json};
use support::Kind;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::task::JoinHandle;

const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");
const LIMIT: Duration = Duration::from_secs(120);
const RELOAD: &str = "_reasonix.io/session/reloadExtensions";
const RELOAD_APPLIED: &str = "_reasonix.io/session/reloadApplied";
const SURFACE: &str = "_reasonix.io/extensionSurface";
const SURFACE_REQUEST: &str = "_reasonix.io/extensionSurface/request";

/// What the agent sent us, in order.
enum Inbound {
    /// `session/update` params.
    Update(Value),
    /// A vendor notification.
    Vendor(String, Value),
    Permission(Value, Responder<RequestPermissionResponse>),
    Form(Value, Responder<Value>),
}

impl std::fmt::Debug for Inbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inbound::Update(v) => write!(f, "update {v}"),
            Inbound::Vendor(m, v) => write!(f, "{m} {v}"),
            Inbound::Permission(v, _) => write!(f, "permission {v}"),
            Inbound::Form(v, _) => write!(f, "form {v}"),
        }
    }
}

/// A running `reasonix acp` and our client connection to it.
struct Acp {
    cx: ConnectionTo<Agent>,
    inbound: UnboundedReceiver<Inbound>,
    done: Option<tokio::sync::oneshot::Sender<()>>,
    driver: JoinHandle<Result<(), Error>>,
    child: tokio::process::Child,
    /// Every line the agent wrote to stdout.
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
}

/// The text of every `agent_message_chunk`.
fn text(inbound: &[Inbound]) -> String {
    updates(inbound, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect()
}

/// The `update` of every `session/update` of one kind.
fn updates(inbound: &[Inbound], kind: &str) -> Vec<Value> {
    inbound
        .iter()
        .filter_map(|i| match i {
            Inbound::Update(n) if n["update"]["sessionUpdate"] == kind => Some(n["update"].clone()),
            _ => None,
        })
        .collect()
}

fn vendor(inbound: &[Inbound], method: &str) -> Vec<Value> {
    inbound
        .iter()
        .filter_map(|i| match i {
            Inbound::Vendor(m, v) if m == method => Some(v.clone()),
            _ => None,
        })
        .collect()
}

/// The names of the last available-commands update.
fn command_names(inbound: &[Inbound]) -> Vec<String> {
    updates(inbound, "available_commands_update")
        .last()
        .expect("an available_commands_update")["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn select(option: &str) -> RequestPermissionResponse {
    RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
        SelectedPermissionOutcome::new(PermissionOptionId::new(option.to_string())),
    ))
}

impl Acp {
    async fn start(home: &Path, workspace: &Path, args: &[&str]) -> Acp {
        let mut child = tokio::process::Command::new(REASONIX)
            .arg("acp")
            .args(args)
            .env("REASONIX_HOME", home)
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start reasonix acp");
        let stdout_lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let stderr = Arc::clone(&stderr);
            let pipe = child.stderr.take().unwrap();
            tokio::spawn(async move {
                let mut lines = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let mut all = stderr.lock().unwrap();
                    all.push_str(&line);
                    all.push('\n');
                }
            });
        }
        // The transport: lines in both directions, every line from the
        // agent recorded.
        let incoming = {
            let lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let record = Arc::clone(&stdout_lines);
            futures::stream::unfold((lines, record), |(mut lines, record)| async move {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        record.lock().unwrap().push(line.clone());
                        Some((Ok(line), (lines, record)))
                    }
                    Ok(None) => None,
                    Err(e) => Some((Err(e), (lines, record))),
                }
            })
        };
        let outgoing = futures::sink::unfold(
            child.stdin.take().unwrap(),
            |mut stdin, line: String| async move {
                stdin.write_all(line.as_bytes()).await?;
                stdin.write_all(b"\n").await?;
                stdin.flush().await?;
                Ok::<_, std::io::Error>(stdin)
            },
        );
        let transport = Lines::new(outgoing, incoming);

        let (tx, inbound) = unbounded_channel();
        let (t1, t2, t3, t4) = (tx.clone(), tx.clone(), tx.clone(), tx);
        let (cx_tx, cx_rx) = tokio::sync::oneshot::channel();
        let (done, done_rx) = tokio::sync::oneshot::channel::<()>();
        let driver = tokio::spawn(
            Client
                .v1()
                .name("acp-test-client")
                .on_receive_notification(
                    async move |n: SessionNotification, _cx| {
                        let _ = t1.send(Inbound::Update(serde_json::to_value(n).unwrap()));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_notification(
                    async move |n: UntypedMessage, _cx| {
                        let _ =
                            t2.send(Inbound::Vendor(n.method().to_string(), n.params().clone()));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_request(
                    async move |r: RequestPermissionRequest, responder, _cx| {
                        let _ = t3.send(Inbound::Permission(
                            serde_json::to_value(r).unwrap(),
                            responder,
                        ));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |r: UntypedMessage, responder: Responder<Value>, _cx| {
                        if r.method() != SURFACE_REQUEST {
                            return responder.respond_with_error(Error::method_not_found());
                        }
                        let _ = t4.send(Inbound::Form(r.params().clone(), responder));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                    let _ = cx_tx.send(cx);
                    let _ = done_rx.await;
                    Ok(())
                }),
        );
        let cx = cx_rx.await.expect("the connection starts");
        Acp {
            cx,
            inbound,
            done: Some(done),
            driver,
            child,
            stdout: stdout_lines,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    async fn request<R: JsonRpcRequest>(&self, request: R) -> Result<R::Response, Error> {
        tokio::time::timeout(LIMIT, self.cx.send_request(request).block_task())
            .await
            .unwrap_or_else(|_| panic!("no answer in time; stderr:\n{}", self.stderr()))
    }

    async fn initialize(&self, surfaces: bool) -> InitializeResponse {
        let mut capabilities = ClientCapabilities::new();
        if surfaces {
            let mut meta = serde_json::Map::new();
            meta.insert("reasonix.extensionSurface".into(), json!(true));
            capabilities = capabilities.meta(meta);
        }
        self.request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities))
            .await
            .expect("initialize")
    }

    async fn new_session(&self, cwd: &Path) -> NewSessionResponse {
        self.request(NewSessionRequest::new(cwd))
            .await
            .unwrap_or_else(|e| panic!("session/new: {e:?}; stderr:\n{}", self.stderr()))
    }

    async fn next(&mut self) -> Inbound {
        tokio::time::timeout(LIMIT, self.inbound.recv())
            .await
            .unwrap_or_else(|_| {
                panic!("nothing from the agent in time; stderr:\n{}", self.stderr())
            })
            .expect("the connection is open")
    }

    /// Everything until (and including) the first message that `done` picks.
    async fn until(&mut self, done: impl Fn(&Inbound) -> bool) -> Vec<Inbound> {
        let mut seen = Vec::new();
        loop {
            let next = self.next().await;
            let last = done(&next);
            seen.push(next);
            if last {
                return seen;
            }
        }
    }

    fn start_prompt(&self, session: &str, text: &str) -> JoinHandle<Result<PromptResponse, Error>> {
        let sent = self.cx.send_request(PromptRequest::new(
            session.to_string(),
            vec![ContentBlock::from(text.to_string())],
        ));
        tokio::spawn(async move { sent.block_task().await })
    }

    /// Wait for a prompt's answer, collecting what arrives meanwhile (a
    /// question arriving here is a test failure).
    async fn finish_prompt(
        &mut self,
        mut prompt: JoinHandle<Result<PromptResponse, Error>>,
    ) -> (Result<PromptResponse, Error>, Vec<Inbound>) {
        let mut seen = Vec::new();
        let result = loop {
            tokio::select! {
                result = &mut prompt => break result.expect("the prompt task"),
                next = self.inbound.recv() => {
                    let next = next.expect("the connection is open");
                    if matches!(next, Inbound::Permission(..) | Inbound::Form(..)) {
                        panic!("an unexpected question: {next:?}");
                    }
                    seen.push(next);
                }
                _ = tokio::time::sleep(LIMIT) => panic!("the prompt did not end; stderr:\n{}", self.stderr()),
            }
        };
        // Every update of the turn was sent before its answer.
        while let Ok(next) = self.inbound.try_recv() {
            seen.push(next);
        }
        (result, seen)
    }

    async fn prompt(
        &mut self,
        session: &str,
        text: &str,
    ) -> (Result<PromptResponse, Error>, Vec<Inbound>) {
        let prompt = self.start_prompt(session, text);
        self.finish_prompt(prompt).await
    }

    /// Close our side (the agent's stdin) and wait for the agent to exit.
    async fn finish(mut self) -> (i32, Vec<String>, String) {
        drop(self.done.take());
        let _ = tokio::time::timeout(LIMIT, &mut self.driver).await;
        let status = tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("reasonix acp did not exit; stderr:\n{}", self.stderr()))
            .unwrap();
        let stdout = self.stdout.lock().unwrap().clone();
        (status.code().unwrap_or(-1), stdout, self.stderr())
    }
}

/// Processes whose command line mentions `needle` (other than this test).
fn processes_mentioning(needle: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if cmdline.contains(needle) && !zombie {
            out.push(format!("{name}: {cmdline}"));
        }
    }
    out
}

/// A home with the starter and status-ui examples linked in; `env` writes
/// scripted plugins into the same home.
fn home_with_examples() -> (support::Installed, Env) {
    let installed = support::install("starter", Kind::Native);
    support::add_to(
        &installed.home,
        &installed.workspace,
        "status-ui",
        Kind::Native,
    );
    let env = env_in(&installed);
    (installed, env)
}

fn env_in(installed: &support::Installed) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    Env {
        dir,
        home: installed.home.path().to_path_buf(),
        log,
        workspace: installed.workspace.path().to_path_buf(),
    }
}

/// A scripted extension that asks a form on every input.
fn add_asker(env: &Env) -> PathBuf {
    env.add(
        "asker",
        json!({"capabilities": ["interceptors", "ui"]}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "continue",
                   "request": {"surfaceId": "asker.q", "kind": "input",
                               "payload": {"title": "Who?", "fields": [{"key": "value", "kind": "input", "label": "Name", "required": true}]}}}}}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_client_gets_the_rewrite_the_commands_and_ui_as_text() {
    let (installed, env) = home_with_examples();
    add_asker(&env);
    let workspace = installed.workspace.path();
    let mut acp = Acp::start(installed.home.path(), workspace, &[]).await;

    let init = serde_json::to_value(acp.initialize(false).await).unwrap();
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    assert_eq!(
        init["agentCapabilities"]["_meta"]["reasonix.extensionSurface"],
        true
    );
    assert_eq!(init["agentInfo"]["name"], "reasonix");

    let new = serde_json::to_value(acp.new_session(workspace).await).unwrap();
    let session = new["sessionId"].as_str().unwrap().to_string();
    assert!(session.starts_with("rs-"), "{session}");
    assert_eq!(new["configOptions"][0]["id"], "model");
    assert_eq!(new["configOptions"][0]["currentValue"], "echo");

    let opening = acp
        .until(|i| matches!(i, Inbound::Update(n) if n["update"]["sessionUpdate"] == "available_commands_update"))
        .await;
    let names = command_names(&opening);
    for expected in [
        "status-ui:reset",
        "status-ui:rename",
        "starter:greet",
        "starter:review",
        "reload",
        "model",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert!(names.iter().all(|n| !n.starts_with('/')), "{names:?}");

    // The starter rewrites the input; the echo model answers it; status-ui's
    // surfaces come as text; the asker's form is answered cancelled, with a
    // note, because this client has no surface UI.
    let (result, seen) = acp.prompt(&session, "hello there").await;
    assert_eq!(
        serde_json::to_value(result.unwrap()).unwrap()["stopReason"],
        "end_turn"
    );
    let said = text(&seen);
    assert!(said.contains("echo: [starter] hello there"), "{said}");
    assert!(said.contains("[status-ui] ● 1 inputs"), "{said}");
    assert!(said.contains("[status-ui] ┌ Session input"), "{said}");
    assert!(said.contains("answered as cancelled"), "{said}");
    assert!(vendor(&seen, SURFACE).is_empty(), "{seen:?}");
    assert!(
        env.log().iter().any(|l| l.contains("cancelled")),
        "the asker got a cancelled answer: {:?}",
        env.log()
    );

    // An action from the commands: its message and the republished status.
    let (result, seen) = acp.prompt(&session, "/status-ui:reset").await;
    assert!(result.is_ok());
    let said = text(&seen);
    assert!(said.contains("/status-ui:reset: counters reset"), "{said}");
    assert!(said.contains("[status-ui] ● 0 inputs"), "{said}");

    // An unknown command is a typed error naming the closest one.
    let (result, _) = acp.prompt(&session, "/status-ui:rest").await;
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(error.data.as_ref().unwrap()["errorCode"], "command.unknown");
    assert!(
        error.message.contains("/status-ui:reset"),
        "{}",
        error.message
    );

    // The session was saved under the home.
    let file = installed
        .home
        .path()
        .join("sessions")
        .join(format!("{session}.json"));
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(saved["sessionId"], session.as_str());

    // stdin closes: the agent exits cleanly, its sidecars with it, and it
    // wrote nothing but JSON-RPC frames.
    let (code, stdout, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
    assert!(!stdout.is_empty());
    for line in &stdout {
        let frame: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(frame["jsonrpc"], "2.0", "{line}");
    }
    let mut left = Vec::new();
    for _ in 0..200 {
        left = processes_mentioning(&workspace.display().to_string());
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(left.is_empty(), "processes left behind: {left:?}");

    // A new agent continues the saved session: the transcript is replayed
    // before session/load answers, then the session goes on.
    let mut acp = Acp::start(installed.home.path(), workspace, &[]).await;
    acp.initialize(false).await;
    let loaded = acp
        .request(LoadSessionRequest::new(session.clone(), workspace))
        .await
        .unwrap_or_else(|e| panic!("session/load: {e:?}; stderr:\n{}", acp.stderr()));
    assert_eq!(
        serde_json::to_value(loaded).unwrap()["configOptions"][0]["id"],
        "model"
    );
    let mut replayed = Vec::new();
    while let Ok(next) = acp.inbound.try_recv() {
        replayed.push(next);
    }
    let users: Vec<Value> = updates(&replayed, "user_message_chunk");
    assert_eq!(users.len(), 1, "{replayed:?}");
    assert_eq!(users[0]["content"]["text"], "[starter] hello there");
    assert!(text(&replayed).contains("echo: [starter] hello there"));
    let (result, seen) = acp.prompt(&session, "and again").await;
    assert!(result.is_ok());
    assert!(text(&seen).contains("echo: [starter] and again"));
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(saved["messages"].as_array().unwrap().len(), 4);
    let (code, _, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_surface_client_gets_notifications_and_answers_forms() {
    let (installed, env) = home_with_examples();
    add_asker(&env);
    let workspace = installed.workspace.path();
    let mut acp = Acp::start(installed.home.path(), workspace, &[]).await;
    acp.initialize(true).await;
    let session = acp.new_session(workspace).await.session_id.0.to_string();

    let prompt = acp.start_prompt(&session, "hi");
    let seen = acp.until(|i| matches!(i, Inbound::Form(..))).await;
    let Some(Inbound::Form(request, responder)) = seen.into_iter().last() else {
        unreachable!()
    };
    assert_eq!(request["sessionId"], session.as_str());
    assert_eq!(request["plugin"], "asker");
    assert_eq!(request["surfaceId"], "asker.q");
    assert_eq!(request["kind"], "input");
    assert_eq!(request["form"]["title"], "Who?");
    assert_eq!(request["form"]["fields"][0]["key"], "value");
    responder
        .respond(json!({"values": {"value": "Ada"}}))
        .unwrap();
    let (result, seen) = acp.finish_prompt(prompt).await;
    assert!(result.is_ok());
    assert!(
        env.log().iter().any(|l| l.contains("Ada")),
        "the extension got the answer: {:?}",
        env.log()
    );
    // status-ui's surfaces arrive as vendor notifications, not as text.
    let surfaces = vendor(&seen, SURFACE);
    let status = surfaces
        .iter()
        .find(|s| s["surfaceId"] == "status-ui.status")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(status["sessionId"], session.as_str());
    assert_eq!(status["plugin"], "status-ui");
    assert_eq!(status["generation"], 1);
    assert_eq!(status["kind"], "status");
    assert_eq!(status["payload"]["label"], "1 inputs, 2 words");
    let card = surfaces
        .iter()
        .find(|s| s["surfaceId"] == "status-ui.card")
        .unwrap();
    assert_eq!(card["kind"], "card");
    assert_eq!(card["payload"]["actions"][0]["actionId"], "reset");
    let said = text(&seen);
    assert!(!said.contains("[status-ui]"), "{said}");
    assert!(said.contains("echo: [starter] hi"), "{said}");

    // A form published by an action arrives as a surface.
    let (result, seen) = acp.prompt(&session, "/status-ui:rename").await;
    assert!(result.is_ok());
    let form = vendor(&seen, SURFACE)
        .into_iter()
        .find(|s| s["kind"] == "form")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(form["surfaceId"], "status-ui.rename");
    assert_eq!(form["payload"]["fields"][0]["key"], "name");

    // An answer that does not fit the form is cancelled (the turn goes on).
    let prompt = acp.start_prompt(&session, "again");
    let seen = acp.until(|i| matches!(i, Inbound::Form(..))).await;
    let Some(Inbound::Form(_, responder)) = seen.into_iter().last() else {
        unreachable!()
    };
    responder.respond(json!({"values": {"nope": 1}})).unwrap();
    let (result, _) = acp.finish_prompt(prompt).await;
    assert!(result.is_ok());
    assert!(
        acp.stderr()
            .contains("values.nope: the form has no such field"),
        "{}",
        acp.stderr()
    );
    let (code, _, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_asked_mid_turn_is_queued_then_applied() {
    let (installed, env) = home_with_examples();
    let tagger = env.plugin(
        "tagger",
        json!({}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "replace", "appendText": " (old)"}}}),
    );
    env.install(&tagger, true);
    let workspace = installed.workspace.path();
    let call = r#"write_file={"path":"made.txt","content":"x"}"#;
    let mut acp = Acp::start(installed.home.path(), workspace, &["--call", call]).await;
    acp.initialize(false).await;
    let session = acp.new_session(workspace).await.session_id.0.to_string();

    // The turn waits on the permission question: mid-turn for sure.
    let prompt = acp.start_prompt(&session, "one");
    let seen = acp.until(|i| matches!(i, Inbound::Permission(..))).await;
    // The first round's answer streamed before the tool call.
    assert!(
        text(&seen).contains("echo: [starter] one (old)"),
        "{seen:?}"
    );
    let Some(Inbound::Permission(_, responder)) = seen.into_iter().last() else {
        unreachable!()
    };
    env.rewrite_script(
        &tagger,
        "tagger",
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "replace", "appendText": " (new)"}}}),
    );
    let reload = || UntypedMessage::new(RELOAD, json!({"sessionId": session})).unwrap();
    let first = acp.request(reload()).await.unwrap();
    assert_eq!(first["outcome"], "queued", "{first}");
    assert_eq!(first["generation"], 1);
    assert_eq!(acp.request(reload()).await.unwrap()["outcome"], "queued");
    responder.respond(select("allow-once")).unwrap();
    let (result, seen) = acp.finish_prompt(prompt).await;
    assert_eq!(
        serde_json::to_value(result.unwrap()).unwrap()["stopReason"],
        "end_turn"
    );
    assert!(
        text(&seen).contains("write_file → wrote 1 bytes"),
        "{}",
        text(&seen)
    );
    // Exactly one reload ran, when the turn ended, and the client was told.
    let applied = vendor(&seen, RELOAD_APPLIED);
    assert_eq!(applied.len(), 1, "{seen:?}");
    assert_eq!(applied[0]["sessionId"], session.as_str());
    assert_eq!(applied[0]["outcome"], "applied");
    assert_eq!(applied[0]["generation"], 2);
    assert_eq!(applied[0]["previousGeneration"], 1);
    // The commands and the models are sent again after the swap.
    let position = |pick: &dyn Fn(&Inbound) -> bool| seen.iter().position(pick).unwrap();
    let applied_at = position(&|i| matches!(i, Inbound::Vendor(m, _) if m == RELOAD_APPLIED));
    let commands_at = seen
        .iter()
        .rposition(|i| matches!(i, Inbound::Update(n) if n["update"]["sessionUpdate"] == "available_commands_update"))
        .expect("commands after the reload");
    assert!(commands_at > applied_at);
    assert!(!updates(&seen, "config_option_update").is_empty());

    // The next turn runs on the new generation.
    let prompt = acp.start_prompt(&session, "two");
    let seen = acp.until(|i| matches!(i, Inbound::Permission(..))).await;
    assert!(
        text(&seen).contains("echo: [starter] two (new)"),
        "{seen:?}"
    );
    let Some(Inbound::Permission(_, responder)) = seen.into_iter().last() else {
        unreachable!()
    };
    responder.respond(select("allow-once")).unwrap();
    let (result, _) = acp.finish_prompt(prompt).await;
    assert!(result.is_ok());

    // While idle a reload applies at once (no separate notification).
    let now = acp.request(reload()).await.unwrap();
    assert_eq!(now["outcome"], "applied", "{now}");
    assert_eq!(now["generation"], 3);
    let (_, seen) = acp.prompt(&session, "/status").await;
    assert!(text(&seen).contains("generation 3"), "{}", text(&seen));
    assert!(vendor(&seen, RELOAD_APPLIED).is_empty(), "{seen:?}");

    // A build that fails keeps the old generation serving, and says why.
    std::fs::write(tagger.join("reasonix-plugin.json"), "{ not json").unwrap();
    let failed = acp.request(reload()).await.unwrap();
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["generation"], 3);
    assert!(
        failed["why"].as_str().unwrap().contains("tagger"),
        "{failed}"
    );

    // Bad params are typed errors naming the field.
    let bad = acp
        .request(UntypedMessage::new(RELOAD, json!({"sessionId": "../../etc"})).unwrap())
        .await
        .unwrap_err();
    assert_eq!(bad.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(bad.data.as_ref().unwrap()["path"], "sessionId");
    let unknown = acp
        .request(UntypedMessage::new(RELOAD, json!({"sessionId": "rs-nope"})).unwrap())
        .await
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::RESOURCE_NOT_FOUND);
    let (code, _, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_go_to_the_client_reject_allow_and_always() {
    let env = Env::new();
    let call = r#"write_file={"path":"made.txt","content":"x"}"#;
    let mut acp = Acp::start(&env.home, &env.workspace, &["--call", call]).await;
    acp.initialize(false).await;
    let session = acp
        .new_session(&env.workspace)
        .await
        .session_id
        .0
        .to_string();
    let made = env.workspace.join("made.txt");

    // Rejected: the call never runs.
    let prompt = acp.start_prompt(&session, "write it");
    let seen = acp.until(|i| matches!(i, Inbound::Permission(..))).await;
    let call_update = updates(&seen, "tool_call");
    assert_eq!(call_update[0]["title"], "write_file");
    assert_eq!(call_update[0]["kind"], "edit");
    assert_eq!(call_update[0]["status"], "in_progress");
    assert_eq!(
        call_update[0]["locations"][0]["path"],
        made.display().to_string()
    );
    let Some(Inbound::Permission(request, responder)) = seen.into_iter().last() else {
        unreachable!()
    };
    assert_eq!(request["sessionId"], session.as_str());
    assert_eq!(
        request["toolCall"]["toolCallId"],
        call_update[0]["toolCallId"]
    );
    assert_eq!(request["toolCall"]["rawInput"]["path"], "made.txt");
    let kinds: Vec<&str> = request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
    responder.respond(select("reject-once")).unwrap();
    let (result, seen) = acp.finish_prompt(prompt).await;
    assert!(result.is_ok());
    let done = updates(&seen, "tool_call_update");
    assert_eq!(done[0]["status"], "failed", "{seen:?}");
    assert_eq!(done[0]["rawOutput"]["decidedBy"], "the user");
    assert!(!made.exists());

    // Always allowed: it runs, and the next turn is not asked.
    let prompt = acp.start_prompt(&session, "write it");
    let seen = acp.until(|i| matches!(i, Inbound::Permission(..))).await;
    let Some(Inbound::Permission(_, responder)) = seen.into_iter().last() else {
        unreachable!()
    };
    responder.respond(select("allow-always")).unwrap();
    let (_, seen) = acp.finish_prompt(prompt).await;
    assert_eq!(updates(&seen, "tool_call_update")[0]["status"], "completed");
    assert!(made.exists());
    let (result, seen) = acp.prompt(&session, "write it").await;
    assert!(result.is_ok());
    assert_eq!(updates(&seen, "tool_call_update")[0]["status"], "completed");

    // The client cancelling the permission question cancels the turn.
    std::fs::remove_file(&made).unwrap();
    let (code, _, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
    let mut acp = Acp::start(&env.home, &env.workspace, &["--call", call]).await;
    acp.initialize(false).await;
    let session = acp
        .new_session(&env.workspace)
        .await
        .session_id
        .0
        .to_string();
    let prompt = acp.start_prompt(&session, "write it");
    let seen = acp.until(|i| matches!(i, Inbound::Permission(..))).await;
    let Some(Inbound::Permission(_, responder)) = seen.into_iter().last() else {
        unreachable!()
    };
    responder
        .respond(RequestPermissionResponse::new(
            RequestPermissionOutcome::Cancelled,
        ))
        .unwrap();
    let (result, _) = acp.finish_prompt(prompt).await;
    assert_eq!(
        serde_json::to_value(result.unwrap()).unwrap()["stopReason"],
        "cancelled"
    );
    assert!(!made.exists());
    let (code, _, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_provider_stream_and_the_model_picker_switches() {
    let env = Env::new();
    env.add(
        "streamer",
        json!({"capabilities": ["providers"]}),
        json!({"providers": [{"ref": "plugin/streamer/p/m"}],
               "streams": {"*": {"chunks": [[1, {"type": "text", "text": "first words"}]], "hold": true}}}),
    );
    let mut acp = Acp::start(&env.home, &env.workspace, &[]).await;
    acp.initialize(false).await;
    let new = serde_json::to_value(acp.new_session(&env.workspace).await).unwrap();
    let session = new["sessionId"].as_str().unwrap().to_string();
    let values: Vec<&str> = new["configOptions"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["echo", "plugin/streamer/p/m"]);

    let unknown = acp
        .request(SetSessionConfigOptionRequest::new(
            session.clone(),
            "model",
            "plugin/nope/p/m",
        ))
        .await
        .unwrap_err();
    assert_eq!(unknown.data.as_ref().unwrap()["errorCode"], "model.unknown");
    let other = acp
        .request(SetSessionConfigOptionRequest::new(
            session.clone(),
            "mode",
            "x",
        ))
        .await
        .unwrap_err();
    assert_eq!(other.code, ErrorCode::INVALID_PARAMS);
    let set = acp
        .request(SetSessionConfigOptionRequest::new(
            session.clone(),
            "model",
            "plugin/streamer/p/m",
        ))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(set).unwrap()["configOptions"][0]["currentValue"],
        "plugin/streamer/p/m"
    );

    let prompt = acp.start_prompt(&session, "go");
    acp.until(
        |i| matches!(i, Inbound::Update(n) if n["update"]["content"]["text"] == "first words"),
    )
    .await;
    acp.cx
        .send_notification(CancelNotification::new(session.clone()))
        .unwrap();
    let (result, _) = acp.finish_prompt(prompt).await;
    assert_eq!(
        serde_json::to_value(result.unwrap()).unwrap()["stopReason"],
        "cancelled"
    );
    assert!(
        env.log()
            .iter()
            .any(|l| l.starts_with("streamer stream-cancel es_")),
        "{:?}",
        env.log()
    );

    // Back to echo through the picker; the session goes on.
    acp.request(SetSessionConfigOptionRequest::new(
        session.clone(),
        "model",
        "echo",
    ))
    .await
    .unwrap();
    let (result, seen) = acp.prompt(&session, "still here").await;
    assert!(result.is_ok());
    assert!(text(&seen).contains("echo: still here"));
    // `/model` from a prompt updates the picker too.
    let (_, seen) = acp.prompt(&session, "/model plugin/streamer/p/m").await;
    let update = updates(&seen, "config_option_update");
    assert_eq!(
        update.last().unwrap()["configOptions"][0]["currentValue"],
        "plugin/streamer/p/m",
        "{seen:?}"
    );
    let (code, _, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_open_and_close_and_bad_requests_get_typed_errors() {
    let env = Env::new();
    let mut acp = Acp::start(&env.home, &env.workspace, &[]).await;
    acp.initialize(false).await;

    let missing = acp
        .request(PromptRequest::new(
            "rs-nope",
            vec![ContentBlock::from("hi")],
        ))
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::RESOURCE_NOT_FOUND);
    let escape = acp
        .request(LoadSessionRequest::new(
            "../../etc/passwd",
            env.workspace.clone(),
        ))
        .await
        .unwrap_err();
    assert_eq!(escape.code, ErrorCode::INVALID_PARAMS);
    assert!(escape.message.contains("sessionId"), "{}", escape.message);
    let unsaved = acp
        .request(LoadSessionRequest::new(
            "rs-never-saved",
            env.workspace.clone(),
        ))
        .await
        .unwrap_err();
    assert_eq!(unsaved.code, ErrorCode::RESOURCE_NOT_FOUND);
    let nowhere = acp
        .request(NewSessionRequest::new(env.workspace.join("missing")))
        .await
        .unwrap_err();
    assert_eq!(
        nowhere.data.as_ref().unwrap()["errorCode"],
        "session.workspace_missing"
    );
    // A corrupt session file is named and left alone.
    let sessions = env.home.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("rs-broken.json"), "{\"version\":1,").unwrap();
    let corrupt = acp
        .request(LoadSessionRequest::new("rs-broken", env.workspace.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        corrupt.data.as_ref().unwrap()["errorCode"],
        "session.file_unreadable"
    );
    assert!(
        corrupt.message.contains("rs-broken.json"),
        "{}",
        corrupt.message
    );
    assert_eq!(
        std::fs::read_to_string(sessions.join("rs-broken.json")).unwrap(),
        "{\"version\":1,"
    );

    let session = acp
        .new_session(&env.workspace)
        .await
        .session_id
        .0
        .to_string();
    let image = acp
        .request(PromptRequest::new(
            session.clone(),
            vec![ContentBlock::Image(ImageContent::new("AAAA", "image/png"))],
        ))
        .await
        .unwrap_err();
    assert_eq!(image.code, ErrorCode::INVALID_PARAMS);
    assert!(image.message.contains("images are not supported"));
    let unknown = acp
        .request(UntypedMessage::new("_reasonix.io/nothing", json!({})).unwrap())
        .await
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::METHOD_NOT_FOUND);
    // Still serving.
    let (result, seen) = acp.prompt(&session, "fine").await;
    assert!(result.is_ok());
    assert!(text(&seen).contains("echo: fine"));

    // Two sessions on one connection are independent; an open session
    // cannot be loaded twice; a closed one is gone.
    let second = acp
        .new_session(&env.workspace)
        .await
        .session_id
        .0
        .to_string();
    assert_ne!(second, session);
    let (_, seen) = acp.prompt(&second, "other").await;
    assert!(text(&seen).contains("echo: other"));
    let twice = acp
        .request(LoadSessionRequest::new(
            session.clone(),
            env.workspace.clone(),
        ))
        .await
        .unwrap_err();
    assert_eq!(twice.code, ErrorCode::INVALID_REQUEST);
    acp.request(CloseSessionRequest::new(second.clone()))
        .await
        .unwrap();
    let gone = acp
        .request(PromptRequest::new(
            second.clone(),
            vec![ContentBlock::from("hi")],
        ))
        .await
        .unwrap_err();
    assert_eq!(gone.code, ErrorCode::RESOURCE_NOT_FOUND);
    let (result, _) = acp.prompt(&session, "first is still open").await;
    assert!(result.is_ok());
    let (code, _, stderr) = acp.finish().await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
}

#[test]
fn a_bad_call_flag_is_a_usage_error() {
    let out = std::process::Command::new(REASONIX)
        .args(["acp", "--call", "write_file=[1]"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on stdout but frames");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--call write_file: the arguments must be a JSON object"),
        "{stderr}"
    );
}
