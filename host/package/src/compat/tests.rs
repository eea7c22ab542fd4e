//! Conformance cases mirroring upstream's compatibility tests (§c).

use std::fs;
use std::path::Path;

use super::*;
use crate::CompatibilityStatus as S;

fn write(root: &Path, rel: &str, body: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
}

fn claude(root: &Path) -> LoadedPackage {
    load(root, ManifestKind::Claude, CLAUDE_MANIFEST).unwrap()
}

fn codex(root: &Path) -> LoadedPackage {
    load(root, ManifestKind::Codex, CODEX_MANIFEST).unwrap()
}

fn reasons(p: &LoadedPackage) -> Vec<&str> {
    p.compatibility
        .skipped
        .iter()
        .map(|s| s.reason.as_str())
        .collect()
}

fn hooks_file(root: &Path, rel: &str, hooks: serde_json::Value) {
    write(
        root,
        rel,
        &serde_json::json!({ "hooks": hooks }).to_string(),
    );
}

#[test]
fn codex_manifest_reads_only_known_fields_and_claude_context() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        CODEX_MANIFEST,
        r#"{"name":"superpowers","version":"1.0","skills":"./skills/","hooks":{},"interface":{"x":1},"author":{"name":"a"},"apps":[1]}"#,
    );
    write(root, "skills/tdd/SKILL.md", "---\ndescription: TDD\n---\n");
    write(root, "CLAUDE.md", "context");
    hooks_file(
        root,
        ".claude/settings.json",
        serde_json::json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "echo hi", "timeout": 3},
                {"type": "prompt", "prompt": "judge"}
            ]}]
        }),
    );
    let p = codex(root);
    assert_eq!(p.kind, ManifestKind::Codex);
    assert_eq!(p.version.as_deref(), Some("1.0"));
    assert_eq!(p.inventory.skill_roots, ["skills"]);
    assert_eq!(p.inventory.skills.len(), 1);
    let hooks = &p.inventory.hooks;
    assert_eq!(hooks.len(), 2);
    let pre = hooks.iter().find(|h| h.event == "PreToolUse").unwrap();
    assert_eq!(pre.timeout_ms, Some(3000));
    assert_eq!(pre.matcher.as_deref(), Some("Bash"));
    assert_eq!(pre.payload_format.as_deref(), Some("claude"));
    assert_eq!(
        pre.description.as_deref(),
        Some("Claude-compatible hook from .claude/settings.json")
    );
    let ctx = hooks.iter().find(|h| h.event == "SessionStart").unwrap();
    assert_eq!(ctx.context_file.as_deref(), Some("CLAUDE.md"));
    assert_eq!(
        ctx.description.as_deref(),
        Some("Plugin CLAUDE.md startup context from superpowers")
    );
    assert_eq!(p.compatibility.status, S::Partial);
    assert_eq!(
        reasons(&p),
        [
            "apps are not supported: app connectors have no Reasonix equivalent",
            "unsupported hook type \"prompt\" for PreToolUse"
        ]
    );
    assert_eq!(p.compatibility.mapped, ["skills", "hooks"]);
}

#[test]
fn an_apps_only_codex_package_is_none_and_says_why() {
    for manifest in [
        r#"{"name":"connector","apps":"./.app.json","interface":{"displayName":"C"}}"#,
        r#"{"name":"connector"}"#,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, CODEX_MANIFEST, manifest);
        write(
            root,
            ".app.json",
            r#"{"apps":{"connector":{"id":"asdk_app_1"}}}"#,
        );
        let p = codex(root);
        assert_eq!(p.compatibility.status, S::None, "{manifest}");
        assert!(p.compatibility.mapped.is_empty());
        let skipped = &p.compatibility.skipped;
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!(skipped[0].capability, "apps");
        assert_eq!(skipped[0].path.as_deref(), Some(".app.json"));
        assert!(skipped[0].reason.starts_with("apps are not supported"));
    }
}

