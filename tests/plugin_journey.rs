//! The new-user journey on `examples/starter`: dry-run, yes, list, show,
//! doctor, disable, enable, export, install the zip under another name,
//! remove — each printing something a person can act on.
mod plugin_common;

use std::path::PathBuf;

use plugin_common::*;

fn starter() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/starter")
        .canonicalize()
        .unwrap()
}

#[test]
fn starter_journey() {
    let sb = Sandbox::new();
    let src = starter();
    let src_s = src.to_str().unwrap();
    let source_before = tree_listing(&src);

    // 1. Preview: the plan, nothing written.
    let out = sb.run(&["plugin", "install", src_s, "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = last_json(&out);
    assert_eq!(plan["status"], "planned");
    assert_eq!(plan["applied"], false);
    let action = &plan["actions"][0];
    assert_eq!(action["name"], "starter");
    assert_eq!(action["kind"], "plugin");
    assert_eq!(action["mode"], "copy");
    // The starter declares a code-extension runtime: full trust, graded high.
    assert_eq!(action["riskLevel"], "high");
    assert_eq!(action["runtime"]["fullTrust"], true);
    assert!(action["riskReasons"].to_string().contains("FULL TRUST"));
    assert_eq!(action["treeDigest"], digest_of(&src).as_str());
    let plan_id = plan["planId"].as_str().unwrap().to_string();
    assert!(plan_id.starts_with("high:sha256:") && plan_id.len() == "high:sha256:".len() + 32);
    let content = plan["contentDigest"].as_str().unwrap().to_string();
    assert!(reasonix::install::digest::is_content_digest(&content));
    assert!(
        stderr(&out).contains("--yes"),
        "summary says what next: {}",
        stderr(&out)
    );
    assert!(!sb.home.exists(), "--dry-run wrote under the home");

    // The same source planned from another home has the same contentDigest.
    let other = Sandbox::new();
    let (_, plan2) = other.json(&["plugin", "install", src_s, "--dry-run", "--json"]);
    assert_eq!(plan2["contentDigest"], content.as_str());
    assert_ne!(
        plan2["planId"],
        plan_id.as_str(),
        "planId covers where it writes"
    );

    // 2. Apply exactly that plan.
    let out = sb.run(&["plugin", "install", src_s, "--yes", "--plan-id", &plan_id]);
    assert!(out.status.success(), "{}", stderr(&out));
    let done = last_json(&out);
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["applied"], true);
    let installed = sb.home.join("plugins/starter");
    assert_eq!(digest_of(&installed), digest_of(&src));
    let reg = sb.registry();
    assert_eq!(reg["plugins"][0]["treeDigest"], digest_of(&src).as_str());
    assert_eq!(reg["plugins"][0]["root"], "plugins/starter");
    assert!(stderr(&out).contains("reasonix plugin show starter"));
    // Not a terminal: a plain summary, no progress bar escapes.
    assert!(!stderr(&out).contains('\u{1b}') && !stderr(&out).contains('\r'));

    // 3. list (TSV) and list --json.
    let list = sb.ok(&["plugin", "list"]);
    // The fifth column: what it contributes, its runtime flagged FULL TRUST.
    let contributes = "1 skills / 1 commands / 1 prompts / 1 themes / FULL TRUST runtime";
    assert_eq!(
        list,
        format!("starter\tenabled\t0.1.0\t{src_s}\t{contributes}\n")
    );
    let (_, lj) = sb.json(&["plugin", "list", "--json"]);
    assert_eq!(lj["plugins"][0]["state"], "enabled");

    // 4. show
    let show = sb.ok(&["plugin", "show", "starter"]);
    for needle in [
        "name: starter",
        "version: 0.1.0",
        "enabled: true",
        "kind: reasonix",
        &format!("root: {}", installed.display()),
        &format!("source: {src_s}"),
        "themes: 1",
        "plugin:starter:sunrise",
        "FULL TRUST",
        "command: ${REASONIX_PLUGIN_ROOT}/bin/starter",
        "intercepts: input.receive",
    ] {
        assert!(show.contains(needle), "show lacks {needle:?}:\n{show}");
    }

    // 5. doctor: the runtime binary exists once `examples/build starter` ran
    // (bin/ is not committed); either way the output says what to do.
    let out = sb.run(&["plugin", "doctor", "starter"]);
    let doctor = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(doctor.contains("FULL TRUST"), "{doctor}");
    assert!(doctor.contains("matches the registry"), "{doctor}");
    if src.join("bin/starter").is_file() {
        assert!(out.status.success(), "{doctor}");
        assert!(doctor.contains("ok: starter"), "{doctor}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{doctor}");
        assert!(doctor.contains("missing runtime command"), "{doctor}");
        assert!(doctor.contains("bin/starter"), "{doctor}");
    }

    // 6. disable / enable
    assert_eq!(
        sb.ok(&["plugin", "disable", "starter"]),
        "disabled starter\n"
    );
    assert_eq!(
        sb.ok(&["plugin", "list"]),
        format!("starter\tdisabled\t0.1.0\t{src_s}\t{contributes}\n")
    );
    assert_eq!(sb.ok(&["plugin", "enable", "starter"]), "enabled starter\n");

    // 7. export
    let zip = sb.work.join("starter.zip");
    let exported = sb.ok(&["plugin", "export", "starter", "-o", zip.to_str().unwrap()]);
    assert!(exported.contains("exported starter"), "{exported}");
    assert!(
        exported.contains("required environment variables"),
        "{exported}"
    );
    assert!(zip.is_file());

    // 8. install the zip under another name
    let out = sb.run(&[
        "plugin",
        "install",
        "./starter.zip",
        "--name",
        "starter-copy",
        "--yes",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let copy = sb.home.join("plugins/starter-copy");
    // Every file travels byte for byte except the credential-bearing
    // manifest, which is re-serialised (sorted keys) with the same content.
    let mut a = tree_listing(&copy);
    let mut b = tree_listing(&installed);
    let ma = a.remove("reasonix-plugin.json").unwrap();
    let mb = b.remove("reasonix-plugin.json").unwrap();
    assert_eq!(a, b, "export round-trips the package");
    assert_ne!(ma, mb, "the manifest is re-serialised");
    let parse = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p.join("reasonix-plugin.json")).unwrap()).unwrap()
    };
    assert_eq!(parse(&copy), parse(&installed));
    let list = sb.ok(&["plugin", "list"]);
    assert!(list.contains("starter-copy\tenabled\t0.1.0\t"), "{list}");

    // 9. remove --yes
    let (code, removed) = sb.json(&["plugin", "remove", "starter-copy", "--yes", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(removed["status"], "done");
    assert_eq!(removed["actions"][0]["action"], "remove_plugin_package");
    assert!(!copy.exists());
    let out = sb.run(&["plugin", "uninstall", "starter", "--yes"]);
    assert!(out.status.success());
    assert_eq!(sb.ok(&["plugin", "list"]), "no plugins installed\n");
    let (code, again) = sb.json(&["plugin", "remove", "starter", "--yes", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(again["status"], "blocked");
    assert_eq!(again["ok"], false);
    assert_eq!(again["errorCode"], "plugin.not_installed");

    // The source directory was only ever read.
    assert_eq!(tree_listing(&src), source_before);
}

#[test]
fn linked_install_leaves_the_source_in_place_on_removal() {
    let sb = Sandbox::new();
    let dev = sb.work.join("dev");
    native_package(&dev, "dev", "0.0.1");
    let before = tree_listing(&dev);
    let (code, v) = sb.json(&["plugin", "install", "./dev", "--link", "--yes", "--json"]);
    assert_eq!(code, 0, "{v}");
    let action = &v["actions"][0];
    assert_eq!(action["mode"], "link");
    assert!(
        v.get("contentDigest").is_none(),
        "link mode is not pinnable: {v}"
    );
    assert!(
        action["riskReasons"]
            .to_string()
            .contains("mutable local directory")
    );
    let link = sb.home.join("plugins/dev");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        dev.canonicalize().unwrap()
    );
    let show = sb.ok(&["plugin", "show", "dev"]);
    assert!(show.contains("mode: link"), "{show}");
    sb.ok(&["plugin", "remove", "dev", "--yes"]);
    assert!(std::fs::symlink_metadata(&link).is_err());
    assert_eq!(
        tree_listing(&dev),
        before,
        "linked source must be left in place"
    );

    // A zip cannot be linked; a link must stay inside home or workspace.
    let outside = tempfile::tempdir().unwrap();
    native_package(outside.path(), "far", "1.0.0");
    let (code, v) = sb.json(&[
        "plugin",
        "install",
        outside.path().to_str().unwrap(),
        "--link",
        "--yes",
        "--json",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["actions"][0]["errorCode"], "install.unsafe_link", "{v}");
}

#[test]
fn runtime_plans_show_the_full_trust_block() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("ext");
    write(
        &pkg.join("reasonix-plugin.json"),
        r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "ext",
  "version": "1.0.0",
  "runtime": {
    "command": "${REASONIX_PLUGIN_ROOT}/bin/ext",
    "args": ["--serve"],
    "intercepts": ["input.receive", "tool.before"],
    "replaces": ["system_prompt"],
    "capabilities": ["interceptors", "tools", "ui"],
    "tools": [{"name": "lookup", "description": "Look a term up", "inputSchema": {"type": "object"}}]
  }
}
"#,
    );
    write(&pkg.join("bin/ext"), "#!/bin/sh\n");
    let (_, plan) = sb.json(&["plugin", "install", "./ext", "--dry-run", "--json"]);
    let a = &plan["actions"][0];
    assert_eq!(a["riskLevel"], "high");
    assert!(plan["planId"].as_str().unwrap().starts_with("high:sha256:"));
    assert_eq!(a["runtime"]["fullTrust"], true);
    assert_eq!(a["runtime"]["command"], "${REASONIX_PLUGIN_ROOT}/bin/ext");
    assert_eq!(a["runtime"]["tools"][0], "lookup");
    assert!(a["riskReasons"].to_string().contains("FULL TRUST"));
    sb.ok(&["plugin", "install", "./ext", "--yes"]);
    let show = sb.ok(&["plugin", "show", "ext"]);
    for needle in [
        "FULL TRUST",
        "command: ${REASONIX_PLUGIN_ROOT}/bin/ext --serve",
        "intercepts: input.receive, tool.before",
        "replaces: system_prompt",
        "provider/UI capabilities: ui",
        "tools: lookup",
    ] {
        assert!(show.contains(needle), "show lacks {needle:?}:\n{show}");
    }
    // doctor: the runtime command exists in the installed root.
    let doctor = sb.ok(&["plugin", "doctor", "ext"]);
    assert!(
        doctor.contains("FULL TRUST") && doctor.contains("ok: ext"),
        "{doctor}"
    );
    std::fs::remove_file(sb.home.join("plugins/ext/bin/ext")).unwrap();
    let out = sb.run(&["plugin", "doctor", "ext"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("missing runtime command"));
}

#[test]
fn export_strips_credentials_and_reinstalls() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("creds");
    write(
        &pkg.join("reasonix-plugin.json"),
        r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "creds",
  "version": "1.0.0",
  "contributes": {
    "mcpServers": {
      "docs": {"type": "http", "url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer hunter2"}},
      "local": {"command": "bin/server", "env": {"TOKEN": "${DOCS_TOKEN}", "MODE": "fast"}}
    }
  }
}
"#,
    );
    write(&pkg.join("bin/server"), "#!/bin/sh\n");
    write(&pkg.join("notes/env.json"), r#"{"env":{"KEEP":"as-is"}}"#);
    write(
        &pkg.join(".git/config"),
        "[remote] url = https://token@github.com/x\n",
    );
    sb.ok(&["plugin", "install", "./creds", "--yes"]);
    let (_, v) = sb.json(&["plugin", "export", "creds", "-o", "out/creds.zip", "--json"]);
    assert_eq!(
        v["requiredEnv"],
        serde_json::json!(["DOCS_AUTHORIZATION", "DOCS_TOKEN", "LOCAL_MODE"])
    );
    let zip_path = sb.work.join("out/creds.zip");
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&zip_path).unwrap()).unwrap();
    let names: Vec<String> = (0..archive.len())
        .map(|i| String::from_utf8_lossy(archive.by_index(i).unwrap().name_raw()).into_owned())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("creds/")), "{names:?}");
    assert!(!names.iter().any(|n| n.contains(".git")), "{names:?}");
    let mut manifest = String::new();
    std::io::Read::read_to_string(
        &mut archive.by_name("creds/reasonix-plugin.json").unwrap(),
        &mut manifest,
    )
    .unwrap();
    assert!(!manifest.contains("hunter2"), "{manifest}");
    assert!(manifest.contains("${DOCS_AUTHORIZATION}") && manifest.contains("${LOCAL_MODE}"));
    let mut other = String::new();
    std::io::Read::read_to_string(
        &mut archive.by_name("creds/notes/env.json").unwrap(),
        &mut other,
    )
    .unwrap();
    assert_eq!(
        other, r#"{"env":{"KEEP":"as-is"}}"#,
        "other files travel byte for byte"
    );
    // Re-installable through the normal .zip source.
    let (code, plan) = sb.json(&[
        "plugin",
        "install",
        "out/creds.zip",
        "--name",
        "creds2",
        "--yes",
        "--json",
    ]);
    assert_eq!(code, 0, "{plan}");
    assert_eq!(plan["actions"][0]["toolCount"], 2);
}

