//! Workspace-wide capability diagnostics (PLUGIN_PACKAGES §a.11): what the
//! installed packages contribute to a session of one workspace — skills,
//! commands and prompts, hooks, MCP servers — plus the workspace's
//! instruction documents, every finding as an [`Issue`] with a stable code.
//!
//! [`collect`] only reads: it never writes the registry (no crash recovery,
//! no `disabled_incompatible` marks), never starts a process. The report is
//! deterministic (packages by name, issues by severity, code, name, source)
//! and safe to paste: paths go through [`display::PathDisplay`], free text is
//! redacted and cut at 400 characters. `reasonix doctor capabilities` prints
//! it; a session or `reasonix serve` can build the same report.

pub mod display;
pub mod instructions;
pub mod live;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reasonix_package::{Hook, LoadedPackage, load_package};
use serde::Serialize;

use crate::home::ReasonixHome;
use crate::install::plan::{Counts, RuntimePlanInfo, manifest_kind_str, runtime_info};
use crate::registry::{PluginRegistry, RegistryEntry};
use display::PathDisplay;

/// The JSON report version. Bumped only on a breaking shape change.
pub const SCHEMA_VERSION: u32 = 1;

/// What to diagnose.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workspace root.
    pub root: PathBuf,
    pub home: ReasonixHome,
    /// The user's home directory (for `~/…` display).
    pub user_home: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub root: String,
    pub live: bool,
    pub summary: Summary,
    pub instructions: InstructionsReport,
    pub skills: AssetReport,
    pub commands: AssetReport,
    pub hooks: HookReport,
    pub plugins: PluginPackageReport,
    pub mcp: McpReport,
    pub issues: Vec<Issue>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub instructions: usize,
    pub skills: usize,
    pub commands: usize,
    pub hooks: usize,
    pub plugins: usize,
    pub mcp_servers: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// One finding. `code` is stable (`plugin.missing_root`, `mcp.missing_url`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub severity: Severity,
    pub code: &'static str,
    pub subsystem: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub remediation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_tab: Option<&'static str>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct InstructionsReport {
    pub docs: Vec<InstructionDoc>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InstructionDoc {
    pub path: String,
    pub scope: &'static str,
    pub directory: String,
    pub depth: usize,
    pub order: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AssetReport {
    pub roots: Vec<RootInfo>,
    pub entries: Vec<AssetEntry>,
    pub winners: usize,
    pub shadowed: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub disabled: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub parse_errors: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize)]
