//! Hook execution end to end: every case builds a real plugin package, runs
//! `reasonix dev hook … --json` (real child processes), and checks what the
//! hook saw and what was decided.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

struct Case {
    name: &'static str,
    /// `hooks/hooks.json` `hooks` object of a Claude package.
    hooks: Value,
    event: &'static str,
    payload: Value,
    /// Checks on the `hooks` array of the JSON output.
    check: fn(&Path, &[Value]),
}

fn reasonix() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reasonix"))
}

struct Env {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    workspace: PathBuf,
}

fn package(hooks: &Value) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("plugin with space");
    let home = dir.path().join("home");
    let workspace = dir.path().join("ws");
    for d in [
        &root.join(".claude-plugin"),
        &root.join("hooks"),
        &home,
        &workspace,
    ] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(
        root.join(".claude-plugin/plugin.json"),
        r#"{"name":"hooktest","version":"1.2.3"}"#,
    )
    .unwrap();
    fs::write(
        root.join("hooks/hooks.json"),
        json!({ "hooks": hooks }).to_string(),
    )
    .unwrap();
    Env {
        _dir: dir,
        root,
        home,
        workspace,
    }
}

fn run_dev_hook(
    env: &Env,
    event: &str,
    payload: &Value,
    extra_env: &[(&str, &str)],
) -> (i32, Value) {
    let payload_file = env.workspace.join("payload.json");
    fs::write(&payload_file, payload.to_string()).unwrap();
    let mut cmd = reasonix();
    cmd.args(["dev", "hook", "hooktest", event, "--json", "--root"])
        .arg(&env.root)
        .arg("--payload")
        .arg(&payload_file)
        .arg("--workspace")
        .arg(&env.workspace)
        .env("REASONIX_HOME", &env.home);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let parsed: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), parsed)
}

fn one(runs: &[Value]) -> &Value {
    assert_eq!(runs.len(), 1, "{runs:#?}");
    &runs[0]
}

fn verdict(run: &Value) -> &str {
    run["decision"]["verdict"].as_str().unwrap()
}

fn reason(run: &Value) -> &str {
    run["decision"]["reason"].as_str().unwrap_or("")
}

fn stdin_seen(run: &Value) -> Value {
    serde_json::from_str(run["stdout"].as_str().unwrap().trim()).unwrap()
}

fn hook_on(event: &str, matcher: Option<&str>, item: Value) -> Value {
    let mut block = json!({ "hooks": [item] });
    if let Some(m) = matcher {
        block["matcher"] = Value::String(m.into());
    }
    json!({ event: [block] })
}

