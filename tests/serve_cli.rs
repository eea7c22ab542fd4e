//! The `reasonix serve` command itself: a fresh home answers with a token
//! and refuses without one, the token file, plan → install of
//! examples/starter over HTTP, SIGTERM/SIGINT stopping cleanly (sidecars
//! gone, token file removed), `--open` never putting the token on a command
//! line, the non-loopback warning, and typed startup failures.

#[path = "examples_support.rs"]
mod examples;
#[path = "serve_support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Answer, REASONIX, client};

/// A running `reasonix serve --json`.
struct Served {
    child: Child,
    info: Value,
}

fn serve(home: &Path, cwd: &Path, extra: &[&str], path_prefix: Option<&Path>) -> Served {
    let mut cmd = Command::new(REASONIX);
    cmd.env("REASONIX_HOME", home)
        .current_dir(cwd)
        .args(["serve", "--json"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", dir.display()));
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let info: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        panic!("serve printed {line:?} ({e}); stderr: {err}")
    });
    Served { child, info }
}

impl Served {
    fn base(&self) -> String {
        self.info["url"]
            .as_str()
            .unwrap()
            .trim_end_matches('/')
            .to_string()
    }

    fn token(&self) -> String {
        self.info["token"].as_str().unwrap().to_string()
    }

    async fn get(&self, path: &str) -> Answer {
        Answer::of(
            client()
                .get(format!("{}{path}", self.base()))
                .bearer_auth(self.token())
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    async fn post(&self, path: &str, body: Value) -> Answer {
        Answer::of(
            client()
                .post(format!("{}{path}", self.base()))
                .bearer_auth(self.token())
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Send `signal`, wait for the exit (a hang guard, not a timing
    /// assertion), return (exit status, stderr).
    fn stop(mut self, signal: rustix::process::Signal) -> (std::process::ExitStatus, String) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, signal).unwrap();
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(120) {
                let _ = self.child.kill();
                panic!("reasonix serve did not stop");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (status, err)
    }
}

/// Processes whose command line mentions `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            out.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_home_serves_installs_the_starter_and_stops_cleanly() {
    let home = tempfile::TempDir::new().unwrap();
    let work = tempfile::TempDir::new().unwrap();
    examples::built_copy(
        "starter",
        examples::Kind::Native,
        &work.path().join("starter"),
    );
    let served = serve(home.path(), work.path(), &[], None);
    let token = served.token();
    assert_eq!(token.len(), 64);
    assert_eq!(served.info["ok"], true);
    assert!(
        served.base().starts_with("http://127.0.0.1:"),
        "{}",
        served.info
    );
    assert_eq!(
        served.info["pageUrl"],
        format!("{}/#token={token}", served.base())
    );
    // The token file: exactly the token, private.
    let token_file = PathBuf::from(served.info["tokenFile"].as_str().unwrap());
    assert_eq!(token_file, home.path().join("serve.token"));
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap(),
        format!("{token}\n")
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let refused = Answer::of(
        client()
            .get(format!("{}/plugins", served.base()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    refused.refused(401, "auth.unauthorized");
    let list = served.get("/plugins").await;
    assert_eq!(list.status, 200);
    assert_eq!(list.json(), json!([]));

    // Plan, then install with the echoed planId (relative to serve's cwd).
    let plan = served
        .post("/plugins/plan", json!({"source": "./starter"}))
        .await
        .json();
    assert_eq!(plan["status"], "planned", "{plan}");
    let installed = served
        .post(
            "/plugins/install",
            json!({"source": "./starter", "planId": plan["planId"]}),
        )
        .await
        .json();
    assert_eq!(installed["status"], "done", "{installed}");
    assert_eq!(installed["planId"], plan["planId"]);
    assert!(installed.get("reloadError").is_none(), "{installed}");
    let status = served.get("/extensions").await.json();
    assert_eq!(status["runtimes"][0]["plugin"], "starter", "{status}");
    let sidecar = home.path().join("plugins/starter/bin/starter");
    let sidecar = sidecar.to_str().unwrap();
    assert!(
        !processes_with(sidecar).is_empty(),
        "the starter sidecar runs"
    );

    let (status, stderr) = served.stop(rustix::process::Signal::TERM);
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("reasonix serve: stopped"), "{stderr}");
    assert!(!token_file.exists(), "the token file goes with the server");
    assert_eq!(processes_with(sidecar), Vec::<String>::new());
    // What was installed stays installed.
    let registry = std::fs::read_to_string(home.path().join("plugin-packages.json")).unwrap();
    assert!(registry.contains("\"starter\""), "{registry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_keeps_the_token_off_command_lines_and_ctrl_c_stops() {
    let home = tempfile::TempDir::new().unwrap();
    let work = tempfile::TempDir::new().unwrap();
    // A stand-in browser opener that records its arguments.
    let bin = work.path().join("bin");
    let record = work.path().join("opened.txt");
    support::write(
        &bin.join("xdg-open"),
        &format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", record.display()),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("xdg-open"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let served = serve(home.path(), work.path(), &["--open"], Some(&bin));
    let token = served.token();
    let opened = home.path().join("serve-open.html");
    let started = Instant::now();
    while !record.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "xdg-open never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(50));
    let args = std::fs::read_to_string(&record).unwrap();
    assert_eq!(args.trim(), opened.to_str().unwrap());
    assert!(!args.contains(&token));
    let page = std::fs::read_to_string(&opened).unwrap();
    assert!(page.contains(&format!("#token={token}")), "{page}");
    let mode = std::fs::metadata(&opened).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let (status, stderr) = served.stop(rustix::process::Signal::INT);
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(!opened.exists());
    assert!(!home.path().join("serve.token").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_listener_warns_and_still_checks_origin() {
    let home = tempfile::TempDir::new().unwrap();
    let work = tempfile::TempDir::new().unwrap();
    let served = serve(home.path(), work.path(), &["--listen", "0.0.0.0:0"], None);
    let port = served.info["address"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let base = format!("http://127.0.0.1:{port}");
    let ok = Answer::of(
        client()
            .get(format!("{base}/plugins"))
            .bearer_auth(served.token())
            .header("host", format!("studio.lan:{port}"))
            .header("origin", format!("http://studio.lan:{port}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    let foreign = Answer::of(
        client()
            .get(format!("{base}/plugins"))
            .bearer_auth(served.token())
            .header("origin", "http://evil.example")
            .send()
            .await
            .unwrap(),
    )
    .await;
    foreign.refused(403, "request.foreign_origin");
    let (status, stderr) = served.stop(rustix::process::Signal::TERM);
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(
        stderr.contains("warning: listening on 0.0.0.0:0 exposes this server"),
        "{stderr}"
    );
}

#[test]
fn startup_failures_are_typed() {
    let home = tempfile::TempDir::new().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(REASONIX)
        .env("REASONIX_HOME", home.path())
        .args(["serve", "--json", "--listen", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["ok"], false);
    assert_eq!(answer["errorCode"], "serve.bind_failed");
    assert!(String::from_utf8_lossy(&out.stderr).contains("next: Choose another --listen"));
    assert!(!home.path().join("serve.token").exists());

    let out = Command::new(REASONIX)
        .env("REASONIX_HOME", home.path())
        .args(["serve", "--listen", "example.com:80"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not IP:PORT"));
}
