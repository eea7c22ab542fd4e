//! The install plan: the `install_source` response JSON of §a.2 and the
//! plugin action it carries, built from a read package.
use std::collections::BTreeMap;

use reasonix_package::mods::preview::ModPreview;
use reasonix_package::{LoadedPackage, ManifestKind, PackageError, SkippedCapability};
use serde::Serialize;

use super::digest::{self, DigestPart};
use super::error::{ErrorCode, InstallError};
use super::gojson;

/// Per-kind action counts (always serialised, as Go does for a struct).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct KindTally {
    pub skill: usize,
    pub mcp: usize,
    pub plugin: usize,
}

/// A declared runtime process, shown so its full-trust implications can be
/// reviewed before approval. `fullTrust` is always true when present.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RuntimePlanInfo {
    pub command: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intercepts: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    pub full_trust: bool,
    /// Present for a wasm component runtime: what its sandbox lets it touch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxPlanInfo>,
}

/// What a sandboxed (wasm) runtime may touch.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPlanInfo {
    /// The installed package, mounted read-only.
    pub plugin_root: String,
    /// Its own data directory, read-write.
    pub data_dir: String,
    /// The only environment variables it sees (names from `runtime.env`).
    pub env: Vec<String>,
    pub network: bool,
    #[serde(rename = "memoryMiB")]
    pub memory_mib: u32,
    /// What its data directory may hold.
    #[serde(rename = "dataMiB")]
    pub data_mib: u32,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One plugin action, field order as upstream's action DTO.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct PluginAction {
    pub kind: String,
    pub action: String,
    pub status: String,
    pub risk_level: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub risk_reasons: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub target: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub config_path: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scope: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mode: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub skill_count: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub agent_count: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub command_count: usize,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub commit: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub tool_count: usize,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub compatibility: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mapped_capabilities: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_capabilities: Vec<SkippedCapability>,
    #[serde(skip_serializing_if = "is_zero")]
    pub hook_count: usize,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub manifest_kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub prompt_count: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub theme_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimePlanInfo>,
    /// A Claude Code mod (FULL TRUST): its module's events and `$` calls
    /// read from its syntax tree, and what could not be listed.
    #[serde(rename = "mod", skip_serializing_if = "Option::is_none")]
    pub mod_preview: Option<ModPreview>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error_code: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub next: String,
    /// The snapshot's tree digest. Additive to upstream's public action;
    /// left out of the planId payload (the content digest already covers it).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tree_digest: String,
}

/// The `install_source` response.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct InstallResponse {
    pub ok: bool,
    pub status: String,
    pub op: String,
    pub applied: bool,
    pub source: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    pub kind: String,
    pub kinds: KindTally,
    pub scope: String,
    pub mode: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub plan_id: String,
    pub actions: Vec<PluginAction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// The stable code of `error` (the failure shape of every `--json`
    /// command: `ok:false`, `errorCode`, `error`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error_code: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub next: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content_digest: String,
}

impl InstallResponse {
    /// One compact line, Go-encoded.
    pub fn to_json(&self) -> String {
        gojson::marshal(self)
    }
}

/// The request fields that enter the planId, as upstream normalises them
/// for `reasonix plugin install` (kind `plugin`, transport `auto`, tier
/// `background`, strict).
#[derive(Debug, Clone, Default)]
pub struct PlanRequest {
    pub op: String,
    /// The source as the user spelled it.
    pub source: String,
    /// `--name`, empty when not given.
    pub name: String,
    /// `copy` or `link`, as `reasonix plugin install` sends it.
    pub mode: String,
    pub replace: bool,
}

#[derive(Serialize)]
struct PlanPayload<'a> {
    op: &'a str,
    source: &'a str,
    kind: &'a str,
    scope: &'a str,
    mode: &'a str,
    name: &'a str,
    transport: &'a str,
    command: &'a str,
    tier: &'a str,
    replace: bool,
    strict: bool,
    actions: Vec<PluginAction>,
    #[serde(rename = "contentDigest", skip_serializing_if = "str::is_empty")]
    content_digest: &'a str,
}