#[test]
fn claude_manifest_ignores_root_claude_md_and_codex_session_script() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    write(root, "CLAUDE.md", "context");
    write(root, "hooks/session-start-codex", "#!/bin/sh\n");
    write(root, "skills/a/SKILL.md", "");
    let p = claude(root);
    assert!(p.inventory.hooks.is_empty());
    assert_eq!(p.compatibility.status, S::Full);

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CODEX_MANIFEST, r#"{"name":"p"}"#);
    write(root, "hooks/session-start-codex", "#!/bin/sh\n");
    let p = codex(root);
    assert_eq!(p.inventory.hooks.len(), 1);
    let h = &p.inventory.hooks[0];
    assert_eq!(h.event, "SessionStart");
    assert_eq!(
        h.command.as_deref(),
        Some(root.join("hooks/session-start-codex").to_str().unwrap())
    );
    assert_eq!(h.cwd.as_deref(), Some(root.to_str().unwrap()));
}

#[test]
fn claude_convention_skill_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    write(root, "skills/one/SKILL.md", "");
    write(root, ".claude/skills/two/SKILL.md", "");
    let p = claude(root);
    assert_eq!(p.inventory.skill_roots, [".claude/skills", "skills"]);
    let names: Vec<_> = p.inventory.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["two", "one"]);

    // An empty convention dir is not adopted; explicit skills win.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p","skills":["custom"]}"#);
    fs::create_dir_all(root.join(".claude/skills")).unwrap();
    write(root, "skills/ignored/SKILL.md", "");
    write(root, "custom/mine/SKILL.md", "");
    let p = claude(root);
    assert_eq!(p.inventory.skill_roots, ["custom"]);
    assert_eq!(p.inventory.skills.len(), 1);
    assert_eq!(p.inventory.skills[0].name, "mine");
}

#[test]
fn hooks_keep_distinct_env_timeout_async_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    hooks_file(
        root,
        CLAUDE_HOOKS,
        serde_json::json!({"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"command": "guard"}]},
            {"matcher": "Bash", "hooks": [{"command": "guard"}]},
            {"matcher": "Bash", "hooks": [{"command": "guard", "env": {"MODE": "strict", "": "dropped"}}]},
            {"matcher": "Bash", "hooks": [{"command": "guard", "timeout": 5}]},
            {"matcher": "Bash", "hooks": [{"command": "guard", "async": true}]}
        ]}),
    );
    let p = claude(root);
    assert_eq!(p.inventory.hooks.len(), 4);
    let with_env = &p.inventory.hooks[1];
    assert_eq!(with_env.env.len(), 1);
    assert_eq!(with_env.env["MODE"], "strict");
    assert_eq!(p.compatibility.status, S::Full);
}

#[test]
fn hooks_preserve_exec_and_shell_forms() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    hooks_file(
        root,
        CLAUDE_HOOKS,
        serde_json::json!({"SessionStart": [{"hooks": [
            {"command": "bin/run", "args": []},
            {"command": "bin/run", "args": ["", " spaced ", "$HOME"]},
            {"command": "echo $HOME && true", "shell": "BASH"},
            {"command": "echo plain"},
            {"command": "Write-Host hi", "shell": "powershell"},
            {"command": "   "}
        ]}]}),
    );
    let p = claude(root);
    let h = &p.inventory.hooks;
    assert_eq!(h.len(), 5);
    assert_eq!(h[0].args, Some(vec![]));
    assert!(!h[0].shell_command);
    assert_eq!(
        h[1].args,
        Some(vec![
            "".to_owned(),
            " spaced ".to_owned(),
            "$HOME".to_owned()
        ])
    );
    assert_eq!(h[2].args, None);
    assert_eq!(h[2].shell.as_deref(), Some("bash"));
    assert!(h[2].shell_command);
    assert_eq!(h[3].shell, None);
    assert!(h[3].shell_command);
    assert_eq!(h[4].shell.as_deref(), Some("powershell"));
    assert_eq!(p.compatibility.status, S::Full);
}

