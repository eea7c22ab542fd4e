//! The command line attacked from outside (issue "Hardening from outside"):
//! data left behind by a removal, registries and zips written by someone
//! else, terminal escapes in package text, a tampered registry root, a
//! closed stdout, one failure shape for every `--json` command, scripts
//! versus people at a terminal, and diagnostics that reach stderr only.
//! Every test runs the real `reasonix` binary.
mod outside_common;
mod plugin_common;

use std::process::{Command, Stdio};

use plugin_common::*;
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A sandbox with package `name` installed from `src/<name>`.
fn installed(name: &str) -> (Sandbox, std::path::PathBuf) {
    let sb = Sandbox::new();
    let src = sb.dir.path().join("src").join(name);
    native_package(&src, name, "1.0.0");
    sb.ok(&["plugin", "install", src.to_str().unwrap(), "--yes"]);
    (sb, src)
}

// ------------------------------------------------------------ item 3

#[test]
fn removal_deletes_the_plugin_data_unless_kept() {
    let (sb, src) = installed("keeper");
    let data = sb.home.join("data/keeper");
    write(&data.join("state/secret.txt"), "the old plugin's state");

    let out = sb.run(&["plugin", "remove", "keeper", "--yes", "--keep-data"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(data.join("state/secret.txt").exists());
    assert!(
        stderr(&out).contains(data.to_str().unwrap()),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--keep-data"), "{}", stderr(&out));

    // Installed again under the same name, then removed: the data goes.
    sb.ok(&["plugin", "install", src.to_str().unwrap(), "--yes"]);
    let out = sb.run(&["plugin", "remove", "keeper", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!data.exists(), "data/keeper outlived the removal");
    assert!(
        stderr(&out).contains("deleted its data directory"),
        "{}",
        stderr(&out)
    );
    // Nothing of another plugin's data is touched.
    write(&sb.home.join("data/other/x"), "x");
    sb.ok(&["plugin", "install", src.to_str().unwrap(), "--yes"]);
    sb.ok(&["plugin", "remove", "keeper", "--yes"]);
    assert!(sb.home.join("data/other/x").exists());
}

// ------------------------------------------------------------ items 8, 9

#[test]
fn enable_disable_and_install_keep_registry_fields_of_a_newer_version() {
    let (sb, _src) = installed("alpha");
    let path = sb.home.join("plugin-packages.json");
    let mut registry = sb.registry();
    registry["writtenBy"] = json!({"reasonix": "9.0.0"});
    registry["plugins"][0]["trust"] = json!({"level": "pinned", "by": "newer"});
    std::fs::write(&path, serde_json::to_vec_pretty(&registry).unwrap()).unwrap();

    sb.ok(&["plugin", "disable", "alpha"]);
    let src = sb.dir.path().join("src/beta");
    native_package(&src, "beta", "1.0.0");
    sb.ok(&["plugin", "install", src.to_str().unwrap(), "--yes"]);
    sb.ok(&["plugin", "enable", "alpha"]);

    let after = sb.registry();
    assert_eq!(after["writtenBy"], json!({"reasonix": "9.0.0"}), "{after}");
    let alpha = after["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "alpha")
        .unwrap();
    assert_eq!(alpha["trust"], json!({"level": "pinned", "by": "newer"}));
    assert_eq!(alpha["enabled"], true);
}

#[test]
fn a_registry_naming_a_plugin_twice_is_an_error_with_a_repair_hint() {
    let (sb, _src) = installed("twice");
    let path = sb.home.join("plugin-packages.json");
    let mut registry = sb.registry();
    let entry = registry["plugins"][0].clone();
    registry["plugins"].as_array_mut().unwrap().push(entry);
    let bytes = serde_json::to_vec_pretty(&registry).unwrap();
    std::fs::write(&path, &bytes).unwrap();

    for args in [
        vec!["plugin", "list"],
        vec!["plugin", "disable", "twice"],
        vec!["plugin", "show", "twice"],
    ] {
        let out = sb.run(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stdout)
        );
        let err = stderr(&out);
        assert!(
            err.contains("names plugin \"twice\" twice"),
            "{args:?}: {err}"
        );
        assert!(err.contains("plugin.state_unreadable"), "{args:?}: {err}");
        assert!(err.contains("next: Edit"), "{args:?}: {err}");
        assert!(
            !text(&out.stdout).contains("twice\tenabled"),
            "listed twice"
        );
    }
    // Nothing was written back (twice or at all).
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

// ------------------------------------------------------------ item 10

#[test]
fn package_text_never_reaches_the_terminal_with_its_escapes() {
    let sb = Sandbox::new();
    let src = sb.dir.path().join("src/loud");
    native_package(&src, "loud", "1.0.0");
    let manifest = src.join("reasonix-plugin.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m["description"] = json!("harmless\u{1b}[2J\u{1b}[Hwiped\rFULL TRUST: none\u{7}");
    std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
    write(
        &src.join("commands/hello.md"),
        "---\ndescription: hi\u{1b}]0;pwned\u{7} there\nargument-hint: <who>\u{1b}[31m\n---\nHello\n",
    );

    let outputs = [
        sb.run(&["plugin", "validate", src.to_str().unwrap()]),
        sb.run(&["plugin", "install", src.to_str().unwrap(), "--dry-run"]),
        sb.run(&["plugin", "install", src.to_str().unwrap(), "--yes"]),
        sb.run(&["plugin", "show", "loud"]),
        sb.run(&["plugin", "list"]),
        sb.run(&["plugin", "doctor", "loud"]),
        sb.run(&["plugin", "show", "\u{1b}[2Jghost"]),
    ];
    for out in &outputs {
        for stream in [&out.stdout, &out.stderr] {
            let s = text(stream);
            for bad in ['\u{1b}', '\r', '\u{7}'] {
                // JSON output escapes them; human output drops them.
                assert!(!s.contains(bad), "{bad:?} reached the terminal:\n{s}");
            }
        }
    }
    let show = text(&outputs[3].stdout);
    // One line per field: the carriage return cannot overwrite the line.
    assert!(
        show.contains("description: harmless[2J[Hwiped FULL TRUST: none\n"),
        "{show}"
    );
    assert!(show.contains("hi]0;pwned there"), "{show}");
    // The data itself is intact in JSON.
    let out = sb.run(&["plugin", "show", "loud", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["description"].as_str().unwrap().contains('\u{1b}'));
}

// ------------------------------------------------------------ item 11

#[test]
fn export_refuses_a_copy_root_outside_the_plugins_directory() {
    let (sb, _src) = installed("victim");
    let outside = sb.dir.path().join("private");
    write(
        &outside.join("reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"victim"}"#,
    );
    write(
        &outside.join("id_rsa"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    );
    let path = sb.home.join("plugin-packages.json");
    let mut registry = sb.registry();
    registry["plugins"][0]["root"] = json!("plugins/../../private");
    std::fs::write(&path, serde_json::to_vec_pretty(&registry).unwrap()).unwrap();

    let zip = sb.dir.path().join("out.zip");
    let out = sb.run(&[
        "plugin",
        "export",
        "victim",
        "-o",
        zip.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(!zip.exists(), "files from outside the home were packed");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["errorCode"], "install.unsafe_path", "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("resolves outside"),
        "{v}"
    );

    // A root symlinked out of plugins/ is refused the same way.
    registry["plugins"][0]["root"] = json!("plugins/victim");
    std::fs::write(&path, serde_json::to_vec_pretty(&registry).unwrap()).unwrap();
    std::fs::remove_dir_all(sb.home.join("plugins/victim")).unwrap();
    std::os::unix::fs::symlink(&outside, sb.home.join("plugins/victim")).unwrap();
    let out = sb.run(&["plugin", "export", "victim", "-o", zip.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!zip.exists());
    let list = sb.run(&["plugin", "list"]);
    assert!(
        stderr(&list).contains("resolves outside"),
        "{}",
        stderr(&list)
    );
}

// ------------------------------------------------------------ item 15

#[test]
fn validate_warns_about_hooks_for_an_unknown_event() {
    let sb = Sandbox::new();
    let src = sb.dir.path().join("src/hooky");
    write(
        &src.join("reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"hooky",
            "hooks":{"Bogus":[{"command":"true"}],"SessionStart":[{"command":"true"}]}}"#,
    );
    let out = sb.run(&["plugin", "validate", src.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("warning: hooks.Bogus: unknown event; these hooks will not run"),
        "{stdout}"
    );
    assert!(!stdout.contains("hooks.SessionStart: unknown"), "{stdout}");
    let out = sb.run(&["plugin", "validate", src.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["warnings"].to_string().contains("hooks.Bogus"), "{v}");
}

// ------------------------------------------------------------ item 16

/// Run with a stdout whose reading end is already closed: every write gets
/// EPIPE at once (no race with a reader that has not exited yet).
fn closed_stdout(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = sb
        .command(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let (sb, src) = installed("quiet");
    let zip = sb.dir.path().join("quiet.zip");
    for args in [
        vec!["plugin", "list"],
        vec!["plugin", "list", "--json"],
        vec!["plugin", "show", "quiet"],
        vec!["plugin", "validate", src.to_str().unwrap()],
        vec!["plugin", "export", "quiet", "-o", zip.to_str().unwrap()],
        vec!["plugin", "doctor", "quiet"],
        vec!["dev", "turn", "--input", "hi", "--json"],
        vec!["dev", "turn", "--input", "hi"],
        vec!["plugin", "--help"],
    ] {
        let out = closed_stdout(&sb, &args);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
    // The work was done even though nobody read about it.
    assert!(zip.exists());
}

// ------------------------------------------------------------ item 17

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\n{}",
            text(&out.stdout),
            stderr(out)
        )
    })
}

fn assert_failure_shape(out: &std::process::Output, code: &str) -> Value {
    let v = json_of(out);
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["errorCode"], code, "{v}");
    assert!(!v["error"].as_str().unwrap_or_default().is_empty(), "{v}");
    assert_ne!(v["applied"], true, "{v}");
    // The human form is on stderr.
    assert!(
        stderr(out).contains(&format!("[{code}]")),
        "{}",
        stderr(out)
    );
    v
}

#[test]
fn every_json_failure_has_the_one_shape() {
    let (sb, _src) = installed("shape");
    for (args, code) in [
        (
            vec!["plugin", "remove", "ghost", "--yes", "--json"],
            "plugin.not_installed",
        ),
        (
            vec!["plugin", "show", "ghost", "--json"],
            "plugin.not_installed",
        ),
        (
            vec!["plugin", "doctor", "ghost", "--json"],
            "plugin.not_installed",
        ),
        (
            vec!["plugin", "enable", "ghost", "--json"],
            "plugin.not_installed",
        ),
        (
            vec!["plugin", "disable", "ghost", "--json"],
            "plugin.not_installed",
        ),
        (
            vec!["plugin", "export", "ghost", "--json"],
            "plugin.not_installed",
        ),
        (
            vec!["plugin", "install", "./nowhere", "--yes", "--json"],
            "install.source_unreadable",
        ),
        (
            vec!["dev", "hook", "ghost", "SessionStart", "--json"],
            "plugin.not_installed",
        ),
        (vec!["dev", "hook", "shape", "Bogus", "--json"], "usage"),
        (vec!["dev", "turn", "--input", " ", "--json"], "usage"),
        (
            vec![
                "dev",
                "turn",
                "--input",
                "hi",
                "--workspace",
                "/no/such/dir",
                "--json",
            ],
            "session.workspace_missing",
        ),
    ] {
        let out = sb.run(&args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert_failure_shape(&out, code);
    }
    let out = sb.run(&["plugin", "validate", "/no/such/dir", "--json"]);
    let v = assert_failure_shape(&out, "install.source_unreadable");
    assert!(v["errors"].is_array(), "{v}");

    // The commands that lacked --json have it.
    for (args, key) in [
        (vec!["plugin", "doctor", "shape", "--json"], "findings"),
        (vec!["plugin", "disable", "shape", "--json"], "enabled"),
        (vec!["plugin", "enable", "shape", "--json"], "enabled"),
    ] {
        let out = sb.run(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v = json_of(&out);
        assert_eq!(v["ok"], true, "{v}");
        assert!(v.get(key).is_some(), "{args:?}: {v}");
    }
}

#[test]
fn a_failed_install_does_not_say_applied() {
    let sb = Sandbox::new();
    let src = sb.dir.path().join("src/race");
    native_package(&src, "race", "1.0.0");
    let src_s = src.to_str().unwrap();
    // Plan, then let another install take the name before this one applies.
    let paused = sb.pause_at(
        &["plugin", "install", src_s, "--yes", "--json"],
        "after_plan",
    );
    sb.ok(&["plugin", "install", src_s, "--yes"]);
    let out = paused.resume();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = last_json(&out);
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["status"], "failed", "{v}");
    assert_eq!(v["applied"], false, "{v}");
    assert_eq!(v["errorCode"], "install.already_exists", "{v}");
    assert!(!v["error"].as_str().unwrap().is_empty(), "{v}");
}

// ------------------------------------------------------------ item 18

/// Run under a pseudo-terminal (util-linux `script`): stdout is a terminal.
fn on_a_terminal(sb: &Sandbox, args: &[&str]) -> (i32, String) {
    let line = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(&sb.work)
        .env("REASONIX_HOME", &sb.home)
        .env("HOME", &sb.user)
        .stdin(Stdio::null())
        .output()
        .expect("script(1) runs");
    (out.status.code().unwrap_or(-1), text(&out.stdout))
}

#[test]
fn install_and_remove_speak_json_to_scripts_and_prose_to_people() {
    let sb = Sandbox::new();
    let src = sb.dir.path().join("src/both");
    native_package(&src, "both", "1.0.0");
    let src_s = src.to_str().unwrap();

    // A terminal: a summary, no JSON.
    let (code, out) = on_a_terminal(&sb, &["plugin", "install", src_s, "--yes"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("installed: plugin both 1.0.0"), "{out}");
    assert!(!out.contains("\"op\""), "{out}");
    let (code, out) = on_a_terminal(&sb, &["plugin", "remove", "both", "--yes"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("removed both"), "{out}");
    assert!(!out.contains("\"op\""), "{out}");
    // --json on a terminal: the JSON.
    let (code, out) = on_a_terminal(&sb, &["plugin", "install", src_s, "--yes", "--json"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\"status\":\"done\""), "{out}");

    // A script (a pipe): the JSON on stdout, upstream-compatible.
    let out = sb.run(&["plugin", "remove", "both", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = last_json(&out);
    assert_eq!(v["op"], "uninstall");
    assert_eq!(v["status"], "done");
    let out = sb.run(&["plugin", "install", src_s, "--yes"]);
    let v = last_json(&out);
    assert_eq!(v["status"], "done");
}

#[test]
fn install_and_remove_say_what_is_missing_before_asking_for_yes() {
    let (sb, _src) = installed("present");
    let out = sb.run(&["plugin", "install", "./no-such-dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("install.source_unreadable"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("--yes"), "{}", stderr(&out));
    let out = sb.run(&["plugin", "remove", "ghost"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("plugin.not_installed"),
        "{}",
        stderr(&out)
    );
    // Existing things still need the confirmation.
    let out = sb.run(&["plugin", "remove", "present"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    assert!(sb.home.join("plugins/present").exists());
}

// ------------------------------------------------------------ item 19

/// A package whose runtime command is missing (or not executable).
fn broken_runtime(sb: &Sandbox, name: &str) -> std::path::PathBuf {
    let src = sb.work.join(name);
    write(
        &src.join("reasonix-plugin.json"),
        &json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": name,
            "version": "1.0.0",
            "runtime": {
                "command": "${REASONIX_PLUGIN_ROOT}/bin/ext",
                "intercepts": ["input.receive"],
                "capabilities": ["interceptors"],
                "required": true,
            }
        })
        .to_string(),
    );
    src
}

#[test]
fn a_runtime_that_cannot_be_spawned_is_a_spawn_failure() {
    let sb = Sandbox::new();
    let src = broken_runtime(&sb, "nobin");
    sb.ok(&[
        "plugin",
        "install",
        src.to_str().unwrap(),
        "--yes",
        "--link",
    ]);
    let out = sb.run(&["dev", "turn", "--input", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("failed at spawn"), "{err}");
    assert!(!err.contains("provider_interrupted"), "{err}");
    // Present but not executable: the same.
    write(&src.join("bin/ext"), "not a program");
    let out = sb.run(&["dev", "turn", "--input", "hi"]);
    let err = stderr(&out);
    assert!(err.contains("failed at spawn"), "{err}");
    assert!(err.contains("not executable"), "{err}");
}

#[test]
fn doctor_tells_a_linked_plugin_to_rebuild_not_to_reinstall() {
    let sb = Sandbox::new();
    let src = broken_runtime(&sb, "linked");
    sb.ok(&[
        "plugin",
        "install",
        src.to_str().unwrap(),
        "--yes",
        "--link",
    ]);
    let out = sb.run(&["plugin", "doctor", "linked"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("missing runtime command"), "{stdout}");
    assert!(stdout.contains("no reinstall is needed"), "{stdout}");
    assert!(!stdout.contains("--replace"), "{stdout}");
    let out = sb.run(&["plugin", "doctor", "linked", "--json"]);
    let v = json_of(&out);
    assert_eq!(v["ok"], false);
    assert_eq!(v["linked"], true);
    assert!(
        v["next"]
            .as_str()
            .unwrap()
            .contains("build the runtime binary"),
        "{v}"
    );
    // The workspace doctor says the same.
    let caps = text(&sb.run(&["doctor", "capabilities", "--json"]).stdout);
    assert!(caps.contains("plugin.runtime_command_missing"), "{caps}");
    assert!(caps.contains("no reinstall is needed"), "{caps}");

    // A copy still needs the reinstall.
    let sb = Sandbox::new();
    let src = broken_runtime(&sb, "copied");
    sb.ok(&["plugin", "install", src.to_str().unwrap(), "--yes"]);
    let stdout = text(&sb.run(&["plugin", "doctor", "copied"]).stdout);
    assert!(stdout.contains("--replace --yes"), "{stdout}");
}

#[test]
fn dev_turn_refuses_a_workspace_that_does_not_exist() {
    let sb = Sandbox::new();
    let out = sb.run(&[
        "dev",
        "turn",
        "--input",
        "hi",
        "--workspace",
        "/no/such/workspace",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = stderr(&out);
    assert!(
        err.contains("workspace /no/such/workspace: not a directory"),
        "{err}"
    );
    assert!(err.contains("[session.workspace_missing]"), "{err}");
    assert!(out.stdout.is_empty());
}

// ------------------------------------------------------------ item 20

#[test]
fn library_warnings_reach_stderr_and_stdout_stays_clean() {
    let o = outside_common::Outside::new();
    // An optional sidecar that dies mid-intercept: the host logs a warning.
    let root = o.package("dies", "exit_mid", json!({}), json!({}));
    o.install(&root);
    let run = |extra: &[(&str, &str)], args: &[&str]| {
        let mut cmd = Command::new(outside_common::REASONIX);
        let mut all = vec!["dev", "turn", "--workspace", o.workspace.to_str().unwrap()];
        all.extend_from_slice(args);
        cmd.args(&all)
            .env("REASONIX_HOME", &o.home)
            .env("OUTSIDE_LOG", &o.log)
            .env_remove("RUST_LOG")
            .current_dir(&o.workspace);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let out = run(&[], &["--input", "hi", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    json_of(&out);
    assert!(
        stderr(&out).contains("WARN") && stderr(&out).contains("sidecar connection failed"),
        "{}",
        stderr(&out)
    );
    // -v adds more; RUST_LOG decides when set.
    assert!(!stderr(&out).contains("INFO"), "{}", stderr(&out));
    let verbose = run(&[], &["-v", "--input", "hi", "--json"]);
    json_of(&verbose);
    assert!(
        stderr(&verbose).contains("INFO") && stderr(&verbose).contains("extension runtime started"),
        "{}",
        stderr(&verbose)
    );
    let silent = run(&[("RUST_LOG", "off")], &["--input", "hi", "--json"]);
    json_of(&silent);
    assert!(!stderr(&silent).contains("WARN"), "{}", stderr(&silent));
}