pub struct RootInfo {
    pub path: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scope: String,
    /// `ok`, `missing` or `disabled`.
    pub status: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct AssetEntry {
    /// `<plugin>:<name>`: how the session invokes it.
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scope: String,
    pub path: String,
    /// `winner`, `shadowed` or `disabled`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub winner_path: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub run_as: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct HookReport {
    /// Workspace hooks need no trust step in this host: always `true`.
    pub trusted_project: bool,
    /// Whether the workspace itself declares hooks (it cannot: only packages do).
    pub project_defines_hooks: bool,
    pub sources: Vec<HookSource>,
    pub entries: Vec<HookEntry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HookSource {
    pub scope: String,
    pub path: String,
    /// `ok`, `malformed` or `disabled`.
    pub status: &'static str,
    pub hook_count: usize,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub parse_error: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HookEntry {
    pub event: String,
    #[serde(rename = "match", skip_serializing_if = "String::is_empty")]
    pub matcher: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub context_file: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    pub scope: String,
    pub source: String,
    /// Whether the hook can stop what it observes (exit 2 / a deny).
    pub blocking: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PluginPackageReport {
    pub state_path: String,
    pub packages: Vec<PluginPackageInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PluginPackageInfo {
    pub name: String,
    pub enabled: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
    pub root: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub manifest_kind: String,
    pub skills: usize,
    pub commands: usize,
    pub hooks: usize,
    pub mcp_servers: usize,
    pub prompts: usize,
    pub themes: usize,
    /// Declares a code-extension runtime (FULL TRUST native or SANDBOXED wasm).
    pub runtime: bool,
    /// `FULL TRUST` or `SANDBOXED` when `runtime` (for the human form).
    #[serde(skip)]
    pub trust: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// `ok`, `missing_root`, `invalid_manifest` or `disabled`.
    pub status: &'static str,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct McpReport {
    pub servers: Vec<McpServerInfo>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct McpServerInfo {
    pub name: String,
    /// Always `plugin_package` in this host (MCP servers come from packages).
    pub source: String,
    pub source_path: String,
    /// `false` when an earlier package already owns the name.
    pub effective: bool,
    pub package_owner: String,
    pub transport: String,
    /// `automatic` or `off`.
    pub start_intent: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub url_host: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env_keys: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub header_keys: Vec<String>,
    /// Set by a live probe: `connected`, `failed`, `disabled`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub runtime_status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<McpToolInfo>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct McpToolInfo {
    pub name: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only_hint: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub destructive_hint: bool,
}

/// Hook events whose hooks can refuse what they observe.
const BLOCKING_EVENTS: [&str; 3] = ["PreToolUse", "UserPromptSubmit", "PermissionRequest"];

/// Claude/Codex hook files a package's hooks may be read from.
const COMPAT_HOOK_FILES: [&str; 3] = [".claude/settings.json", "hooks/hooks.json", "hooks.json"];

struct Builder<'a> {
    disp: PathDisplay,
    issues: Vec<Issue>,
    opts: &'a Options,
    /// The Node that would run mods (probed once, when a mod is installed).
    node: Option<Result<crate::mods::Node, crate::mods::NodeProblem>>,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        severity: Severity,
        code: &'static str,
        subsystem: &'static str,
        name: &str,
        source: String,
        message: String,
        remediation: &str,
        settings_tab: Option<&'static str>,
    ) {
        self.issues.push(Issue {
            severity,
            code,
            subsystem,
            name: name.to_owned(),
            source,
            message: self.disp.text(&message),
            remediation: remediation.to_owned(),
            settings_tab,
        });
    }
}

/// One registered package as the report reads it (never repaired).
struct Registered {
    entry: RegistryEntry,
    root: PathBuf,
    package: Option<LoadedPackage>,
}

/// Build the static report for `opts`.
pub fn collect(opts: &Options) -> Report {
    let root = std::path::absolute(&opts.root).unwrap_or_else(|_| opts.root.clone());
    let mut b = Builder {
        disp: PathDisplay::new(&root, opts.user_home.as_deref()),
        issues: Vec::new(),
        opts,
        node: None,
    };
    let instructions = collect_instructions(&b, &root);
    let registered = read_registry(&mut b);
    let plugins = collect_plugins(&mut b, &registered);
    let skills = collect_skills(&mut b, &registered);
    let commands = collect_commands(&mut b, &registered);
    let hooks = collect_hooks(&mut b, &registered);
    let mcp = collect_mcp(&mut b, &registered);
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        root: b.disp.path(&root),
        live: false,
        summary: Summary::default(),
        instructions,
        skills,
        commands,
        hooks,
        plugins,
        mcp,
        issues: b.issues,
    };
    finish(&mut report);
    report
}

/// Sort the issues and recount the summary (call after adding issues).
pub fn finish(report: &mut Report) {
    report.issues.sort_by(|a, b| {
        (a.severity, a.code, &a.name, &a.source, &a.message)
            .cmp(&(b.severity, b.code, &b.name, &b.source, &b.message))
    });
    report.issues.dedup();
    let count = |s: Severity| report.issues.iter().filter(|i| i.severity == s).count();
    report.summary = Summary {
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        infos: count(Severity::Info),
        instructions: report.instructions.docs.len(),
        skills: report.skills.winners,
        commands: report.commands.winners,
        hooks: report.hooks.entries.len(),
        plugins: report.plugins.packages.len(),
        mcp_servers: report.mcp.servers.len(),
    };
}

fn collect_instructions(b: &Builder<'_>, root: &Path) -> InstructionsReport {
    let docs = instructions::discover(root, b.opts.home.root())
        .into_iter()
        .enumerate()
        .map(|(i, d)| InstructionDoc {
            path: b.disp.path(&d.path),
            scope: d.scope,
            directory: b.disp.path(d.path.parent().unwrap_or(Path::new("/"))),
            depth: d.depth,
            order: i + 1,
        })
        .collect();
    InstructionsReport { docs }
}

fn read_registry(b: &mut Builder<'_>) -> Vec<Registered> {
    let state = b.opts.home.registry_path();
    let registry = match PluginRegistry::load(&b.opts.home) {
        Ok(r) => r,
        Err(e) => {
            let source = b.disp.path(&state);
            b.issue(
                Severity::Error,
                "plugin.state_read_failed",
                "plugins",
                "",
                source,
                format!("cannot read the plugin registry: {}", e.message),
                "Fix or move the registry file (it is never rewritten while unreadable), then re-run.",
                Some("plugins"),
            );
            return Vec::new();
        }
    };
    let mut out: Vec<Registered> = registry
        .plugins
        .into_iter()
        .map(|entry| {
            let root = b.opts.home.resolve_root(&entry.root);
            Registered {
                package: None,
                root,
                entry,
            }
        })
        .collect();
    out.sort_by(|a, b| a.entry.name.cmp(&b.entry.name));
    for r in &mut out {
        if r.root.is_dir() {
            r.package = load_package(&r.root).ok();
        }
    }
    out
}

/// The enabled packages that read cleanly: what a session loads.
fn active(registered: &[Registered]) -> impl Iterator<Item = (&Registered, &LoadedPackage)> {
    registered
        .iter()
        .filter(|r| r.entry.enabled)
        .filter_map(|r| r.package.as_ref().map(|p| (r, p)))
}

fn collect_plugins(b: &mut Builder<'_>, registered: &[Registered]) -> PluginPackageReport {
    let mut report = PluginPackageReport {
        state_path: b.disp.path(&b.opts.home.registry_path()),
        packages: Vec::new(),
    };
    for r in registered {
        let e = &r.entry;
        let source = b.disp.path(&r.root);
        let mut info = PluginPackageInfo {
            name: e.name.clone(),
            enabled: e.enabled,
            version: e.version.clone().unwrap_or_default(),
            root: source.clone(),
            manifest_kind: e.manifest_kind.clone().unwrap_or_default(),
            skills: 0,
            commands: 0,
            hooks: 0,
            mcp_servers: 0,
            prompts: 0,
            themes: 0,
            runtime: false,
            trust: None,
            warnings: Vec::new(),
            status: "ok",
        };
        if !r.root.is_dir() {
            info.status = "missing_root";
            b.issue(
                Severity::Error,
                "plugin.missing_root",
                "plugins",
                &e.name,
                source,
                "plugin package root directory is missing".into(),
                "Reinstall it with `reasonix plugin install <source> --replace --yes`, or remove it with `reasonix plugin remove <name> --yes`.",
                Some("plugins"),
            );
            report.packages.push(info);
            continue;
        }
        let Some(pkg) = &r.package else {
            let why = load_package(&r.root)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            info.status = "invalid_manifest";
            b.issue(
                Severity::Error,
                "plugin.invalid_manifest",
                "plugins",
                &e.name,
                source,
                format!("plugin package manifest is invalid: {why}"),
                "Fix the manifest (`reasonix plugin validate <dir>` lists every error), or reinstall it with --replace.",
                Some("plugins"),
            );
            report.packages.push(info);
            continue;
        };
        let c = Counts::of(pkg);
        info.skills = c.skills;
        info.commands = c.commands;
        info.prompts = c.prompts;
        info.hooks = c.hooks;
        info.mcp_servers = c.mcp;
        info.themes = c.themes;
        if info.manifest_kind.is_empty() {
            info.manifest_kind = manifest_kind_str(pkg.kind).into();
        }
        let mut warnings: Vec<String> = pkg.warnings.clone();
        warnings.extend(pkg.compatibility.skipped.iter().map(|s| match &s.path {
            Some(path) => format!("{} {path}: {}", s.capability, s.reason),
            None => format!("{}: {}", s.capability, s.reason),
        }));
        for theme in &pkg.inventory.themes {
            let check = reasonix_package::themes::check(&pkg.root, theme);
            if let Some(why) = check.rejected {
                warnings.push(format!("theme {}: rejected: {why}", theme.path));
            }
        }
        for w in warnings {
            let text = b.disp.text(&w);
            b.issue(
                Severity::Warning,
                "plugin.compatibility",
                "plugins",
                &e.name,
                source.clone(),
                text.clone(),
                "Review what the package declares that Reasonix cannot use; `reasonix plugin show <name>` lists it.",
                Some("plugins"),
            );
            info.warnings.push(text);
        }
        if let Some(rt) = runtime_info(pkg) {
            info.runtime = true;
            info.trust = Some(if rt.sandbox.is_some() {
                "SANDBOXED"
            } else {
                "FULL TRUST"
            });
            runtime_issues(b, &e.name, &source, &pkg.root, &rt, e.is_link());
        }
        if pkg.inventory.module.is_some() {
            info.runtime = true;
            info.trust = Some("FULL TRUST");
            mod_issues(b, &e.name, &source, pkg, e.enabled);
        }
        if !e.enabled {
            info.status = "disabled";
        }
        report.packages.push(info);
    }
    report
}

/// How a runtime's command resolves, checked without running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeCommand {
    /// A file inside or outside the package that exists.
    Found(PathBuf),
    /// A path-form command whose file is missing (or is a directory).
    Missing(PathBuf),
    /// A bare name found on `PATH`.
    OnPath(PathBuf),
    /// A bare name not on `PATH` (the session's PATH may still have it).
    NotOnPath(String),
}

/// Resolve a runtime command against its package `root` (§a.11 step 5).
pub fn runtime_command(root: &Path, rt: &RuntimePlanInfo) -> RuntimeCommand {
    let expanded = rt
        .command
        .replace("${REASONIX_PLUGIN_ROOT}", &root.to_string_lossy());
    if expanded.contains('/') {
        let p = Path::new(&expanded);
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        };
        if p.is_file() {
            RuntimeCommand::Found(p)
        } else {
            RuntimeCommand::Missing(p)
        }
    } else {
        match crate::hooks::launch::find_on_path(&expanded) {
            Some(p) => RuntimeCommand::OnPath(p),
            None => RuntimeCommand::NotOnPath(expanded),
        }
    }
}

fn runtime_issues(
    b: &mut Builder<'_>,
    name: &str,
    source: &str,
    root: &Path,
    rt: &RuntimePlanInfo,
    linked: bool,
) {
    let (trust, what) = match &rt.sandbox {
        None => (
            "FULL TRUST",
            "runs a native code extension outside the sandbox with your full environment: it can read the whole session, bypass permissions and operate this machine",
        ),
        Some(_) => (
            "SANDBOXED",
            "runs a wasm component in Reasonix's sandbox: it sees the payloads of the points it intercepts and may only tighten permission decisions",
        ),
    };
    let tools = if rt.tools.is_empty() {
        String::new()
    } else {
        format!("; tools: {}", rt.tools.join(", "))
    };
    b.issue(
        Severity::Info,
        "plugin.runtime",
        "plugins",
        name,
        source.to_owned(),
        format!(
            "{trust}: {what} (intercepts: {}{tools})",
            if rt.intercepts.is_empty() {
                "-".to_owned()
            } else {
                rt.intercepts.join(", ")
            }
        ),
        "Keep only runtimes you trust completely; disable the package to stop it.",
        Some("plugins"),
    );
    match runtime_command(root, rt) {
        RuntimeCommand::Missing(p) => {
            let shown = b.disp.path(&p);
            b.issue(
                Severity::Error,
                "plugin.runtime_command_missing",
                "plugins",
                name,
                source.to_owned(),
                format!("runtime command {shown} does not exist (expected a file)"),
                // A link runs from its source: building there is the whole fix.
                if linked {
                    "Build the runtime binary in the linked source directory (see its README); no reinstall is needed."
                } else {
                    "Build or restore the runtime binary in the package source, then `reasonix plugin install <source> --replace --yes`."
                },
                Some("plugins"),
            );
        }
        RuntimeCommand::NotOnPath(cmd) => b.issue(
            Severity::Warning,
            "plugin.runtime_command_not_found",
            "plugins",
            name,
            source.to_owned(),
            format!("runtime command {cmd:?} was not found on PATH"),
            "Install it or use a path inside the package (${REASONIX_PLUGIN_ROOT}/…).",
            Some("plugins"),
        ),
        RuntimeCommand::Found(_) | RuntimeCommand::OnPath(_) => {}
    }
}

/// A Claude Code mod: FULL TRUST (info), and its Node prerequisite — an
/// error while `[mods] enabled = true` and the package is enabled, a
/// warning otherwise.
fn mod_issues(b: &mut Builder<'_>, name: &str, source: &str, pkg: &LoadedPackage, enabled: bool) {
    let Some(preview) = crate::install::plan::mod_preview(pkg) else {
        return;
    };
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    b.issue(
        Severity::Info,
        "plugin.mod",
        "plugins",
        name,
        source.to_owned(),
        format!(
            "FULL TRUST: a Claude Code mod; its module {} runs as you under Node, outside the sandbox (events: {}; $ calls: {}{}{})",
            preview.module,
            list(&preview.events),
            list(&preview.calls),
            if preview.reads_session { "; reads the session" } else { "" },
            if preview.not_listed.is_empty() { String::new() } else { format!("; not listed: {}", preview.not_listed.join("; ")) }
        ),
        "Keep only mods you trust completely; they run only while [mods] enabled = true in config.toml.",
        Some("plugins"),
    );
    let root = b.opts.root.clone();
    let node = b
        .node
        .get_or_insert_with(|| crate::mods::node::find(Some(&root)))
        .clone();
    let mods_on = crate::config::Config::load(&b.opts.home, &root)
        .map(|c| c.mods.enabled)
        .unwrap_or(false);
    let severity = if enabled && mods_on {
        Severity::Error
    } else {
        Severity::Warning
    };
    let typescript = pkg
        .inventory
        .module
        .as_ref()
        .is_some_and(|m| m.language == reasonix_package::mods::ModLanguage::TypeScript);
    let (code, message) = match node {
        Err(problem @ crate::mods::NodeProblem::Missing { .. }) => {
            ("plugin.mod_node_missing", problem.to_string())
        }
        Err(problem @ crate::mods::NodeProblem::TooOld { .. }) => {
            ("plugin.mod_node_too_old", problem.to_string())
        }
        Err(problem) => ("plugin.mod_node_unusable", problem.to_string()),
        Ok(node)
            if typescript && node.type_stripping == crate::mods::TypeStripping::Unavailable =>
        {
            (
                "plugin.mod_typescript_unavailable",
                format!(
                    "{} is TypeScript, and the node on PATH ({}) does not strip types",
                    preview.module, node.version
                ),
            )
        }
        Ok(_) => return,
    };
    b.issue(
        severity,
        code,
        "plugins",
        name,
        source.to_owned(),
        message,
        "Install Node.js 22 or newer (22.18+ for TypeScript modules) and put it first on PATH; a node inside the workspace is never used.",
        Some("plugins"),
    );
}

fn collect_skills(b: &mut Builder<'_>, registered: &[Registered]) -> AssetReport {
    let mut report = AssetReport::default();
    for r in registered {
        let Some(pkg) = &r.package else { continue };
        let plugin = &r.entry.name;
        let scope = format!("plugin:{plugin}");
        for rel in &pkg.inventory.skill_roots {
            let path = pkg.root.join(rel);
            report.roots.push(RootInfo {
                path: b.disp.path(&path),
                scope: scope.clone(),
                status: root_status(&path, r.entry.enabled),
            });
        }
        for s in &pkg.inventory.skills {
            let name = format!("{plugin}:{}", s.name);
            let path = b.disp.path(&pkg.root.join(&s.path));
            let description = s.description.clone().unwrap_or_default();
            let status = if r.entry.enabled {
                report.winners += 1;
                if description.trim().is_empty() {
                    b.issue(
                        Severity::Warning,
                        "skill.missing_description",
                        "skills",
                        &name,
                        path.clone(),
                        "skill has no description frontmatter; the model cannot tell when to use it".into(),
                        "Add a one-line `description:` to the skill's frontmatter.",
                        Some("skills"),
                    );
                }
                "winner"
            } else {
                report.disabled += 1;
                b.issue(
                    Severity::Info,
                    "skill.disabled",
                    "skills",
                    &name,
                    path.clone(),
                    format!("skill belongs to the disabled plugin package {plugin:?}"),
                    "Enable the package (`reasonix plugin enable <name>`) to load it.",
                    Some("skills"),
                );
                "disabled"
            };
            report.entries.push(AssetEntry {
                name,
                description: b.disp.text(&description),
                scope: scope.clone(),
                path,
                status,
                winner_path: String::new(),
                error: String::new(),
                run_as: s.run_as.clone(),
            });
        }
    }
    report
}

fn root_status(path: &Path, enabled: bool) -> &'static str {
    if !path.is_dir() && !path.is_file() {
        "missing"
    } else if enabled {
        "ok"
    } else {
        "disabled"
    }
}