#[test]
fn hooks_warn_on_unsupported_semantics() {
    let cases: Vec<(&str, serde_json::Value, &str)> = vec![
        (
            "if",
            serde_json::json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "x", "if": "Bash(git *)"}]}]}),
            "does not evaluate",
        ),
        (
            "asyncRewake sync",
            serde_json::json!({"PostToolUse": [{"matcher": "Bash", "hooks": [{"command": "x", "asyncRewake": true}]}]}),
            "it runs synchronously instead",
        ),
        (
            "asyncRewake async",
            serde_json::json!({"PostToolUse": [{"matcher": "Bash", "hooks": [{"command": "x", "async": true, "asyncRewake": true}]}]}),
            "without a wake-on-exit-2 callback",
        ),
        (
            "Stop",
            serde_json::json!({"Stop": [{"hooks": [{"command": "x"}]}]}),
            "cannot block the turn",
        ),
        (
            "SubagentStop",
            serde_json::json!({"SubagentStop": [{"hooks": [{"command": "x"}]}]}),
            "cannot block the turn",
        ),
        (
            "WebSearch",
            serde_json::json!({"PreToolUse": [{"matcher": "WebSearch", "hooks": [{"command": "x"}]}]}),
            "will never fire",
        ),
        (
            "plan modes",
            serde_json::json!({"PreToolUse": [{"matcher": "ExitPlanMode|EnterPlanMode", "hooks": [{"command": "x"}]}]}),
            "will never fire",
        ),
        (
            "Artifact",
            serde_json::json!({"PermissionRequest": [{"matcher": "Artifact", "hooks": [{"command": "x"}]}]}),
            "will never fire",
        ),
        (
            "WebFetch",
            serde_json::json!({"PreToolUse": [{"matcher": "WebFetch", "hooks": [{"command": "x"}]}]}),
            "WebFetch",
        ),
        (
            "NotebookEdit",
            serde_json::json!({"PostToolUse": [{"matcher": "Notebook.*", "hooks": [{"command": "x"}]}]}),
            "NotebookEdit",
        ),
        (
            "TaskOutput",
            serde_json::json!({"PreToolUse": [{"matcher": "TaskOutput", "hooks": [{"command": "x"}]}]}),
            "TaskOutput",
        ),
        (
            "BashOutput",
            serde_json::json!({"PreToolUse": [{"matcher": "BashOutput", "hooks": [{"command": "x"}]}]}),
            "TaskOutput",
        ),
        (
            "wildcard",
            serde_json::json!({"PreToolUse": [{"matcher": "*", "hooks": [{"command": "x"}]}]}),
            "WebFetch",
        ),
        (
            "empty matcher",
            serde_json::json!({"PostToolUseFailure": [{"hooks": [{"command": "x"}]}]}),
            "NotebookEdit",
        ),
        (
            "unknown event",
            serde_json::json!({"TeammateIdle": [{"hooks": [{"command": "x"}]}], "SessionStart": [{"hooks": [{"command": "y"}]}]}),
            "unsupported Claude hook event \"TeammateIdle\"",
        ),
    ];
    for (label, hooks, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
        hooks_file(root, CLAUDE_HOOKS, hooks);
        let p = claude(root);
        assert_eq!(p.compatibility.status, S::Partial, "{label}");
        assert!(
            reasons(&p).iter().any(|r| r.contains(needle)),
            "{label}: {:?}",
            reasons(&p)
        );
        assert!(
            !p.inventory.hooks.is_empty(),
            "{label}: hook still imported"
        );
        assert!(
            p.compatibility
                .skipped
                .iter()
                .all(|s| s.path.as_deref() == Some(CLAUDE_HOOKS))
        );
    }
}

#[test]
fn hooks_with_unsupported_shell_are_skipped_leaving_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    hooks_file(
        root,
        CLAUDE_HOOKS,
        serde_json::json!({"SessionStart": [{"hooks": [{"command": "x", "shell": "zsh"}]}]}),
    );
    let p = claude(root);
    assert_eq!(p.compatibility.status, S::None);
    assert!(p.compatibility.mapped.is_empty());
    assert_eq!(
        reasons(&p),
        ["SessionStart hook \"x\" uses unsupported shell \"zsh\""]
    );
}