#[test]
fn doctor_checks_hook_shells_roots_and_themes() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("doc");
    write(
        &pkg.join("reasonix-plugin.json"),
        r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "doc",
  "version": "1.0.0",
  "contributes": {
    "skills": ["skills"],
    "themes": ["themes/*/theme.json"],
    "hooks": {"SessionStart": [{"command": "echo hi", "shell": "cmd"}]}
  }
}
"#,
    );
    write(
        &pkg.join("skills/s/SKILL.md"),
        "---\nname: s\ndescription: d\n---\nbody\n",
    );
    write(
        &pkg.join("themes/bad/theme.json"),
        r##"{"name":"Bad","colors":{"background":"#fff","accent":"orange"}}"##,
    );
    let (_, plan) = sb.json(&["plugin", "install", "./doc", "--dry-run", "--json"]);
    assert_eq!(
        plan["actions"][0]["riskLevel"], "high",
        "hooks grade high: {plan}"
    );
    assert!(
        plan["actions"][0]["riskReasons"]
            .to_string()
            .contains("shell hooks")
    );
    sb.ok(&["plugin", "install", "./doc", "--yes"]);
    let show = sb.ok(&["plugin", "show", "doc"]);
    assert!(
        show.contains("hooks:\n  SessionStart\tmatch=*\techo hi"),
        "{show}"
    );
    let out = sb.run(&["plugin", "doctor", "doc"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("unavailable SessionStart hook: cmd is only available on Windows"),
        "{text}"
    );
    assert!(
        text.contains("theme themes/bad/theme.json: token colors.accent dropped"),
        "{text}"
    );

    // Theme warnings alone never change the exit status.
    write(
        &pkg.join("reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"doc","version":"1.0.1","contributes":{"skills":["skills"],"themes":["themes/*/theme.json"]}}"#,
    );
    sb.ok(&["plugin", "install", "./doc", "--yes", "--replace"]);
    let text = sb.ok(&["plugin", "doctor", "doc"]);
    assert!(
        text.contains("token colors.accent dropped") && text.contains("ok: doc"),
        "{text}"
    );

    // A missing skill root fails the check.
    std::fs::remove_dir_all(sb.home.join("plugins/doc/skills")).unwrap();
    let out = sb.run(&["plugin", "doctor", "doc"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("missing skill root: skills"));

    // Not installed.
    let out = sb.run(&["plugin", "doctor", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not installed") && stderr(&out).contains("plugin list"));
}

#[test]
fn large_copies_show_progress_on_a_terminal_only() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("big");
    write(
        &pkg.join("reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"big"}"#,
    );
    // Incompressible-looking but deterministic bytes, above the 8 MiB threshold.
    let chunk: Vec<u8> = (0..(1u32 << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    let blob = chunk.repeat(9);
    std::fs::write(pkg.join("blob.bin"), blob).unwrap();
    // Not a terminal: no bar.
    let out = sb.run(&["plugin", "install", "./big", "--dry-run"]);
    assert!(!stderr(&out).contains("MiB"), "{}", stderr(&out));
    // A real pseudo-terminal through util-linux `script`, where available.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("`script` not installed; terminal half skipped");
        return;
    }
    let cmd = format!("{BIN} plugin install ./big --yes");
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(&sb.work)
        .env("REASONIX_HOME", &sb.home)
        .env("HOME", &sb.user)
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("copying big") && text.contains("MiB"),
        "{text}"
    );
    assert!(sb.home.join("plugins/big/blob.bin").is_file());
}