fn collect_commands(b: &mut Builder<'_>, registered: &[Registered]) -> AssetReport {
    let mut report = AssetReport::default();
    for r in registered {
        let Some(pkg) = &r.package else { continue };
        let plugin = &r.entry.name;
        let inv = &pkg.inventory;
        for (kind, roots, list) in [
            ("command", &inv.command_roots, &inv.commands),
            ("prompt", &inv.prompt_roots, &inv.prompts),
        ] {
            let scope = format!("plugin:{plugin}");
            for rel in roots {
                let path = pkg.root.join(rel);
                report.roots.push(RootInfo {
                    path: b.disp.path(&path),
                    scope: scope.clone(),
                    status: root_status(&path, r.entry.enabled),
                });
            }
            for c in list.iter() {
                let name = format!("{plugin}:{}", c.name);
                let path = b.disp.path(&pkg.root.join(&c.path));
                // A file listed as both a command and a prompt is one
                // template: the prompt entry is the shadowed duplicate.
                let shadowed_by = (kind == "prompt")
                    .then(|| inv.commands.iter().find(|x| x.name == c.name))
                    .flatten();
                let status = if !r.entry.enabled {
                    report.disabled += 1;
                    "disabled"
                } else if let Some(winner) = shadowed_by {
                    report.shadowed += 1;
                    let winner_path = b.disp.path(&pkg.root.join(&winner.path));
                    b.issue(
                        Severity::Info,
                        "command.shadowed",
                        "commands",
                        &name,
                        path.clone(),
                        format!("prompt /{name} is shadowed by the command at {winner_path}"),
                        "Rename one of them if both should be invocable.",
                        None,
                    );
                    "shadowed"
                } else {
                    report.winners += 1;
                    "winner"
                };
                let winner_path = shadowed_by
                    .filter(|_| r.entry.enabled)
                    .map(|w| b.disp.path(&pkg.root.join(&w.path)))
                    .unwrap_or_default();
                report.entries.push(AssetEntry {
                    name,
                    description: b.disp.text(c.description.as_deref().unwrap_or_default()),
                    scope: scope.clone(),
                    path,
                    status,
                    winner_path,
                    error: String::new(),
                    run_as: String::new(),
                });
            }
        }
    }
    report
}