#[test]
fn structural_gaps_are_reported_once_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    hooks_file(
        root,
        CLAUDE_HOOKS,
        serde_json::json!({
            "PreToolUse": [{"hooks": [{"command": "a"}, {"command": "b"}]}],
            "PostToolUse": [{"matcher": "*", "hooks": [{"command": "c"}]}]
        }),
    );
    let p = claude(root);
    assert_eq!(p.inventory.hooks.len(), 3);
    assert_eq!(p.compatibility.skipped.len(), 3, "{:?}", reasons(&p));
}

#[test]
fn matchers_that_can_fire_do_not_warn() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    hooks_file(
        root,
        CLAUDE_HOOKS,
        serde_json::json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "a"}]},
                           {"matcher": "Edit|Write", "hooks": [{"command": "b"}]},
                           {"matcher": "WebSearch|Read", "hooks": [{"command": "c"}]},
                           {"matcher": "mcp__.*", "hooks": [{"command": "d"}]}],
            "SessionStart": [{"matcher": "WebSearch", "hooks": [{"command": "e"}]}]
        }),
    );
    let p = claude(root);
    assert_eq!(p.compatibility.status, S::Full, "{:?}", reasons(&p));
    assert_eq!(p.inventory.hooks.len(), 5);
}

#[test]
fn claude_conventions_map_agents_commands_and_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    write(
        root,
        "agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews\nmodel: opus\ntools: Read, Grep, mcp__github__get_issue\n---\nPrompt",
    );
    write(
        root,
        "commands/deploy.md",
        "---\ndescription: Deploy\nargument-hint: <env>\n---\nDeploy $1",
    );
    write(root, ".claude/commands/git/commit.md", "Commit");
    hooks_file(
        root,
        CLAUDE_HOOKS,
        serde_json::json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "${CLAUDE_PLUGIN_ROOT}/guard", "args": ["--strict"]}]}]}),
    );
    write(
        root,
        MCP_FILE,
        r#"{"mcpServers": {
            "本地": {"type": "local", "command": "node", "args": ["server.js", " "], "alwaysLoad": true},
            "docs": {"type": "streamable-http", "url": "https://docs.example/mcp", "title": "Docs"},
            "events": {"type": "sse", "url": "https://e.example/sse"},
            "broken": {"type": "ws", "url": "wss://x"},
            "nocmd": {"type": "stdio"},
            "nourl": {"type": "http"}
        }}"#,
    );
    let p = claude(root);
    let agent = &p.inventory.agents[0];
    assert_eq!(agent.name, "reviewer");
    assert_eq!(agent.model, None, "Claude aliases inherit the active model");
    assert_eq!(agent.tools, ["read_file", "grep", "mcp__github__get_issue"]);
    let cmds: Vec<_> = p
        .inventory
        .commands
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(cmds, ["deploy", "git:commit"]);
    assert_eq!(
        p.inventory.commands[0].argument_hint.as_deref(),
        Some("<env>")
    );
    assert_eq!(
        p.inventory.hooks[0].args.as_deref(),
        Some(&["--strict".to_owned()][..])
    );
    let servers = &p.inventory.mcp_servers;
    assert_eq!(servers.len(), 3);
    let local = servers.iter().find(|s| s.transport == "stdio").unwrap();
    assert!(local.name.starts_with("server_"), "{}", local.name);
    assert_eq!(local.args, ["server.js"]);
    assert_eq!(local.load.as_deref(), Some("always"));
    assert_eq!(local.display_name.as_deref(), Some("本地"));
    let docs = servers.iter().find(|s| s.name == "docs").unwrap();
    assert_eq!(docs.transport, "http");
    assert_eq!(docs.display_name.as_deref(), Some("Docs"));
    assert!(servers.iter().all(|s| !s.auto_start && s.imported));
    assert_eq!(
        reasons(&p),
        [
            "MCP server \"broken\" has unsupported transport \"ws\"",
            "MCP server \"nocmd\" has no command",
            "MCP server \"nourl\" has no URL"
        ]
    );
    assert_eq!(
        p.compatibility.mapped,
        ["commands", "agents", "hooks", "mcp"]
    );
}