fn risk_rank(level: &str) -> u8 {
    match level {
        "high" => 2,
        "medium" => 1,
        _ => 0,
    }
}

/// The worst risk of the actions (`low` for none).
pub fn plan_risk(actions: &[PluginAction]) -> &str {
    actions
        .iter()
        .map(|a| a.risk_level.as_str())
        .max_by_key(|l| risk_rank(l))
        .unwrap_or("low")
}

/// The action's digest part, or `None` when it cannot be pinned (link mode).
pub fn digest_part(action: &PluginAction) -> Option<DigestPart> {
    if action.mode == "link" || action.tree_digest.is_empty() {
        return None;
    }
    Some(DigestPart::plugin(
        &action.name,
        &action.source,
        &action.commit,
        &action.tree_digest,
    ))
}

/// The plan's content digest (empty when any action is unpinnable).
pub fn plan_content_digest(actions: &[PluginAction]) -> String {
    let parts: Option<Vec<DigestPart>> = actions.iter().map(digest_part).collect();
    parts
        .and_then(|p| digest::content_digest(&p))
        .unwrap_or_default()
}

/// `planId` over the request and the public actions (statuses as planned,
/// i.e. empty, sorted by kind:name:action:source:target:configPath).
pub fn compute_plan_id(req: &PlanRequest, actions: &[PluginAction]) -> String {
    let mut public: Vec<PluginAction> = actions
        .iter()
        .cloned()
        .map(|mut a| {
            a.status = String::new();
            a.tree_digest = String::new();
            a
        })
        .collect();
    let key = |a: &PluginAction| {
        format!(
            "{}:{}:{}:{}:{}:{}",
            a.kind, a.name, a.action, a.source, a.target, a.config_path
        )
    };
    public.sort_by_key(key);
    let content = plan_content_digest(actions);
    let scope = common_scope(actions);
    let payload = PlanPayload {
        op: &req.op,
        source: &req.source,
        kind: "plugin",
        scope: &scope,
        mode: &req.mode,
        name: &req.name,
        transport: "auto",
        command: "",
        tier: "background",
        replace: req.replace,
        strict: true,
        actions: public,
        content_digest: &content,
    };
    digest::plan_id(plan_risk(actions), &gojson::marshal(&payload))
}

/// `global` when every action agrees, `mixed` otherwise, empty for none.
pub fn common_scope(actions: &[PluginAction]) -> String {
    let Some(first) = actions.first() else {
        return String::new();
    };
    if actions.iter().all(|a| a.scope == first.scope) {
        first.scope.clone()
    } else {
        "mixed".into()
    }
}

/// Capability counts compared between a source and its copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub skills: usize,
    pub agents: usize,
    pub commands: usize,
    pub prompts: usize,
    pub hooks: usize,
    pub mcp: usize,
    pub themes: usize,
    /// 1 for a Claude Code mod (one module).
    pub mods: usize,
}

impl Counts {
    pub fn of(pkg: &LoadedPackage) -> Self {
        let inv = &pkg.inventory;
        Self {
            skills: inv.skills.len(),
            agents: inv.agents.len(),
            commands: inv.commands.len(),
            prompts: inv.prompts.len(),
            hooks: inv.hooks.len(),
            mcp: inv.mcp_servers.len(),
            themes: inv.themes.len(),
            mods: usize::from(inv.module.is_some()),
        }
    }

    /// Anything Reasonix can use from a non-native package.
    pub fn mapped_total(&self) -> usize {
        self.skills + self.commands + self.hooks + self.mcp + self.agents + self.mods
    }
}

pub fn manifest_kind_str(kind: ManifestKind) -> &'static str {
    match kind {
        ManifestKind::Reasonix => "reasonix",
        ManifestKind::Codex => "codex",
        ManifestKind::Claude => "claude",
    }
}