fn collect_hooks(b: &mut Builder<'_>, registered: &[Registered]) -> HookReport {
    let mut report = HookReport {
        trusted_project: true,
        project_defines_hooks: false,
        ..Default::default()
    };
    for r in registered {
        let Some(pkg) = &r.package else { continue };
        let plugin = &r.entry.name;
        let scope = format!("plugin:{plugin}");
        // Where the hooks came from, one source per file.
        let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
        for h in &pkg.inventory.hooks {
            *per_file.entry(h.source.clone()).or_default() += 1;
        }
        if pkg.kind != reasonix_package::ManifestKind::Reasonix {
            for rel in COMPAT_HOOK_FILES {
                if pkg.root.join(rel).is_file() {
                    per_file.entry(rel.to_owned()).or_default();
                }
            }
        }
        for (rel, count) in per_file {
            let path = pkg.root.join(&rel);
            let parse_error = if rel.ends_with(".json") && rel != pkg.manifest_path {
                match reasonix_package::compat::json::read_file(&path) {
                    Err(e) => e,
                    Ok(_) => String::new(),
                }
            } else {
                String::new()
            };
            let shown = b.disp.path(&path);
            let status = if !parse_error.is_empty() {
                b.issue(
                    Severity::Error,
                    "hook.malformed_settings",
                    "hooks",
                    plugin,
                    shown.clone(),
                    format!("hooks settings JSON is malformed: {parse_error}"),
                    "Fix the JSON syntax of that file in the package source, then reinstall it.",
                    Some("hooks"),
                );
                "malformed"
            } else if r.entry.enabled {
                "ok"
            } else {
                "disabled"
            };
            report.sources.push(HookSource {
                scope: scope.clone(),
                path: shown,
                status,
                hook_count: count,
                parse_error: b.disp.text(&parse_error),
            });
        }
        if !r.entry.enabled {
            continue;
        }
        for h in &pkg.inventory.hooks {
            hook_entry(b, &mut report, r, pkg, h, &scope);
        }
        // Interpreters, executables and context files, checked as a launch
        // would resolve them (placeholders expanded).
        for issue in crate::hooks::check_hook_runtime(pkg) {
            let code = issue.code;
            let severity = if issue.prerequisite || code == "hook.missing_context_file" {
                Severity::Error
            } else {
                Severity::Warning
            };
            let source = b.disp.path(&pkg.root);
            b.issue(
                severity,
                code,
                "hooks",
                &issue.event,
                source,
                format!("{plugin}: {}", issue.message),
                issue
                    .remediation
                    .as_deref()
                    .unwrap_or("Fix the hook's command in the package source, then reinstall it."),
                Some("hooks"),
            );
        }
    }
    report
}

