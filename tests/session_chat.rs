//! `reasonix chat` end to end with the real example extensions and real
//! packages: piped (NDJSON events) and through a real pseudo-terminal.

#[path = "examples_support.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};
use support::{Kind, add_to, reasonix_in};
use tempfile::TempDir;

const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");

/// A running `reasonix chat --json`, driven line by line over pipes.
struct Chat {
    child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<Value>,
    seen: Vec<Value>,
}

impl Chat {
    fn start(home: &Path, workspace: &Path, args: &[&str]) -> Chat {
        let mut child = Command::new(REASONIX)
            .args(["chat", "--json"])
            .args(args)
            .env("REASONIX_HOME", home)
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start reasonix chat");
        let stdout = child.stdout.take().unwrap();
        let (tx, events) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not an event line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Chat {
            child,
            stdin,
            events,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Events until (and including) the first that satisfies `done`.
    fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let event = self
                .events
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("no matching event; saw {out:#?}"));
            self.seen.push(event.clone());
            out.push(event.clone());
            if done(&event) {
                return out;
            }
        }
    }

    /// Send a line and collect its events until its turn or command ends.
    fn line(&mut self, line: &str) -> Vec<Value> {
        self.send(line);
        self.until(|e| {
            matches!(
                e["type"].as_str(),
                Some("turn_ended" | "command_output" | "reload" | "error")
            )
        })
    }

    /// Close stdin and wait for the process; the remaining events.
    fn finish(mut self) -> (i32, Vec<Value>) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let rest: Vec<Value> = self.events.iter().collect();
        (status.code().unwrap_or(-1), rest)
    }
}