#[test]
fn mcp_ids_follow_connection_identity() {
    let a = mcp::identity_json(
        "stdio",
        "node",
        &["a.js".into()],
        &Default::default(),
        "",
        &Default::default(),
    );
    let b = mcp::identity_json(
        "stdio",
        "node",
        &["b.js".into()],
        &Default::default(),
        "",
        &Default::default(),
    );
    assert_ne!(mcp::server_id("服务", &a), mcp::server_id("服务", &b));
    assert_eq!(mcp::server_id("服务", &a), mcp::server_id(" 服务 ", &a));
    assert_eq!(mcp::server_id("github", &a), "github");
}

#[test]
fn codex_is_not_affected_by_claude_fallbacks_and_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CODEX_MANIFEST, r#"{"name":"p"}"#);
    write(root, "skills/one/SKILL.md", "");
    write(root, "commands/c.md", "");
    write(root, "agents/a.md", "");
    let p = codex(root);
    assert!(p.inventory.skills.is_empty());
    assert!(p.inventory.commands.is_empty());
    assert!(p.inventory.agents.is_empty());
    assert_eq!(p.compatibility.status, S::None);
    let skipped: Vec<_> = p
        .compatibility
        .skipped
        .iter()
        .map(|s| (s.capability.as_str(), s.path.as_deref()))
        .collect();
    assert_eq!(
        skipped,
        [("commands", Some("commands")), ("agents", Some("agents"))]
    );

    // Declared explicitly, Codex commands and agents map.
    write(
        root,
        CODEX_MANIFEST,
        r#"{"name":"p","commands":"commands","agents":["agents"]}"#,
    );
    let p = codex(root);
    assert_eq!(p.inventory.commands.len(), 1);
    assert_eq!(p.inventory.agents.len(), 1);
    assert_eq!(p.compatibility.status, S::Full);
}

#[test]
fn shapes_upstream_drops_are_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        CODEX_MANIFEST,
        r#"{"name":"p","mcpServers":"./config/servers.json"}"#,
    );
    write(
        root,
        "config/servers.json",
        r#"{"mcp_servers":{"tool":{"command":"bin/tool"}}}"#,
    );
    write(
        root,
        MCP_FILE,
        r#"{"flat":{"url":"https://x.example/mcp"},"$schema":"s"}"#,
    );
    hooks_file(
        root,
        ROOT_HOOKS,
        serde_json::json!({"SessionStart": [{"hooks": [{"command": "hi"}]}]}),
    );
    let p = codex(root);
    let names: Vec<_> = p
        .inventory
        .mcp_servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["flat", "tool"]);
    assert_eq!(p.inventory.hooks.len(), 1);
    assert_eq!(p.inventory.hooks[0].source, "hooks.json");
    assert_eq!(p.compatibility.status, S::Full);
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);

    // Inline manifest hooks; a hooks file in an unknown shape is reported.
    write(
        root,
        CLAUDE_MANIFEST,
        r#"{"name":"q","hooks":{"Stop":[{"hooks":[{"command":"bye"}]}]}}"#,
    );
    write(root, ROOT_HOOKS, r#"{"version":1,"sessionStart":[]}"#);
    let p = claude(root);
    assert_eq!(p.inventory.hooks.len(), 1);
    assert_eq!(p.inventory.hooks[0].source, CLAUDE_MANIFEST);
    assert!(
        reasons(&p)
            .iter()
            .any(|r| r.contains("no Claude \"hooks\" object"))
    );
}

#[test]
fn nested_commands_are_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p","skills":["s"]}"#);
    write(root, "s/x/SKILL.md", "");
    write(
        root,
        "commands/a/b/c/commit.md",
        "---\ndescription: Deep\n---\n",
    );
    let p = claude(root);
    assert_eq!(p.inventory.commands[0].name, "a:b:c:commit");
    assert_eq!(p.inventory.command_roots, ["commands"]);
}