fn hook_entry(
    b: &mut Builder<'_>,
    report: &mut HookReport,
    r: &Registered,
    pkg: &LoadedPackage,
    h: &Hook,
    scope: &str,
) {
    let source = b.disp.path(&pkg.root.join(&h.source));
    let event = h.event.clone();
    let command = h.command.as_deref().unwrap_or_default();
    let context_file = h.context_file.as_deref().unwrap_or_default();
    if command.trim().is_empty() && context_file.trim().is_empty() {
        b.issue(
            Severity::Error,
            "hook.missing_command",
            "hooks",
            &event,
            source.clone(),
            format!(
                "{}: hook entry has neither command nor contextFile",
                r.entry.name
            ),
            "Set command or contextFile for the hook entry.",
            Some("hooks"),
        );
    }
    let matcher = h.matcher.as_deref().unwrap_or_default().trim();
    if !matcher.is_empty()
        && matcher != "*"
        && let Err(e) = regex::Regex::new(&format!("^(?:{matcher})$"))
    {
        b.issue(
            Severity::Error,
            "hook.invalid_matcher",
            "hooks",
            &event,
            source.clone(),
            format!(
                "{}: matcher {matcher:?} is not a valid regex: {e}",
                r.entry.name
            ),
            "Use an anchored regex (or empty / *); matchers match whole tool names.",
            Some("hooks"),
        );
    }
    if !reasonix_package::compat::hooks::CLAUDE_HOOK_EVENTS.contains(&event.as_str()) {
        b.issue(
            Severity::Warning,
            "hook.unknown_event",
            "hooks",
            &event,
            source.clone(),
            format!(
                "{}: hooks.{event}: unknown event; these hooks will not run",
                r.entry.name
            ),
            "Use one of the supported hook events.",
            Some("hooks"),
        );
    }
    let root = pkg.root.to_string_lossy();
    let shown_command = if command.is_empty() {
        String::new()
    } else {
        b.disp
            .command(&crate::hooks::expand::plugin_root(command, &root))
    };
    report.entries.push(HookEntry {
        event: event.clone(),
        matcher: b.disp.text(matcher),
        command: shown_command,
        context_file: if context_file.is_empty() {
            String::new()
        } else {
            b.disp.path(&pkg.root.join(context_file))
        },
        description: b.disp.text(h.description.as_deref().unwrap_or_default()),
        timeout_ms: h.timeout_ms,
        scope: scope.to_owned(),
        source,
        blocking: BLOCKING_EVENTS.contains(&event.as_str()),
    });
}