/// Whether process `pid` is gone (or a zombie) within a generous bound:
/// SIGKILL is asynchronous, so the test waits for the effect instead of timing it.
fn dies(pid: &str) -> bool {
    for _ in 0..500 {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) => {
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                if state.starts_with('Z') || state.starts_with('X') {
                    return true;
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "exec form passes every argument literally",
            hooks: hook_on(
                "SessionStart",
                None,
                json!({"command": "printf", "args": ["[%s]\n", "", "two words", "$HOME", "%PATH%", "!X!", "&&|>", "it's \"quoted\"", "C:\\Users\\x", "line1\nline2", "emoji 🎉✓"]}),
            ),
            event: "SessionStart",
            payload: json!({}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(r["form"], "exec");
                assert_eq!(r["exitCode"], 0);
                assert_eq!(
                    r["stdout"],
                    "[]\n[two words]\n[$HOME]\n[%PATH%]\n[!X!]\n[&&|>]\n[it's \"quoted\"]\n[C:\\Users\\x]\n[line1\nline2]\n[emoji 🎉✓]\n"
                );
                assert_eq!(verdict(r), "pass");
            },
        },
        Case {
            name: "plugin root placeholders expand textually in every spelling",
            hooks: hook_on(
                "SessionStart",
                None,
                json!({"command": "printf", "args": ["%s|%s|%s|%s|%s\n", "${CLAUDE_PLUGIN_ROOT}/a", "$CLAUDE_PLUGIN_ROOT", "%CLAUDE_PLUGIN_ROOT%", "${REASONIX_PLUGIN_ROOT}", "$REASONIX_PLUGIN_ROOTX"]}),
            ),
            event: "SessionStart",
            payload: json!({}),
            check: |root, runs| {
                let r = root.display().to_string();
                assert_eq!(
                    one(runs)["stdout"],
                    format!("{r}/a|{r}|{r}|{r}|$REASONIX_PLUGIN_ROOTX\n")
                );
            },
        },
        Case {
            name: "shell form without shell runs sh -c with shell syntax",
            hooks: hook_on(
                "SessionStart",
                None,
                json!({"command": "printf '%s' \"$HOME\" | tr / _ && echo && echo second > /dev/stderr; cd \"${CLAUDE_PLUGIN_ROOT}\" && basename \"$(pwd)\""}),
            ),
            event: "SessionStart",
            payload: json!({}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(r["form"], "shell");
                let home = std::env::var("HOME").unwrap().replace('/', "_");
                assert_eq!(r["stdout"], format!("{home}\nplugin with space\n"));
                assert_eq!(r["stderr"], "second\n");
            },
        },
        Case {
            name: "shell form bash runs through bash",
            hooks: hook_on(
                "SessionStart",
                None,
                json!({"command": "[[ 1 == 1 ]] && echo \"bash ${BASH_VERSION:+yes}\"", "shell": "bash"}),
            ),
            event: "SessionStart",
            payload: json!({}),
            check: |_, runs| assert_eq!(one(runs)["stdout"], "bash yes\n"),
        },
        Case {
            name: "powershell is a clear not-available error without pwsh",
            hooks: hook_on(
                "SessionStart",
                None,
                json!({"command": "Write-Output hi", "shell": "powershell"}),
            ),
            event: "SessionStart",
            payload: json!({}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(verdict(r), "error");
                assert!(reason(r).contains("not available here"), "{r}");
            },
        },
        Case {
            name: "the seven environment variables and hook env",
            hooks: hook_on(
                "SessionStart",
                None,
                json!({"command": "env | grep -E '^(REASONIX_|CLAUDE_|HOOK_)' | sort", "env": {"HOOK_DATA": "${CLAUDE_PLUGIN_ROOT}/data"}}),
            ),
            event: "SessionStart",
            payload: json!({}),
            check: |root, runs| {
                let out = one(runs)["stdout"].as_str().unwrap().to_owned();
                let r = root.display().to_string();
                let home = root.parent().unwrap().join("home").display().to_string();
                let ws = root.parent().unwrap().join("ws").display().to_string();
                let expected = [
                    format!("CLAUDE_PLUGIN_ROOT={r}"),
                    format!("CLAUDE_PROJECT_DIR={ws}"),
                    format!("HOOK_DATA={r}/data"),
                    format!("REASONIX_HOME={home}"),
                    "REASONIX_PLUGIN_NAME=hooktest".to_owned(),
                    format!("REASONIX_PLUGIN_ROOT={r}"),
                    "REASONIX_PLUGIN_VERSION=1.2.3".to_owned(),
                    format!("REASONIX_WORKSPACE_ROOT={ws}"),
                ];
                let lines: Vec<&str> = out.lines().collect();
                assert_eq!(lines, expected);
            },
        },
        Case {
            name: "stdin is the Claude snake_case payload with hook_event_name",
            hooks: hook_on("UserPromptSubmit", None, json!({"command": "cat"})),
            event: "UserPromptSubmit",
            payload: json!({"prompt": "hello ✓", "sessionId": "s1"}),
            check: |root, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(seen["hook_event_name"], "UserPromptSubmit");
                assert_eq!(seen["prompt"], "hello ✓");
                assert_eq!(seen["session_id"], "s1");
                let ws = root.parent().unwrap().join("ws");
                assert_eq!(seen["cwd"], ws.display().to_string());
                for key in [
                    "tool_name",
                    "tool_input",
                    "tool_response",
                    "last_assistant_message",
                    "source",
                    "reason",
                    "notification_type",
                    "message",
                    "trigger",
                    "error",
                    "is_interrupt",
                ] {
                    assert!(seen.get(key).is_some(), "missing {key}");
                }
            },
        },
        Case {
            name: "Write matcher fires for write_file and sees file_path made absolute",
            hooks: hook_on("PreToolUse", Some("Write|Edit"), json!({"command": "cat"})),
            event: "PreToolUse",
            payload: json!({"toolName": "write_file", "toolArgs": {"path": "src/main.rs", "content": "x"}}),
            check: |root, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(seen["tool_name"], "Write");
                let ws = root.parent().unwrap().join("ws");
                assert_eq!(
                    seen["tool_input"]["file_path"],
                    ws.join("src/main.rs").display().to_string()
                );
                assert!(seen["tool_input"].get("path").is_none());
            },
        },
        Case {
            name: "Bash matcher does not fire for other tools",
            hooks: hook_on("PreToolUse", Some("Bash"), json!({"command": "exit 2"})),
            event: "PreToolUse",
            payload: json!({"toolName": "write_file", "toolArgs": {}}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(r["matched"], false);
                assert_eq!(verdict(r), "pass");
            },
        },
        Case {
            name: "matchers are anchored",
            hooks: hook_on("PreToolUse", Some("Rea"), json!({"command": "exit 2"})),
            event: "PreToolUse",
            payload: json!({"toolName": "read_file", "toolArgs": {}}),
            check: |_, runs| assert_eq!(one(runs)["matched"], false),
        },
        Case {
            name: "payload tool named the Claude way is translated back (Bash -> bash)",
            hooks: hook_on("PreToolUse", Some("Bash"), json!({"command": "cat"})),
            event: "PreToolUse",
            payload: json!({"toolName": "Bash", "toolArgs": {"command": "ls"}}),
            check: |_, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(seen["tool_name"], "Bash");
                assert_eq!(seen["tool_input"]["command"], "ls");
            },
        },
        Case {
            name: "legacy Task matcher fires for every subagent tool, emitted as Agent",
            hooks: hook_on("PreToolUse", Some("Task"), json!({"command": "cat"})),
            event: "PreToolUse",
            payload: json!({"toolName": "explore", "toolArgs": {"task": "map the code"}}),
            check: |_, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(seen["tool_name"], "Agent");
                assert_eq!(seen["tool_input"]["prompt"], "map the code");
                assert_eq!(seen["tool_input"]["description"], "Explore the codebase");
            },
        },
        Case {
            name: "legacy BashOutput matcher fires for bash_output, emitted as TaskOutput",
            hooks: hook_on("PreToolUse", Some("BashOutput"), json!({"command": "cat"})),
            event: "PreToolUse",
            payload: json!({"toolName": "bash_output", "toolArgs": {"job_id": "j7"}}),
            check: |_, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(seen["tool_name"], "TaskOutput");
                assert_eq!(
                    seen["tool_input"],
                    json!({"task_id": "j7", "block": false, "timeout": 0})
                );
            },
        },
        Case {
            name: "legacy KillShell matcher fires for kill_shell, emitted as TaskStop",
            hooks: hook_on("PreToolUse", Some("KillShell"), json!({"command": "cat"})),
            event: "PreToolUse",
            payload: json!({"toolName": "kill_shell", "toolArgs": {"job_id": "j7"}}),
            check: |_, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(seen["tool_name"], "TaskStop");
                assert_eq!(seen["tool_input"], json!({"task_id": "j7"}));
            },
        },
        Case {
            name: "Skill and NotebookEdit inputs are renamed",
            hooks: hook_on(
                "PreToolUse",
                Some("Skill|NotebookEdit"),
                json!({"command": "cat"}),
            ),
            event: "PreToolUse",
            payload: json!({"toolName": "notebook_edit", "toolArgs": {"path": "n.ipynb", "cell_number": 2}}),
            check: |root, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(seen["tool_name"], "NotebookEdit");
                let ws = root.parent().unwrap().join("ws");
                assert_eq!(
                    seen["tool_input"]["notebook_path"],
                    ws.join("n.ipynb").display().to_string()
                );
                assert_eq!(seen["tool_input"]["new_source"], "");
                assert_eq!(seen["tool_input"]["cell_number"], 2);
            },
        },
        Case {
            name: "Bash tool_response has Claude's {stdout, stderr, interrupted} shape",
            hooks: hook_on("PostToolUse", Some("Bash"), json!({"command": "cat"})),
            event: "PostToolUse",
            payload: json!({"toolName": "bash", "toolArgs": {"command": "git commit -m x"}, "toolResult": "[main abc] x", "error": "", "isInterrupt": true}),
            check: |_, runs| {
                let seen = stdin_seen(one(runs));
                assert_eq!(
                    seen["tool_response"],
                    json!({"stdout": "[main abc] x", "stderr": "", "interrupted": true})
                );
            },
        },
        Case {
            name: "PreToolUse exit 2 denies with stderr as the reason",
            hooks: hook_on(
                "PreToolUse",
                Some("Bash"),
                json!({"command": "echo 'rm -rf is not allowed' >&2; exit 2"}),
            ),
            event: "PreToolUse",
            payload: json!({"toolName": "bash", "toolArgs": {"command": "rm -rf /"}}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(r["exitCode"], 2);
                assert_eq!(verdict(r), "deny");
                assert_eq!(reason(r), "rm -rf is not allowed");
            },
        },
        Case {
            name: "PreToolUse JSON permissionDecision deny on exit 0",
            hooks: hook_on(
                "PreToolUse",
                None,
                json!({"command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"protected path\"}}'"}),
            ),
            event: "PreToolUse",
            payload: json!({"toolName": "edit_file", "toolArgs": {"path": ".env"}}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(r["exitCode"], 0);
                assert_eq!(verdict(r), "deny");
                assert_eq!(reason(r), "protected path");
            },
        },
        Case {
            name: "PreToolUse ask is not honoured (passes)",
            hooks: hook_on(
                "PreToolUse",
                None,
                json!({"command": "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\"}}'"}),
            ),
            event: "PreToolUse",
            payload: json!({"toolName": "bash", "toolArgs": {}}),
            check: |_, runs| assert_eq!(verdict(one(runs)), "pass"),
        },
        Case {
            name: "UserPromptSubmit exit 2 blocks",
            hooks: hook_on(
                "UserPromptSubmit",
                None,
                json!({"command": "echo 'no secrets' >&2; exit 2"}),
            ),
            event: "UserPromptSubmit",
            payload: json!({"prompt": "my password is x"}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(verdict(r), "block");
                assert_eq!(reason(r), "no secrets");
            },
        },
        Case {
            name: "UserPromptSubmit top-level decision block",
            hooks: hook_on(
                "UserPromptSubmit",
                None,
                json!({"command": "echo '{\"decision\":\"block\",\"reason\":\"off topic\"}'"}),
            ),
            event: "UserPromptSubmit",
            payload: json!({"prompt": "x"}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(verdict(r), "block");
                assert_eq!(reason(r), "off topic");
            },
        },
        Case {
            name: "PermissionRequest JSON allow answers the dialog",
            hooks: hook_on(
                "PermissionRequest",
                Some("Bash"),
                json!({"command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\"}}}'"}),
            ),
            event: "PermissionRequest",
            payload: json!({"toolName": "bash", "toolArgs": {"command": "ls"}}),
            check: |_, runs| assert_eq!(verdict(one(runs)), "allow"),
        },
        Case {
            name: "PermissionRequest JSON deny",
            hooks: hook_on(
                "PermissionRequest",
                None,
                json!({"command": "echo '{\"hookSpecificOutput\":{\"decision\":{\"behavior\":\"deny\",\"message\":\"not on main\"}}}'"}),
            ),
            event: "PermissionRequest",
            payload: json!({"toolName": "bash", "toolArgs": {}}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(verdict(r), "deny");
                assert_eq!(reason(r), "not on main");
            },
        },
        Case {
            name: "PermissionRequest exit 2 denies for imported hooks",
            hooks: hook_on("PermissionRequest", None, json!({"command": "exit 2"})),
            event: "PermissionRequest",
            payload: json!({"toolName": "bash", "toolArgs": {}}),
            check: |_, runs| assert_eq!(verdict(one(runs)), "deny"),
        },
        Case {
            name: "exit 2 on a non-gating event only warns",
            hooks: hook_on(
                "PostToolUse",
                None,
                json!({"command": "echo oops >&2; exit 2"}),
            ),
            event: "PostToolUse",
            payload: json!({"toolName": "bash", "toolArgs": {}}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(verdict(r), "warn");
                assert_eq!(reason(r), "oops");
            },
        },
        Case {
            name: "timeout kills the whole process group and counts as no decision",
            hooks: hook_on(
                "PreToolUse",
                None,
                json!({"command": "sleep 300 & echo $! > \"$CLAUDE_PROJECT_DIR/child.pid\"; wait; touch \"$CLAUDE_PROJECT_DIR/finished\"", "timeout": 1}),
            ),
            event: "PreToolUse",
            payload: json!({"toolName": "bash", "toolArgs": {}}),
            check: |root, runs| {
                let r = one(runs);
                assert_eq!(r["timedOut"], true);
                assert_eq!(r["exitCode"], -1);
                assert_eq!(verdict(r), "warn");
                assert_eq!(
                    reason(r),
                    "hook timed out after 1000 ms; counted as no decision"
                );
                let pid = fs::read_to_string(root.parent().unwrap().join("ws/child.pid")).unwrap();
                assert!(
                    dies(pid.trim()),
                    "the backgrounded child {pid} survived the timeout"
                );
                assert!(
                    !root.parent().unwrap().join("ws/finished").exists(),
                    "the hook ran to completion instead of being killed"
                );
            },
        },
        Case {
            name: "async hooks run but never gate",
            hooks: hook_on(
                "PreToolUse",
                None,
                json!({"command": "exit 2", "async": true}),
            ),
            event: "PreToolUse",
            payload: json!({"toolName": "bash", "toolArgs": {}}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(r["async"], true);
                assert_eq!(r["exitCode"], 2);
                assert_eq!(verdict(r), "pass");
            },
        },
        Case {
            name: "the first refusal stops later hooks",
            hooks: json!({"PreToolUse": [
                {"hooks": [{"command": "exit 2"}]},
                {"hooks": [{"command": "echo never"}]}
            ]}),
            event: "PreToolUse",
            payload: json!({"toolName": "bash", "toolArgs": {}}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(verdict(r), "deny");
            },
        },
        Case {
            name: "a missing executable is an error result",
            hooks: hook_on(
                "SessionStart",
                None,
                json!({"command": "${CLAUDE_PLUGIN_ROOT}/bin/absent", "args": []}),
            ),
            event: "SessionStart",
            payload: json!({}),
            check: |_, runs| {
                let r = one(runs);
                assert_eq!(verdict(r), "error");
                assert!(reason(r).contains("cannot start"), "{r}");
            },
        },
    ]
}