#[test]
fn gb18030_and_utf16_manifests_decode() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = r#"{"name":"p","description":"中文描述"}"#;
    let (gb, _, _) = encoding_rs::GB18030.encode(text);
    fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    fs::write(root.join(CLAUDE_MANIFEST), &gb).unwrap();
    write(root, "skills/a/SKILL.md", "");
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            r#"{"mcpServers":{"s":{"command":"x"}}}"#
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    fs::write(root.join(MCP_FILE), utf16).unwrap();
    let p = claude(root);
    assert_eq!(p.description.as_deref(), Some("中文描述"));
    assert_eq!(p.inventory.mcp_servers.len(), 1);
}

#[test]
fn unusable_manifests_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (body, needle) in [
        ("{not json", "key must be a string"),
        ("[]", "manifest must be a JSON object"),
        (r#"{"name":"bad name"}"#, "invalid plugin name \"bad name\""),
        (r#"{"name":"p","skills":"../x"}"#, "must be relative"),
        (r#"{"name":"p","skills":7}"#, "skills must be a path string"),
        (r#"{"name":7}"#, "name must be a string"),
    ] {
        write(root, CLAUDE_MANIFEST, body);
        let err = load(root, ManifestKind::Claude, CLAUDE_MANIFEST)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{body}: {err}");
        assert!(err.contains("plugin.json"), "{err}");
    }
    let missing = tempfile::tempdir().unwrap();
    assert!(load(missing.path(), ManifestKind::Claude, CLAUDE_MANIFEST).is_err());
}

#[test]
fn broken_sidecar_files_become_issues() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, CLAUDE_MANIFEST, r#"{"name":"p"}"#);
    write(root, "skills/a/SKILL.md", "");
    write(root, CLAUDE_HOOKS, "{oops");
    write(root, MCP_FILE, "[1]");
    write(
        root,
        CLAUDE_SETTINGS,
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"command":1}]}]}}"#,
    );
    let p = claude(root);
    assert_eq!(p.compatibility.status, S::Partial);
    let got: Vec<_> = p
        .compatibility
        .skipped
        .iter()
        .map(|s| (s.capability.as_str(), s.path.as_deref().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("hooks", CLAUDE_SETTINGS),
            ("hooks", CLAUDE_HOOKS),
            ("mcp", MCP_FILE)
        ]
    );
    assert!(
        p.compatibility.skipped[0]
            .reason
            .contains("command must be a string")
    );
}

#[test]
fn codex_conventional_files_follow_in_tree_links_only() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "AGENTS.md", "outside");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        CODEX_MANIFEST,
        r#"{"name":"linked","skills":"./skills/"}"#,
    );
    write(root, "skills/a/SKILL.md", "---\ndescription: a\n---\n");
    write(root, "AGENTS.md", "instructions");
    write(root, "scripts/start.sh", "#!/bin/sh\n");
    fs::create_dir_all(root.join("hooks")).unwrap();
    symlink("AGENTS.md", root.join("CLAUDE.md")).unwrap();
    symlink(
        "../scripts/start.sh",
        root.join("hooks/session-start-codex"),
    )
    .unwrap();
    let p = codex(root);
    let sources: Vec<&str> = p
        .inventory
        .hooks
        .iter()
        .map(|h| h.source.as_str())
        .collect();
    assert_eq!(sources, ["hooks/session-start-codex", "CLAUDE.md"]);

    // A link leaving the package, a dangling link and a link to a directory
    // are not the file they name: the copier would not materialise them.
    for target in [
        outside.path().join("AGENTS.md"),
        root.join("missing.md"),
        root.join("skills"),
    ] {
        fs::remove_file(root.join("CLAUDE.md")).unwrap();
        symlink(&target, root.join("CLAUDE.md")).unwrap();
        let p = codex(root);
        assert!(
            p.inventory.hooks.iter().all(|h| h.source != "CLAUDE.md"),
            "{target:?}"
        );
    }
}