fn collect_mcp(b: &mut Builder<'_>, registered: &[Registered]) -> McpReport {
    let mut report = McpReport::default();
    let mut owners: BTreeMap<String, String> = BTreeMap::new();
    for (r, pkg) in active(registered) {
        let plugin = &r.entry.name;
        for s in &pkg.inventory.mcp_servers {
            let source_path = b.disp.path(&pkg.root);
            let effective = !owners.contains_key(&s.name);
            if let Some(owner) = owners.get(&s.name) {
                let owner = owner.clone();
                b.issue(
                    Severity::Info,
                    "mcp.shadowed",
                    "mcp",
                    &s.name,
                    source_path.clone(),
                    format!(
                        "MCP server {:?} of {plugin:?} is shadowed by the one of {owner:?}",
                        s.name
                    ),
                    "Disable one of the two packages, or rename the server in one of them.",
                    Some("mcp"),
                );
            } else {
                owners.insert(s.name.clone(), plugin.clone());
            }
            let root = pkg.root.to_string_lossy();
            let mut info = McpServerInfo {
                name: s.name.clone(),
                source: "plugin_package".into(),
                source_path: source_path.clone(),
                effective,
                package_owner: plugin.clone(),
                transport: s.transport.clone(),
                start_intent: if s.auto_start { "automatic" } else { "off" },
                env_keys: s.env.keys().cloned().collect(),
                header_keys: s.headers.keys().cloned().collect(),
                ..Default::default()
            };
            match s.transport.as_str() {
                "stdio" => {
                    let command = s
                        .command
                        .as_deref()
                        .map(|c| crate::hooks::expand::plugin_root(c, &root))
                        .unwrap_or_default();
                    if command.trim().is_empty() {
                        b.issue(
                            Severity::Error,
                            "mcp.missing_command",
                            "mcp",
                            &s.name,
                            source_path.clone(),
                            "stdio MCP server has an empty command".into(),
                            "Set command (and args) for the server in the package.",
                            Some("mcp"),
                        );
                    } else {
                        info.command = b.disp.command(&command);
                        if !command_exists(&command, &pkg.root) {
                            b.issue(
                                Severity::Warning,
                                "mcp.command_not_found",
                                "mcp",
                                &s.name,
                                source_path.clone(),
                                format!(
                                    "MCP command {} is not found via a static PATH lookup (the session's PATH may still resolve it)",
                                    info.command
                                ),
                                "Install the command, use an absolute path, or set PATH in the server's env.",
                                Some("mcp"),
                            );
                        }
                    }
                }
                "http" | "sse" => {
                    let url = s.url.as_deref().unwrap_or_default();
                    if url.trim().is_empty() {
                        b.issue(
                            Severity::Error,
                            "mcp.missing_url",
                            "mcp",
                            &s.name,
                            source_path.clone(),
                            "remote MCP server has an empty url".into(),
                            "Set a valid http(s) URL for the server in the package.",
                            Some("mcp"),
                        );
                    } else {
                        info.url_host = url_host(url);
                    }
                }
                other => b.issue(
                    Severity::Error,
                    "mcp.invalid_transport",
                    "mcp",
                    &s.name,
                    source_path.clone(),
                    format!("unsupported MCP transport {other}"),
                    "Use type stdio, http or sse.",
                    Some("mcp"),
                ),
            }
            report.servers.push(info);
        }
    }
    report
}

/// Whether a stdio command resolves without running it: an absolute or
/// package-relative file, or a bare name on PATH.
fn command_exists(command: &str, root: &Path) -> bool {
    let first = command.split_whitespace().next().unwrap_or_default();
    if first.contains('/') {
        let p = Path::new(first);
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        };
        return p.is_file();
    }
    crate::hooks::launch::find_on_path(first).is_some()
}

/// `host[:port]` of a URL, without scheme, user info, path or query.
pub fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    display::sanitize(host, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_hosts_drop_everything_but_the_host() {
        assert_eq!(
            url_host("https://user:pw@api.example.com:8443/mcp?key=1"),
            "api.example.com:8443"
        );
        assert_eq!(url_host("http://localhost/sse"), "localhost");
    }
}