fn of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn user_text(events: &[Value]) -> String {
    of(events, "user_message")
        .first()
        .map(|e| e["text"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/real-packages/anthropics__claude-code/plugins")
        .join(name)
}

fn install(home: &TempDir, workspace: &TempDir, source: &Path) {
    let out = reasonix_in(
        home.path(),
        workspace.path(),
        &["plugin", "install", source.to_str().unwrap(), "--yes"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Claude plugin that blocks prompts containing "forbidden".
fn guard_plugin(workspace: &TempDir) -> std::path::PathBuf {
    let root = workspace.path().join("guard");
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(root.join("hooks")).unwrap();
    std::fs::write(
        root.join(".claude-plugin/plugin.json"),
        r#"{"name":"guard","version":"1.0.0"}"#,
    )
    .unwrap();
    let hook = "grep -q forbidden && { echo 'that word is not allowed here' >&2; exit 2; }; exit 0";
    std::fs::write(
        root.join("hooks/hooks.json"),
        serde_json::to_vec(&json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": hook}]}]}}))
        .unwrap(),
    )
    .unwrap();
    root
}

#[test]
fn one_piped_chat_session_renders_blocks_survives_a_broken_reload_and_runs_an_action() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    let starter = add_to(&home, &workspace, "starter", Kind::Native);
    add_to(&home, &workspace, "status-ui", Kind::Native);
    install(&home, &workspace, &fixture("commit-commands"));
    install(&home, &workspace, &guard_plugin(&workspace));

    let mut chat = Chat::start(home.path(), workspace.path(), &[]);
    let opened = chat.until(|e| e["type"] == "opened");
    assert_eq!(opened[0]["status"]["generation"], 1);

    // A command renders with its arguments (a real Claude package).
    let events = chat.line("/commit-commands:commit fix the parser");
    let text = user_text(&events);
    assert!(text.starts_with("[starter] "), "{text}");
    assert!(
        text.contains("create a single git commit") && text.ends_with("ARGUMENTS: fix the parser"),
        "{text}"
    );
    assert_eq!(
        of(&events, "turn_ended")[0]["status"]["status"],
        "completed"
    );

    // A blocking prompt hook stops a line before the model.
    let events = chat.line("say something forbidden");
    let ended = of(&events, "turn_ended")[0];
    assert_eq!(ended["status"]["status"], "blocked");
    assert_eq!(ended["status"]["plugin"], "hook guard");
    assert!(of(&events, "assistant_message").is_empty());

    // The starter rewrites; then its manifest breaks and /reload fails.
    let events = chat.line("before the reload");
    assert_eq!(user_text(&events), "[starter] before the reload");
    std::fs::write(starter.join("reasonix-plugin.json"), "{ broken").unwrap();
    let events = chat.line("/reload");
    let reload = of(&events, "reload")[0];
    assert_eq!(reload["outcome"]["status"], "failed", "{reload}");
    assert_eq!(reload["outcome"]["kept"], 1);
    assert!(
        reload["outcome"]["why"]
            .as_str()
            .unwrap()
            .contains("plugin starter is enabled but no longer reads"),
        "{reload}"
    );
    // The previous generation keeps rewriting the next line.
    let events = chat.line("after the reload");
    assert_eq!(user_text(&events), "[starter] after the reload");
    assert_eq!(of(&events, "turn_started")[0]["generation"], 1);

    // An extension action runs and its status update is shown.
    let events = chat.line("/status-ui:reset");
    assert_eq!(
        of(&events, "command_output")[0]["text"],
        "/status-ui:reset: counters reset"
    );
    let surfaces = of(&events, "surface");
    assert!(
        surfaces
            .iter()
            .any(|s| s["update"]["payload"]["label"] == "0 inputs, 0 words"),
        "{surfaces:?}"
    );
    let (code, rest) = chat.finish();
    assert_eq!(code, 0);
    assert_eq!(rest.last().unwrap()["type"], "closed");
}

#[test]
fn a_failed_required_start_keeps_the_old_generation_and_a_fixed_one_swaps() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    let starter = add_to(&home, &workspace, "starter", Kind::Native);
    // Make the copy's runtime required, so a failed start fails the build.
    let manifest_path = starter.join("reasonix-plugin.json");
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["runtime"]["required"] = json!(true);
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let binary = starter.join("bin/starter");
    let good = std::fs::read(&binary).unwrap();

    let mut chat = Chat::start(home.path(), workspace.path(), &[]);
    chat.until(|e| e["type"] == "opened");
    std::fs::remove_file(&binary).unwrap();
    std::fs::write(&binary, "#!/bin/sh\necho 'cannot start' >&2\nexit 3\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let events = chat.line("/reload");
    let outcome = &of(&events, "reload")[0]["outcome"];
    assert_eq!(outcome["status"], "failed", "{outcome}");
    assert!(
        outcome["why"]
            .as_str()
            .unwrap()
            .contains("required runtime `starter` did not start"),
        "{outcome}"
    );
    assert_eq!(user_text(&chat.line("still here")), "[starter] still here");

    std::fs::remove_file(&binary).unwrap();
    std::fs::write(&binary, &good).unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let events = chat.line("/reload");
    let outcome = &of(&events, "reload")[0]["outcome"];
    assert_eq!(outcome["status"], "swapped", "{outcome}");
    assert_eq!(outcome["toGeneration"], 2);
    let events = chat.line("on two");
    assert_eq!(of(&events, "turn_started")[0]["generation"], 2);
    assert_eq!(user_text(&events), "[starter] on two");
    assert_eq!(chat.finish().0, 0);
}

#[test]
fn a_published_form_round_trips_to_the_extension() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    add_to(&home, &workspace, "status-ui", Kind::Native);
    let mut chat = Chat::start(home.path(), workspace.path(), &[]);
    chat.line("count these words");
    let events = chat.line("/status-ui:rename");
    let form = of(&events, "surface")
        .into_iter()
        .find(|s| s["update"]["kind"] == "form")
        .expect("the action publishes a form");
    assert_eq!(form["update"]["surfaceId"], "status-ui.rename");
    assert_eq!(form["update"]["payload"]["fields"][0]["key"], "name");
    // A wrong field is refused by the host before the extension sees it.
    let events = chat.line("/form status-ui/status-ui.rename nmae=Docs");
    assert_eq!(of(&events, "error")[0]["errorCode"], "form.failed");
    let events = chat.line("/form status-ui/status-ui.rename name=Docs");
    assert_eq!(
        of(&events, "command_output")[0]["text"],
        "form status-ui/status-ui.rename submitted"
    );
    assert!(
        of(&events, "surface")
            .iter()
            .any(|s| s["update"]["payload"]["label"] == "Docs: 1 inputs, 3 words"),
        "{events:#?}"
    );
    assert_eq!(chat.finish().0, 0);
}

#[test]
fn models_switch_mid_session_and_default_model_works_on_first_boot() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    add_to(&home, &workspace, "echo-provider", Kind::Native);
    let mut chat = Chat::start(home.path(), workspace.path(), &[]);
    let events = chat.line("hello");
    assert_eq!(
        of(&events, "assistant_message")[0]["text"],
        "echo: hello",
        "the built-in model first"
    );
    let events = chat.line("/model plugin/echo-provider/echo/nope");
    let error = of(&events, "error")[0];
    assert_eq!(error["errorCode"], "model.unknown");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("plugin/echo-provider/echo/echo-1"),
        "{error}"
    );
    chat.line("/model plugin/echo-provider/echo/echo-1");
    let events = chat.line("stream this please");
    assert_eq!(
        of(&events, "turn_started")[0]["model"],
        "plugin/echo-provider/echo/echo-1"
    );
    assert!(
        of(&events, "assistant_delta").len() > 1,
        "streamed in pieces"
    );
    assert!(
        of(&events, "assistant_message")[0]["text"]
            .as_str()
            .unwrap()
            .contains("stream this please"),
        "{events:#?}"
    );
    chat.finish();

    // The same ref as default_model, read on the very first boot.
    std::fs::write(
        home.path().join("config.toml"),
        "default_model = \"plugin/echo-provider/echo/echo-1\"\n",
    )
    .unwrap();
    let mut chat = Chat::start(home.path(), workspace.path(), &[]);
    let opened = chat.until(|e| e["type"] == "opened");
    assert_eq!(
        opened[0]["status"]["model"],
        "plugin/echo-provider/echo/echo-1"
    );
    let events = chat.line("first boot");
    assert_eq!(
        of(&events, "turn_ended")[0]["status"]["status"],
        "completed"
    );
    assert_eq!(
        of(&events, "turn_started")[0]["model"],
        "plugin/echo-provider/echo/echo-1"
    );
    chat.finish();
}

#[test]
fn slash_commands_aliases_ambiguity_and_missing_arguments() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    for (name, body) in [
        ("alpha", "one=$1 two=$2 five=[$5]"),
        ("beta", "beta says $ARGUMENTS"),
    ] {
        let root = workspace.path().join(name);
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::create_dir_all(root.join("commands")).unwrap();
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            format!(r#"{{"name":"{name}","version":"1.0.0"}}"#),
        )
        .unwrap();
        std::fs::write(root.join("commands/shared.md"), body).unwrap();
        std::fs::write(root.join(format!("commands/only-{name}.md")), body).unwrap();
        install(&home, &workspace, &root);
    }
    let mut chat = Chat::start(home.path(), workspace.path(), &[]);
    // $5 with two arguments renders empty.
    let events = chat.line("/alpha:shared a \"b c\"");
    assert_eq!(user_text(&events), "one=a two=b c five=[]");
    // An unambiguous short alias works.
    let events = chat.line("/only-beta x y");
    assert_eq!(user_text(&events), "beta says x y");
    // An ambiguous one names the qualified commands.
    let events = chat.line("/shared x");
    let error = of(&events, "error")[0];
    assert_eq!(error["errorCode"], "command.ambiguous");
    assert_eq!(
        error["error"],
        "`/shared` is ambiguous: use one of /alpha:shared, /beta:shared"
    );
    // An unknown one names the closest.
    let events = chat.line("/alpha:sharde");
    let error = of(&events, "error")[0];
    assert_eq!(error["errorCode"], "command.unknown");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("did you mean /alpha:shared"),
        "{error}"
    );
    assert_eq!(chat.finish().0, 0);
}

