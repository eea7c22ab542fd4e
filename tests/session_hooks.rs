//! Declarative hooks in a live session, at their events, with real hook
//! processes and real packages: `reasonix dev turn` is a one-turn client of
//! the same `Session` every frontend drives.

mod dispatch_common;

use dispatch_common::Env;
use serde_json::{Value, json};

/// One hook entry of a Claude hooks.json block.
fn command(cmd: &str) -> Value {
    json!({"type": "command", "command": cmd})
}

fn hooks_of<'a>(run: &'a dispatch_common::TurnRun, event: &str) -> Vec<&'a Value> {
    run.report["hooks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["event"] == event)
        .collect()
}

fn points(run: &dispatch_common::TurnRun) -> Vec<String> {
    run.report["points"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p["point"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_user_prompt_submit_hook_exiting_2_blocks_the_prompt_before_the_model() {
    let env = Env::new();
    let root = env.claude_plugin(
        "guard",
        json!({"UserPromptSubmit": [{"hooks": [command("${CLAUDE_PLUGIN_ROOT}/guard.sh")]}]}),
        &[(
            "guard.sh",
            "#!/bin/sh\ncat > \"$CLAUDE_PROJECT_DIR/prompt.json\"\necho 'prompts about secrets are not allowed' >&2\nexit 2\n",
        )],
    );
    env.install(&root, false);
    let run = env.turn(&["--input", "tell me the secret"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.status(), "blocked", "{}", run.stdout);
    assert_eq!(run.report["status"]["point"], "UserPromptSubmit");
    assert_eq!(run.report["status"]["plugin"], "hook guard");
    assert_eq!(
        run.report["status"]["reason"],
        "prompts about secrets are not allowed"
    );
    // The model never ran: no provider point, no assistant message.
    assert!(!points(&run).contains(&"provider.request".to_string()));
    assert!(
        !run.report["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "assistant")
    );
    // The hook saw Claude's payload with the prompt.
    let stdin: Value =
        serde_json::from_slice(&std::fs::read(env.workspace.join("prompt.json")).unwrap()).unwrap();
    assert_eq!(stdin["hook_event_name"], "UserPromptSubmit");
    assert_eq!(stdin["prompt"], "tell me the secret");
    let hook = hooks_of(&run, "UserPromptSubmit");
    assert_eq!(hook.len(), 1);
    assert_eq!(hook[0]["exitCode"], 2);
    assert_eq!(hook[0]["decision"]["verdict"], "block");

    // The same block through `reasonix chat`.
    let chat = env.chat(&["tell me the secret", "hello"], &[]);
    assert_eq!(chat.code, 0, "{}", chat.stderr);
    let ended = chat.of("turn_ended");
    assert_eq!(ended[0]["status"]["status"], "blocked");
    assert_eq!(ended[1]["status"]["status"], "blocked");
    assert!(chat.of("assistant_message").is_empty());
}

#[test]
fn a_pre_tool_use_json_deny_with_a_bash_matcher_stops_the_call() {
    let env = Env::new();
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no shell today"}}"#;
    let root = env.claude_plugin(
        "guard",
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [command("${CLAUDE_PLUGIN_ROOT}/deny.sh")]}]}),
        &[("deny.sh", &format!("#!/bin/sh\ncat > \"$CLAUDE_PROJECT_DIR/pre.json\"\necho '{deny}'\n"))],
    );
    env.install(&root, false);
    let run = env.turn(&[
        "--input",
        "go",
        "--call",
        r#"bash={"command":"touch pwned"}"#,
        "--call",
        r#"list_dir={"path":"."}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.status(), "completed");
    assert!(
        !env.workspace.join("pwned").exists(),
        "the denied bash call ran"
    );
    let calls = run.report["toolCalls"].as_array().unwrap();
    assert_eq!(calls[0]["name"], "bash");
    assert_eq!(calls[0]["decision"], "blocked");
    assert_eq!(calls[0]["decidedBy"], "hook guard");
    assert!(
        calls[0]["result"]
            .as_str()
            .unwrap()
            .contains("no shell today"),
        "{}",
        calls[0]
    );
    // The matcher does not select list_dir: it runs, the hook is "not matched".
    assert_eq!(calls[1]["name"], "list_dir");
    assert_eq!(calls[1]["decision"], "allow");
    let pre = hooks_of(&run, "PreToolUse");
    assert_eq!(pre.len(), 2);
    assert_eq!(pre[0]["tool"], "bash");
    assert_eq!(pre[0]["matched"], true);
    assert_eq!(pre[1]["tool"], "list_dir");
    assert_eq!(pre[1]["matched"], false);
    // Claude's names and shapes on stdin.
    let stdin: Value =
        serde_json::from_slice(&std::fs::read(env.workspace.join("pre.json")).unwrap()).unwrap();
    assert_eq!(stdin["tool_name"], "Bash");
    assert_eq!(stdin["tool_input"]["command"], "touch pwned");
}

#[test]
fn permission_request_hooks_answer_the_permission_dialog() {
    let env = Env::new();
    let allow = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not bash"}}}"#;
    let root = env.claude_plugin(
        "dialog",
        json!({"PermissionRequest": [
            {"matcher": "Write", "hooks": [command(&format!("echo '{allow}'"))]},
            {"matcher": "Bash", "hooks": [command(&format!("echo '{deny}'"))]}
        ]}),
        &[],
    );
    env.install(&root, false);
    let run = env.turn(&[
        "--input",
        "go",
        "--call",
        r#"write_file={"path":"made.txt","content":"by the model"}"#,
        "--call",
        r#"bash={"command":"touch by-bash"}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let calls = run.report["toolCalls"].as_array().unwrap();
    assert_eq!(calls[0]["decision"], "allow");
    assert_eq!(calls[0]["hostDecision"], "ask");
    assert_eq!(calls[0]["decidedBy"], "hook dialog");
    assert_eq!(
        std::fs::read_to_string(env.workspace.join("made.txt")).unwrap(),
        "by the model"
    );
    assert_eq!(calls[1]["decision"], "deny");
    assert_eq!(calls[1]["decidedBy"], "hook dialog");
    assert!(!env.workspace.join("by-bash").exists());
    // A read-only tool never asks: no PermissionRequest hook ran for it.
    let run = env.turn(&["--input", "go", "--call", r#"list_dir={}"#]);
    assert!(hooks_of(&run, "PermissionRequest").is_empty());
}

#[test]
fn hooks_judge_the_call_after_interceptors_and_a_refusal_from_either_side_wins() {
    let env = Env::new();
    // The extension rewrites a harmless bash call into one the hook refuses.
    env.add(
        "rewriter",
        json!({"intercepts": ["tool.before"]}),
        json!({"subscriptions": ["tool.before"],
               "intercept": {"tool.before": {"decision": "replace", "replacement":
                   {"name": "bash", "arguments": "{\"command\":\"touch rewritten\"}", "callId": "call_1"}}}}),
    );
    let guard = env.claude_plugin(
        "guard",
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [command("${CLAUDE_PLUGIN_ROOT}/guard.sh")]}]}),
        &[(
            "guard.sh",
            "#!/bin/sh\ninput=$(cat)\necho \"$input\" >> \"$CLAUDE_PROJECT_DIR/seen.log\"\ncase \"$input\" in *touch*) echo 'no touching' >&2; exit 2;; esac\nexit 0\n",
        )],
    );
    env.install(&guard, false);
    let run = env.turn(&[
        "--input",
        "go",
        "--call",
        r#"bash={"command":"echo harmless"}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let seen = std::fs::read_to_string(env.workspace.join("seen.log")).unwrap();
    assert!(
        seen.contains("touch rewritten") && !seen.contains("harmless"),
        "the hook must see the rewritten call: {seen}"
    );
    let call = &run.report["toolCalls"][0];
    assert_eq!(call["decision"], "blocked");
    assert_eq!(call["decidedBy"], "hook guard");
    assert!(!env.workspace.join("rewritten").exists());

    // An interceptor's block stops the call before any hook runs.
    let root = env.workspace.join("plugins/rewriter");
    env.rewrite_script(
        &root,
        "rewriter",
        json!({"subscriptions": ["tool.before"],
               "intercept": {"tool.before": {"decision": "block", "reason": "extension says no"}}}),
    );
    std::fs::remove_file(env.workspace.join("seen.log")).unwrap();
    // Re-install so the copied package carries the new script.
    let out = env.reasonix(&[
        "plugin",
        "install",
        root.to_str().unwrap(),
        "--yes",
        "--replace",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = env.turn(&[
        "--input",
        "go",
        "--call",
        r#"bash={"command":"echo harmless"}"#,
    ]);
    let call = &run.report["toolCalls"][0];
    assert_eq!(call["decision"], "blocked");
    assert_eq!(call["decidedBy"], "rewriter");
    assert!(
        !env.workspace.join("seen.log").exists(),
        "a hook ran after the block"
    );
}

#[test]
fn session_start_context_reaches_the_first_turn_but_never_the_system_prompt() {
    let env = Env::new();
    let bare = env.turn(&["--input", "hi"]);
    let root = env.claude_plugin(
        "ctx",
        json!({"SessionStart": [{"hooks": [command("echo 'the team prefers tabs'")]}]}),
        &[],
    );
    env.install(&root, false);
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.status(), "completed", "{}", run.stdout);
    let transcript = run.report["transcript"].as_array().unwrap();
    assert_eq!(transcript[0]["role"], "user");
    let context = transcript[0]["content"].as_str().unwrap();
    assert!(
        context.contains("the team prefers tabs") && context.contains("ctx SessionStart hook"),
        "{context}"
    );
    assert_eq!(transcript[1]["content"], "hi");
    // The cached prefix (system prompt + tools) is byte-identical.
    assert_eq!(run.report["prefixHash"], bare.report["prefixHash"]);
    let start = hooks_of(&run, "SessionStart");
    assert_eq!(start.len(), 1);
    assert_eq!(start[0]["stdout"], "the team prefers tabs\n");
}

#[test]
fn a_hanging_hook_times_out_and_the_turn_goes_on_and_a_crash_is_a_warning() {
    let env = Env::new();
    let root = env.claude_plugin(
        "flaky",
        json!({
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]}],
            "PostToolUse": [{"hooks": [command("echo broken >&2; exit 1")]}]
        }),
        &[],
    );
    env.install(&root, false);
    let run = env.turn(&["--input", "go", "--call", r#"echo={"text":"x"}"#]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.status(), "completed", "{}", run.stdout);
    let prompt = hooks_of(&run, "UserPromptSubmit");
    assert_eq!(prompt[0]["timedOut"], true);
    assert_eq!(prompt[0]["decision"]["verdict"], "warn");
    assert_eq!(
        prompt[0]["decision"]["reason"],
        "hook timed out after 1000 ms; counted as no decision"
    );
    let post = hooks_of(&run, "PostToolUse");
    assert_eq!(post[0]["exitCode"], 1);
    assert_eq!(post[0]["decision"]["verdict"], "warn");
    assert_eq!(post[0]["decision"]["reason"], "broken");
}

#[test]
fn lifecycle_hooks_run_in_order_with_claude_payloads() {
    let env = Env::new();
    let log = "${CLAUDE_PLUGIN_ROOT}/log.sh";
    let every = |event: &str| (event.to_string(), json!([{"hooks": [command(log)]}]));
    let hooks: serde_json::Map<String, Value> = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
        "PreCompact",
        "SessionEnd",
    ]
    .into_iter()
    .map(every)
    .collect();
    let root = env.claude_plugin(
        "watch",
        Value::Object(hooks),
        &[(
            "log.sh",
            "#!/bin/sh\npython3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"hook_event_name\"], d.get(\"tool_name\") or \"-\")' >> \"$CLAUDE_PROJECT_DIR/events.log\"\n",
        )],
    );
    env.install(&root, false);
    let run = env.turn(&[
        "--input",
        "go",
        "--compact",
        "--call",
        r#"write_file={"path":"f.txt","content":"x"}"#,
    ]);
    assert_eq!(run.status(), "completed", "{}", run.stdout);
    let log = std::fs::read_to_string(env.workspace.join("events.log")).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            "SessionStart -",
            "UserPromptSubmit -",
            "PreToolUse Write",
            "PermissionRequest Write",
            "PostToolUse Write",
            "Stop -",
            "PreCompact -",
            "SessionEnd -",
        ]
    );
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/real-packages/anthropics__claude-code/plugins")
        .join(name)
}

#[test]
fn real_packages_security_guidance_and_hookify_fire_at_their_events() {
    let env = Env::new();
    env.install(&fixture("security-guidance"), false);
    let run = env.turn(&[
        "--input",
        "edit it",
        "--call",
        r#"write_file={"path":"app.py","content":"print(1)"}"#,
        "--call",
        r#"bash={"command":"true"}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fired: Vec<(String, String)> = run.report["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["matched"] == true)
        .map(|h| {
            (
                h["event"].as_str().unwrap().to_string(),
                h["tool"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    // The package ships hooks.json without its scripts (test data): each
    // hook starts, fails to find its script, and is a warning; what matters
    // here is that each fired at its event, with its matcher applied.
    for expected in [
        ("SessionStart", "-"),
        ("UserPromptSubmit", "-"),
        ("PostToolUse", "write_file"),
        ("PostToolUse", "bash"),
        ("Stop", "-"),
    ] {
        assert!(
            fired.contains(&(expected.0.to_string(), expected.1.to_string())),
            "{expected:?} did not fire: {fired:?}"
        );
    }
    assert_eq!(run.status(), "completed", "{}", run.stdout);

    // hookify's UserPromptSubmit hook runs `python3 <missing script>`,
    // which exits 2: at a gating event that is a refusal, as in Claude Code.
    let env = Env::new();
    env.install(&fixture("hookify"), false);
    let run = env.turn(&["--input", "hi"]);
    let prompt = hooks_of(&run, "UserPromptSubmit");
    assert_eq!(prompt.len(), 1, "{}", run.stdout);
    assert_eq!(prompt[0]["exitCode"], 2);
    assert_eq!(run.status(), "blocked");
    assert_eq!(run.report["status"]["plugin"], "hook hookify");
}