#[test]
fn hook_execution_matrix() {
    for case in cases() {
        let env = package(&case.hooks);
        let (code, out) = run_dev_hook(&env, case.event, &case.payload, &[]);
        let runs = out["hooks"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: {out}", case.name));
        let errored = runs.iter().any(|r| verdict(r) == "error");
        assert_eq!(
            code,
            if errored { 1 } else { 0 },
            "{}: exit code",
            case.name
        );
        let result = std::panic::catch_unwind(|| (case.check)(&env.root, runs));
        if let Err(e) = result {
            panic!(
                "case {:?} failed: {:?}\n{out:#}",
                case.name,
                e.downcast_ref::<String>()
            );
        }
    }
}

#[test]
fn missing_bash_is_a_clear_prerequisite_error() {
    let env = package(&hook_on(
        "SessionStart",
        None,
        json!({"command": "echo hi", "shell": "bash"}),
    ));
    let (code, out) = run_dev_hook(
        &env,
        "SessionStart",
        &json!({}),
        &[("PATH", "/nonexistent")],
    );
    assert_eq!(code, 1);
    let r = one(out["hooks"].as_array().unwrap());
    assert_eq!(verdict(r), "error");
    assert!(reason(r).contains("prerequisite missing: bash"), "{r}");
}

#[test]
fn codex_context_file_and_session_start_script() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join(".codex-plugin")).unwrap();
    fs::create_dir_all(root.join("hooks")).unwrap();
    fs::write(root.join(".codex-plugin/plugin.json"), r#"{"name":"cx"}"#).unwrap();
    fs::write(root.join("CLAUDE.md"), "Read the guide ✓\n").unwrap();
    let script = root.join("hooks/session-start-codex");
    fs::write(
        &script,
        "#!/bin/sh\necho \"codex start in $(basename \"$PWD\")\"\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = reasonix()
        .args(["dev", "hook", "cx", "SessionStart", "--json", "--root"])
        .arg(root)
        .env("REASONIX_HOME", root.join("home"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["hooks"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let by_form = |f: &str| runs.iter().find(|r| r["form"] == f).unwrap();
    assert_eq!(by_form("context")["stdout"], "Read the guide ✓\n");
    let dir_name = root.file_name().unwrap().to_string_lossy();
    assert_eq!(
        by_form("legacy")["stdout"],
        format!("codex start in {dir_name}\n")
    );
}

#[test]
fn usage_errors() {
    let env = package(&hook_on("SessionStart", None, json!({"command": "true"})));
    let status = |args: &[&str]| {
        reasonix()
            .args(args)
            .arg("--root")
            .arg(&env.root)
            .env("REASONIX_HOME", &env.home)
            .output()
            .unwrap()
    };
    let out = status(&["dev", "hook", "hooktest", "NotAnEvent"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown hook event"));
    let out = status(&["dev", "hook", "hooktest", "Stop"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no Stop hooks"));
    let out = status(&["dev", "hook", "other", "SessionStart"]);
    assert_eq!(out.status.code(), Some(1));
    // Human-readable output.
    let out = status(&["dev", "hook", "hooktest", "SessionStart"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("SessionStart #0"));
}

#[test]
fn installed_plugins_are_found_in_the_registry() {
    let env = package(&hook_on(
        "UserPromptSubmit",
        None,
        json!({"command": "printf '%s' \"$REASONIX_PLUGIN_ROOT\""}),
    ));
    let install = reasonix()
        .args(["plugin", "install", "--yes", "--json"])
        .arg(&env.root)
        .env("REASONIX_HOME", &env.home)
        .output()
        .unwrap();
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stdout)
    );
    let out = reasonix()
        .args(["dev", "hook", "hooktest", "UserPromptSubmit", "--json"])
        .env("REASONIX_HOME", &env.home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let installed = env.home.join("plugins/hooktest");
    assert_eq!(v["hooks"][0]["stdout"], installed.display().to_string());
    let missing = reasonix()
        .args(["dev", "hook", "absent", "UserPromptSubmit"])
        .env("REASONIX_HOME", &env.home)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("is not installed"));
}

fn native_package(hooks: Value) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("native");
    fs::create_dir_all(&root).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v2",
        "name": "nativehooks",
        "version": "0.1.0",
        "contributes": { "hooks": hooks }
    });
    fs::write(root.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
    (dir, root)
}

fn dev_hook_json(root: &Path, name: &str, event: &str, payload: &Value) -> (i32, Value) {
    let payload_file = root.join("payload.json");
    fs::write(&payload_file, payload.to_string()).unwrap();
    let out = reasonix()
        .args(["dev", "hook", name, event, "--json", "--root"])
        .arg(root)
        .arg("--payload")
        .arg(&payload_file)
        .env("REASONIX_HOME", root.join("home"))
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn native_hooks_get_the_native_payload_and_exit_code_decisions() {
    let (_dir, root) = native_package(json!({
        "PreToolUse": [
            {"match": "read_file", "command": "cat; exit 2"},
        ],
        "SessionStart": [
            {"command": "dir", "shell": "cmd"},
            {"command": "printf '\\326\\320\\316\\304'", "shell": "bash"}
        ]
    }));
    let (code, v) = dev_hook_json(
        &root,
        "nativehooks",
        "PreToolUse",
        &json!({"toolName": "read_file", "toolArgs": {"path": "a"}}),
    );
    assert_eq!(code, 0, "{v}");
    let r = one(v["hooks"].as_array().unwrap());
    assert_eq!(verdict(r), "deny");
    let seen: Value = serde_json::from_str(r["stdout"].as_str().unwrap().trim()).unwrap();
    assert_eq!(seen["event"], "PreToolUse");
    assert_eq!(
        seen["toolName"], "read_file",
        "native hooks see Reasonix names"
    );
    assert_eq!(seen["toolArgs"], json!({"path": "a"}));
    assert!(seen.get("hook_event_name").is_none());

    let (code, v) = dev_hook_json(&root, "nativehooks", "SessionStart", &json!({}));
    assert_eq!(code, 1, "the cmd hook cannot run here: {v}");
    let runs = v["hooks"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(verdict(&runs[0]), "error");
    assert!(
        reason(&runs[0]).contains("cmd is only available on Windows"),
        "{}",
        runs[0]
    );
    // GB18030 output (a legacy code page) is normalised to UTF-8.
    assert_eq!(runs[1]["stdout"], "中文");
}

#[test]
fn real_superpowers_context_hook_runs_from_the_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/real-packages/obra__superpowers");
    let home = tempfile::tempdir().unwrap();
    let out = reasonix()
        .args([
            "dev",
            "hook",
            "superpowers",
            "SessionStart",
            "--index",
            "0",
            "--json",
            "--root",
        ])
        .arg(&root)
        .env("REASONIX_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = one(v["hooks"].as_array().unwrap());
    assert_eq!(r["form"], "context");
    let expected = fs::read_to_string(root.join("CLAUDE.md")).unwrap();
    assert_eq!(r["stdout"], expected);
    // Its Claude hook (#1) is shell form through bash; the script it names is
    // not part of the fixture, so bash reports that (a warning, not a refusal).
    let out = reasonix()
        .args([
            "dev",
            "hook",
            "superpowers",
            "SessionStart",
            "--index",
            "1",
            "--json",
            "--root",
        ])
        .arg(&root)
        .env("REASONIX_HOME", home.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = one(v["hooks"].as_array().unwrap());
    assert_eq!(r["form"], "shell");
    assert_ne!(r["exitCode"], 0);
    assert_eq!(verdict(r), "warn");
    assert!(
        r["stderr"].as_str().unwrap().contains("run-hook.cmd"),
        "{r}"
    );
}