#[test]
fn a_corrupt_session_file_is_an_error_and_is_never_overwritten() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    let file = workspace.path().join("work.json");
    std::fs::write(&file, "{\"version\": 1, \"sessionId\":").unwrap();
    let out = Command::new(REASONIX)
        .args(["chat", "--session", file.to_str().unwrap()])
        .env("REASONIX_HOME", home.path())
        .current_dir(workspace.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("work.json") && stderr.contains("not a Reasonix session file"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"version\": 1, \"sessionId\":"
    );
    // A good file is continued and saved after each turn.
    std::fs::remove_file(&file).unwrap();
    let mut chat = Chat::start(
        home.path(),
        workspace.path(),
        &["--session", file.to_str().unwrap()],
    );
    chat.line("remember me");
    chat.finish();
    let mut chat = Chat::start(
        home.path(),
        workspace.path(),
        &["--session", file.to_str().unwrap()],
    );
    let events = chat.line("again");
    let text = of(&events, "assistant_message")[0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(text, "echo: again");
    chat.finish();
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let contents: Vec<&str> = saved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        contents,
        ["remember me", "echo: remember me", "again", "echo: again"]
    );
}

/// The terminal path, in a real pseudo-terminal (Python's `pty` drives it):
/// the prompt, Tab completion of the slash menu, a turn, Ctrl-D closing.
#[test]
fn chat_in_a_real_terminal() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    add_to(&home, &workspace, "starter", Kind::Native);
    let script = r#"
import os, pty, sys, time, select
reasonix, home, cwd = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(cwd)
    os.environ["REASONIX_HOME"] = home
    os.environ["TERM"] = "xterm"
    os.execv(reasonix, [reasonix, "chat"])
out = b""
def read_until(token, timeout=60):
    global out
    end = time.time() + timeout
    while token.encode() not in out:
        left = end - time.time()
        if left <= 0:
            sys.stderr.write(out.decode(errors="replace"))
            sys.exit("timed out waiting for %r" % token)
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
read_until("> ")
os.write(fd, b"/rel\t")
read_until("/reload")
os.write(fd, b"\x15hello terminal\r")
read_until("assistant: echo: [starter] hello terminal")
read_until("> ")
os.write(fd, b"\x04")
_, status = os.waitpid(pid, 0)
try:
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
except OSError:
    pass
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let out = Command::new("python3")
        .args(["-c", script, REASONIX])
        .arg(home.path())
        .arg(workspace.path())
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Type a message"), "{stdout}");
    assert!(stdout.contains("you: [starter] hello terminal"), "{stdout}");
}
