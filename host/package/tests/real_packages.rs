//! Every real package under `../shared/fixtures/real-packages` loaded through
//! `load_package`: the compatibility verdict, mapped counts, skipped entries
//! (capability, path, reason) and warnings are pinned per package, plus the
//! details PLUGIN_PACKAGES.md §d calls out.

use std::path::{Path, PathBuf};

use reasonix_package::marketplace::{self, EntrySource, MarketplaceError};
use reasonix_package::{
    CompatibilityStatus, LoadedPackage, ManifestKind, PackageError, load_package,
};

fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/real-packages");
    assert!(
        dir.is_dir(),
        "real-package fixtures not found at {}",
        dir.display()
    );
    dir
}

fn load(rel: &str) -> LoadedPackage {
    load_package(&fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

struct Expect {
    dir: &'static str,
    name: &'static str,
    kind: ManifestKind,
    status: CompatibilityStatus,
    /// skills, commands, agents, hooks, mcp servers
    counts: [usize; 5],
    mapped: &'static [&'static str],
    skipped: &'static [(&'static str, &'static str, &'static str)],
    warnings: &'static [&'static str],
}

const EXPECTED: &[Expect] = &[
    Expect {
        dir: "obra__superpowers",
        name: "superpowers",
        kind: ManifestKind::Codex,
        status: CompatibilityStatus::Full,
        counts: [14, 0, 0, 2, 0],
        mapped: &["skills", "hooks"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/agent-sdk-dev",
        name: "agent-sdk-dev",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 1, 2, 0, 0],
        mapped: &["commands", "agents"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/claude-opus-4-5-migration",
        name: "claude-opus-4-5-migration",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [1, 0, 0, 0, 0],
        mapped: &["skills"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/code-review",
        name: "code-review",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 1, 0, 0, 0],
        mapped: &["commands"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/commit-commands",
        name: "commit-commands",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 3, 0, 0, 0],
        mapped: &["commands"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/explanatory-output-style",
        name: "explanatory-output-style",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 0, 0, 1, 0],
        mapped: &["hooks"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/feature-dev",
        name: "feature-dev",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Partial,
        counts: [0, 1, 3, 0, 0],
        mapped: &["commands", "agents"],
        skipped: &[
            (
                "agents",
                "agents/code-architect.md",
                "agent \"code-architect\" lists tools with no Reasonix equivalent (LS, WebSearch); it runs without them",
            ),
            (
                "agents",
                "agents/code-explorer.md",
                "agent \"code-explorer\" lists tools with no Reasonix equivalent (LS, WebSearch); it runs without them",
            ),
            (
                "agents",
                "agents/code-reviewer.md",
                "agent \"code-reviewer\" lists tools with no Reasonix equivalent (LS, WebSearch); it runs without them",
            ),
        ],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/frontend-design",
        name: "frontend-design",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [1, 0, 0, 0, 0],
        mapped: &["skills"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/hookify",
        name: "hookify",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Partial,
        counts: [1, 4, 1, 4, 0],
        mapped: &["skills", "commands", "agents", "hooks"],
        skipped: &[
            (
                "hooks",
                "hooks/hooks.json",
                "Stop hook \"python3 ${CLAUDE_PLUGIN_ROOT}/hooks/stop.py\" cannot block the turn the way Claude's contract does — Reasonix's Stop hook is observation-only and never forces the loop to continue",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "a tool-scoped hook matcher includes Claude WebFetch, but Reasonix web_fetch cannot supply Claude's required \"prompt\" input; such hooks receive only \"url\" for that tool",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "a tool-scoped hook matcher includes Claude NotebookEdit, but Reasonix notebook_edit may target a cell by cell_number, which cannot be converted to Claude's opaque cell_id; such hooks receive cell_number as an extra field for those calls",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "a tool-scoped hook matcher includes Claude TaskOutput, but Reasonix wait may cover multiple or all background jobs in one call, which cannot be represented by Claude's single task_id; such hooks receive job_ids as an extra field for those calls",
            ),
        ],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/learning-output-style",
        name: "learning-output-style",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 0, 0, 1, 0],
        mapped: &["hooks"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/pr-review-toolkit",
        name: "pr-review-toolkit",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 1, 6, 0, 0],
        mapped: &["commands", "agents"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/ralph-wiggum",
        name: "ralph-wiggum",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Partial,
        counts: [0, 3, 0, 1, 0],
        mapped: &["commands", "hooks"],
        skipped: &[(
            "hooks",
            "hooks/hooks.json",
            "Stop hook \"${CLAUDE_PLUGIN_ROOT}/hooks/stop-hook.sh\" cannot block the turn the way Claude's contract does — Reasonix's Stop hook is observation-only and never forces the loop to continue",
        )],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-code/plugins/security-guidance",
        name: "security-guidance",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Partial,
        counts: [0, 0, 0, 5, 0],
        mapped: &["hooks"],
        skipped: &[
            (
                "hooks",
                "hooks/hooks.json",
                "PostToolUse hook \"bash \\\"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\\\" \\\"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\\\"\" has a conditional \"if\": \"Bash(git commit:*)\" that Reasonix does not evaluate — it runs unconditionally instead of only for the matching case",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "PostToolUse hook \"bash \\\"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\\\" \\\"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\\\"\" uses \"asyncRewake\", which Reasonix does not support — it runs synchronously instead",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "PostToolUse hook \"bash \\\"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\\\" \\\"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\\\"\" has a conditional \"if\": \"Bash(git push:*)\" that Reasonix does not evaluate — it runs unconditionally instead of only for the matching case",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "PostToolUse hook \"bash \\\"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\\\" \\\"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\\\"\" uses \"asyncRewake\", which Reasonix does not support — it runs synchronously instead",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "Stop hook \"bash \\\"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\\\" \\\"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\\\"\" uses \"asyncRewake\", which Reasonix does not support — it runs synchronously instead",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "Stop hook \"bash \\\"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\\\" \\\"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\\\"\" cannot block the turn the way Claude's contract does — Reasonix's Stop hook is observation-only and never forces the loop to continue",
            ),
            (
                "hooks",
                "hooks/hooks.json",
                "a tool-scoped hook matcher includes Claude NotebookEdit, but Reasonix notebook_edit may target a cell by cell_number, which cannot be converted to Claude's opaque cell_id; such hooks receive cell_number as an extra field for those calls",
            ),
        ],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-plugins-official/external_plugins/context7",
        name: "context7",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 0, 0, 0, 1],
        mapped: &["mcp"],
        skipped: &[],
        warnings: &[],
    },
    Expect {
        dir: "anthropics__claude-plugins-official/external_plugins/github",
        name: "github",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [0, 0, 0, 0, 1],
        mapped: &["mcp"],
        skipped: &[],
        warnings: &[
            ".mcp.json: servers declared at the top level without an \"mcpServers\" wrapper; imported as written",
        ],
    },
    Expect {
        dir: "anthropics__claude-plugins-official/plugins/example-plugin",
        name: "example-plugin",
        kind: ManifestKind::Claude,
        status: CompatibilityStatus::Full,
        counts: [2, 1, 0, 0, 1],
        mapped: &["skills", "commands", "mcp"],
        skipped: &[],
        warnings: &[
            ".mcp.json: servers declared at the top level without an \"mcpServers\" wrapper; imported as written",
        ],
    },
];

#[test]
fn every_real_package_has_a_pinned_verdict() {
    for e in EXPECTED {
        let p = load(e.dir);
        let i = &p.inventory;
        assert_eq!(p.name, e.name, "{}", e.dir);
        assert_eq!(p.kind, e.kind, "{}", e.dir);
        assert_eq!(p.compatibility.status, e.status, "{}", e.dir);
        assert_eq!(
            [
                i.skills.len(),
                i.commands.len(),
                i.agents.len(),
                i.hooks.len(),
                i.mcp_servers.len()
            ],
            e.counts,
            "{}",
            e.dir
        );
        assert_eq!(p.compatibility.mapped, e.mapped, "{}", e.dir);
        let skipped: Vec<(&str, &str, &str)> = p
            .compatibility
            .skipped
            .iter()
            .map(|s| {
                (
                    s.capability.as_str(),
                    s.path.as_deref().unwrap_or(""),
                    s.reason.as_str(),
                )
            })
            .collect();
        assert_eq!(skipped, e.skipped, "{}", e.dir);
        assert_eq!(p.warnings, e.warnings, "{}", e.dir);
    }
}

#[test]
fn the_table_covers_every_fixture_package() {
    let root = fixtures();
    let mut dirs = vec!["obra__superpowers".to_owned()];
    for group in [
        "anthropics__claude-code/plugins",
        "anthropics__claude-plugins-official/external_plugins",
        "anthropics__claude-plugins-official/plugins",
    ] {
        let mut found: Vec<String> = std::fs::read_dir(root.join(group))
            .unwrap()
            .map(|e| format!("{group}/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        found.sort();
        dirs.extend(found);
    }
    let pinned: Vec<&str> = EXPECTED.iter().map(|e| e.dir).collect();
    for dir in &dirs {
        if dir.ends_with("/plugin-dev") {
            continue; // no manifest: see plugin_dev_has_no_manifest
        }
        assert!(
            pinned.contains(&dir.as_str()),
            "{dir} has no pinned verdict"
        );
    }
    assert_eq!(pinned.len(), dirs.len() - 1);
}

#[test]
fn plugin_dev_has_no_manifest() {
    let err =
        load_package(&fixtures().join("anthropics__claude-code/plugins/plugin-dev")).unwrap_err();
    assert!(matches!(err, PackageError::NoManifest(_)), "{err}");
}

#[test]
fn superpowers_is_codex_with_skills_and_session_hooks() {
    let p = load("obra__superpowers");
    assert_eq!(p.manifest_path, ".codex-plugin/plugin.json");
    assert_eq!(p.version.as_deref(), Some("6.2.0"));
    assert_eq!(
        p.repository.as_deref(),
        Some("https://github.com/obra/superpowers")
    );
    assert_eq!(p.inventory.skill_roots, ["skills"]);
    let names: Vec<&str> = p.inventory.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "brainstorming",
            "dispatching-parallel-agents",
            "executing-plans",
            "finishing-a-development-branch",
            "receiving-code-review",
            "requesting-code-review",
            "subagent-driven-development",
            "systematic-debugging",
            "test-driven-development",
            "using-git-worktrees",
            "using-superpowers",
            "verification-before-completion",
            "writing-plans",
            "writing-skills",
        ]
    );
    assert!(p.inventory.skills.iter().all(|s| s.description.is_some()));
    let hooks = &p.inventory.hooks;
    assert_eq!(hooks[0].context_file.as_deref(), Some("CLAUDE.md"));
    let h = &hooks[1];
    assert_eq!(h.event, "SessionStart");
    assert_eq!(h.matcher.as_deref(), Some("startup|clear|compact"));
    assert_eq!(
        h.command.as_deref(),
        Some("\"${CLAUDE_PLUGIN_ROOT}/hooks/run-hook.cmd\" session-start")
    );
    assert_eq!(h.shell.as_deref(), Some("bash"));
    assert_eq!(h.args, None);
    assert!(!h.is_async);
    assert_eq!(h.payload_format.as_deref(), Some("claude"));
}

#[test]
fn claude_code_details() {
    let sg = load("anthropics__claude-code/plugins/security-guidance");
    let start = sg
        .inventory
        .hooks
        .iter()
        .find(|h| h.event == "SessionStart")
        .unwrap();
    assert_eq!(start.timeout_ms, Some(180_000));
    let post: Vec<_> = sg
        .inventory
        .hooks
        .iter()
        .filter(|h| h.event == "PostToolUse")
        .collect();
    assert_eq!(
        post.len(),
        2,
        "the two `if` variants collapse into one hook"
    );
    assert_eq!(post[1].matcher.as_deref(), Some("Bash"));

    let hookify = load("anthropics__claude-code/plugins/hookify");
    assert_eq!(hookify.inventory.skills[0].name, "writing-rules");
    assert!(
        hookify
            .inventory
            .hooks
            .iter()
            .all(|h| h.timeout_ms == Some(10_000))
    );
    assert_eq!(hookify.inventory.agents[0].tools, ["read_file", "grep"]);
    assert_eq!(hookify.inventory.agents[0].model, None);

    let fd = load("anthropics__claude-code/plugins/feature-dev");
    assert_eq!(
        fd.inventory.agents[0].tools,
        [
            "glob",
            "grep",
            "read_file",
            "web_fetch",
            "todo_write",
            "kill_shell",
            "bash_output"
        ]
    );
    let cmd = &fd.inventory.commands[0];
    assert_eq!(cmd.name, "feature-dev");
    assert_eq!(
        cmd.argument_hint.as_deref(),
        Some("Optional feature description")
    );

    let commits = load("anthropics__claude-code/plugins/commit-commands");
    let names: Vec<_> = commits
        .inventory
        .commands
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["clean_gone", "commit", "commit-push-pr"]);
}

#[test]
fn claude_plugins_official_mcp_details() {
    let c7 = load("anthropics__claude-plugins-official/external_plugins/context7");
    let s = &c7.inventory.mcp_servers[0];
    assert_eq!(s.name, "context7");
    assert_eq!(s.transport, "http");
    assert_eq!(s.url.as_deref(), Some("https://mcp.context7.com/mcp"));
    assert_eq!(s.headers["Authorization"], "${CONTEXT7_API_KEY:-}");
    assert!(!s.auto_start && s.imported);

    // Flat-form .mcp.json: upstream maps nothing (→ none); mapped here.
    let gh = load("anthropics__claude-plugins-official/external_plugins/github");
    let s = &gh.inventory.mcp_servers[0];
    assert_eq!(s.name, "github");
    assert_eq!(s.url.as_deref(), Some("https://api.githubcopilot.com/mcp/"));
    assert_eq!(
        s.headers["Authorization"],
        "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}"
    );

    let ex = load("anthropics__claude-plugins-official/plugins/example-plugin");
    let cmd = &ex.inventory.commands[0];
    assert_eq!(cmd.name, "example-command");
    assert!(cmd.argument_hint.is_some());
    assert_eq!(ex.inventory.mcp_servers[0].name, "example-server");
}

#[test]
fn claude_code_marketplace_entries_load_by_name() {
    let root = fixtures().join("anthropics__claude-code");
    assert!(
        load_package(&root).is_err(),
        "the repo root has no plugin manifest"
    );
    let m = marketplace::read(&root).unwrap().unwrap();
    assert_eq!(m.name, "claude-code-plugins");
    assert_eq!(m.entries.len(), 13);
    let bulk = m.select(None).unwrap();
    assert_eq!(bulk.entries.len(), 13);
    assert!(bulk.skipped.is_empty());
    for entry in &m.entries {
        let EntrySource::Relative(rel) = &entry.source else {
            panic!("{}: {:?}", entry.name, entry.source)
        };
        let chosen = m.select(Some(&entry.name)).unwrap();
        assert_eq!(chosen.entries.len(), 1);
        match load_package(&root.join(rel)) {
            Ok(p) => assert_eq!(p.name, entry.name),
            Err(e) => {
                assert_eq!(entry.name, "plugin-dev", "{e}");
            }
        }
    }
}

#[test]
fn official_marketplace_is_too_large_in_bulk_but_selectable_by_name() {
    let root = fixtures().join("anthropics__claude-plugins-official");
    let m = marketplace::read(&root).unwrap().unwrap();
    assert_eq!(m.entries.len(), 286);
    let count = |f: fn(&EntrySource) -> bool| m.entries.iter().filter(|e| f(&e.source)).count();
    // 53 relative string sources and 83 git-subdir ones, of which 12 and 3
    // are `"strict": false` entries (defined inside the marketplace).
    assert_eq!(count(|s| matches!(s, EntrySource::Relative(_))), 41);
    assert_eq!(count(|s| matches!(s, EntrySource::Url { .. })), 150);
    assert_eq!(count(|s| matches!(s, EntrySource::GitSubdir { .. })), 80);
    assert_eq!(
        count(|s| matches!(s, EntrySource::Unsupported(r) if r.contains("strict"))),
        15
    );
    assert!(matches!(
        m.select(None),
        Err(MarketplaceError::TooManyEntries {
            count: 286,
            max: 64,
            ..
        })
    ));
    for name in ["github", "context7"] {
        let sel = m.select(Some(name)).unwrap();
        let EntrySource::Relative(rel) = &sel.entries[0].source else {
            panic!()
        };
        assert_eq!(load_package(&root.join(rel)).unwrap().name, name);
    }
    let sub = m.select(Some("42crunch-api-security-testing")).unwrap();
    assert_eq!(
        sub.entries[0].source.tree_url().unwrap(),
        "https://github.com/42Crunch-AI/claude-plugins/tree/30287f5e3f122a646d1ac5ca3ab96e130c52a3ad/plugins/api-security-testing"
    );
}

#[test]
fn superpowers_marketplace_points_at_its_own_root() {
    let m = marketplace::read(&fixtures().join("obra__superpowers"))
        .unwrap()
        .unwrap();
    assert_eq!(m.entries.len(), 1);
    // `"./"` names the marketplace root itself: upstream refuses such an
    // entry (the root's own manifest is what installs this repository).
    assert!(
        matches!(&m.entries[0].source, EntrySource::Invalid(r) if r.contains("does not identify a plugin subdirectory")),
        "{:?}",
        m.entries[0].source
    );
    assert!(m.select(None).is_err());
}