fn compatibility_str(pkg: &LoadedPackage) -> &'static str {
    match pkg.compatibility.status {
        reasonix_package::CompatibilityStatus::Full => "full",
        reasonix_package::CompatibilityStatus::Partial => "partial",
        reasonix_package::CompatibilityStatus::None => "none",
    }
}

/// The runtime block of a native package, for the plan and `show`.
pub fn runtime_info(pkg: &LoadedPackage) -> Option<RuntimePlanInfo> {
    let manifest = pkg.native.as_ref()?;
    let rt = manifest.runtime.as_ref()?;
    let sandbox = rt.is_wasm().then(|| SandboxPlanInfo {
        plugin_root: "read-only".into(),
        data_dir: format!("$REASONIX_HOME/data/{}/ (read-write)", manifest.name),
        env: rt.env.keys().cloned().collect(),
        network: false,
        memory_mib: crate::runtime::wasm::InstanceLimits::from_manifest(
            rt.sandbox.and_then(|s| s.memory_mib),
        )
        .memory_mib,
        data_mib: rt
            .sandbox
            .and_then(|s| s.data_mib)
            .unwrap_or(crate::runtime::wasm::DEFAULT_DATA_MIB),
    });
    Some(RuntimePlanInfo {
        command: rt.command.clone(),
        args: rt.args.clone(),
        intercepts: rt.intercepts.clone(),
        replaces: rt.replaces.clone(),
        capabilities: rt.capabilities.clone(),
        tools: rt.tools.iter().map(|t| t.name.clone()).collect(),
        full_trust: sandbox.is_none(),
        sandbox,
    })
}

/// The environment a sandboxed runtime sees, for display.
pub fn env_names(env: &[String]) -> String {
    if env.is_empty() {
        "no environment variables".into()
    } else {
        format!("only the environment variables {}", env.join(", "))
    }
}

/// `command args…` as one display line.
pub fn runtime_command_line(rt: &RuntimePlanInfo) -> String {
    std::iter::once(rt.command.as_str())
        .chain(rt.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Map a package read failure to an install error.
pub fn package_error(err: PackageError) -> InstallError {
    match err {
        PackageError::NoManifest(_) => {
            InstallError::new(ErrorCode::ManifestMissing, err.to_string())
        }
        PackageError::Io { .. } => InstallError::new(ErrorCode::SourceUnreadable, err.to_string()),
        // Manifest errors and unusable Codex/Claude package files.
        other => InstallError::new(ErrorCode::InvalidManifest, other.to_string()),
    }
}

/// Everything an action is built from.
pub struct ActionInput<'a> {
    pub pkg: &'a LoadedPackage,
    pub name: &'a str,
    pub source: &'a str,
    pub commit: Option<&'a str>,
    pub target: String,
    pub config_path: String,
    pub link: bool,
    pub tree_digest: String,
}

/// Build the plugin action for a read package (risk grading of §a.2).
pub fn plugin_action(input: ActionInput<'_>) -> Result<PluginAction, InstallError> {
    let pkg = input.pkg;
    let counts = Counts::of(pkg);
    if pkg.kind != ManifestKind::Reasonix && counts.mapped_total() == 0 {
        let skipped: Vec<String> = pkg
            .compatibility
            .skipped
            .iter()
            .map(|s| match &s.path {
                Some(path) => format!("{} {path} ({})", s.capability, s.reason),
                None => format!("{} ({})", s.capability, s.reason),
            })
            .collect();
        let why = if skipped.is_empty() {
            "it declares no skills, commands, agents, hooks or MCP servers".to_owned()
        } else {
            format!("skipped: [{}]", skipped.join(", "))
        };
        return Err(InstallError::new(
            ErrorCode::NoCompatibleCapabilities,
            format!(
                "plugin {:?} has no compatible capabilities; {why}",
                input.name
            ),
        ));
    }
    let mut agents: Vec<String> = pkg
        .inventory
        .agents
        .iter()
        .map(|a| a.name.clone())
        .collect();
    agents.sort();
    let mut skills = pkg.inventory.skill_roots.clone();
    skills.sort();
    let runtime = runtime_info(pkg);
    let mut a = PluginAction {
        kind: "plugin".into(),
        action: "install_plugin_package".into(),
        risk_level: "medium".into(),
        risk_reasons: vec![
            "installs a plugin package that can add skills, commands, hooks, and MCP servers"
                .into(),
        ],
        name: input.name.into(),
        source: input.source.into(),
        target: input.target,
        config_path: input.config_path,
        scope: "global".into(),
        mode: if input.link { "link" } else { "copy" }.into(),
        skills,
        skill_count: counts.skills,
        agent_count: agents.len(),
        agents,
        commands: pkg.inventory.command_roots.clone(),
        command_count: counts.commands,
        commit: input.commit.unwrap_or_default().to_string(),
        tool_count: counts.mcp,
        compatibility: compatibility_str(pkg).into(),
        mapped_capabilities: pkg.compatibility.mapped.clone(),
        skipped_capabilities: pkg.compatibility.skipped.clone(),
        hook_count: counts.hooks,
        manifest_kind: manifest_kind_str(pkg.kind).into(),
        version: pkg.version.clone().unwrap_or_default(),
        prompt_count: counts.prompts,
        theme_count: counts.themes,
        tree_digest: input.tree_digest,
        ..Default::default()
    };
    if input.link {
        a.risk_reasons
            .push("links a plugin package from a mutable local directory".into());
    }
    if counts.hooks > 0 {
        a.risk_level = "high".into();
        a.risk_reasons
            .push("registers shell hooks that execute during Reasonix sessions".into());
    }
    if counts.mcp > 0 {
        a.risk_level = "high".into();
        a.risk_reasons
            .push("adds MCP servers: programs or endpoints the model can call through use_capability, with your environment and their own state".into());
    }
    if let Some(rt) = &runtime {
        a.risk_level = "high".into();
        match &rt.sandbox {
            None => a.risk_reasons.push(format!(
                "FULL TRUST: declares a runtime process ({}) that runs inside Reasonix — it can read the full session and environment, bypass permissions, and operate this machine directly",
                runtime_command_line(rt)
            )),
            Some(sandbox) => a.risk_reasons.push(format!(
                "SANDBOXED: declares a wasm component ({}) that runs inside Reasonix's sandbox — it sees the session payloads of the points it intercepts and may block or rewrite them, but may only tighten permissions; it can read its plugin root, write only {} (at most {} MiB), sees {}, has no network and at most {} MiB of memory",
                runtime_command_line(rt),
                sandbox.data_dir,
                sandbox.data_mib,
                env_names(&sandbox.env),
                sandbox.memory_mib
            )),
        }
    }
    a.runtime = runtime;
    if let Some(preview) = mod_preview(pkg) {
        a.risk_level = "high".into();
        a.risk_reasons.push(format!(
            "FULL TRUST: a Claude Code mod — its module ({}) runs on this machine as you under Node, outside the sandbox: it can read files, start processes and use the network (it runs only while [mods] enabled = true in your config.toml)",
            preview.module
        ));
        a.mod_preview = Some(preview);
    }
    Ok(a)
}

/// The install preview of a Claude Code mod, when the package is one.
pub fn mod_preview(pkg: &LoadedPackage) -> Option<ModPreview> {
    let module = pkg.inventory.module.as_ref()?;
    Some(reasonix_package::mods::preview::read(&pkg.root, module))
}

/// Environment variable names a package's MCP servers and runtime expect
/// (used by `show`). Sorted, unique.
pub fn declared_env(pkg: &LoadedPackage) -> Vec<String> {
    let mut names = BTreeMap::new();
    for s in &pkg.inventory.mcp_servers {
        for k in s.env.keys() {
            names.insert(k.clone(), ());
        }
    }
    names.into_keys().collect()
}
