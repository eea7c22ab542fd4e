//! `reasonix plugin show <name> [--json]`
use std::process::ExitCode;

use reasonix_package::LoadedPackage;

use super::common::{fail, home, not_installed};
use crate::cli::output::{self, errln, one_line};
use crate::install::installed::{Installed, find_installed};
use crate::install::plan::{Counts, RuntimePlanInfo, manifest_kind_str, runtime_info};

#[derive(Debug, clap::Args)]
#[command(
    about = "Show one plugin's metadata, root, source and capability inventory",
    long_about = "Show one installed plugin: metadata, root, source, capability counts, the \
                  FULL TRUST block of a code-extension runtime, and the concrete inventory: \
                  /<plugin>:<skill> invocations, commands with argument hints, hooks with \
                  their events and matchers, MCP servers with their transports."
)]
pub struct ShowArgs {
    /// Installed plugin name.
    pub name: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The prominent block shown for any package that declares a runtime:
/// FULL TRUST for a native sidecar, SANDBOXED (and what it may touch) for a
/// wasm component.
pub fn full_trust_block(rt: &RuntimePlanInfo, indent: &str) -> String {
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    let mut out = match &rt.sandbox {
        None => format!(
            "{indent}FULL TRUST: this plugin runs a code extension outside the sandbox with your full environment; it can read the whole session, bypass permissions and operate this machine\n"
        ),
        Some(sandbox) => {
            let mut block = format!(
                "{indent}SANDBOXED: this plugin runs a wasm component inside Reasonix's sandbox; it sees the payloads of the points it intercepts and may block or rewrite them, but may only tighten permission decisions\n"
            );
            block.push_str(&format!("{indent}  plugin root: {}\n", sandbox.plugin_root));
            block.push_str(&format!("{indent}  data dir: {}\n", sandbox.data_dir));
            block.push_str(&format!("{indent}  data quota: {} MiB\n", sandbox.data_mib));
            block.push_str(&format!(
                "{indent}  environment: {}\n",
                if sandbox.env.is_empty() {
                    "none".to_string()
                } else {
                    sandbox.env.join(", ")
                }
            ));
            block.push_str(&format!("{indent}  network: none\n"));
            block.push_str(&format!(
                "{indent}  memory limit: {} MiB\n",
                sandbox.memory_mib
            ));
            block
        }
    };
    out.push_str(&format!(
        "{indent}  command: {}\n",
        one_line(&crate::install::plan::runtime_command_line(rt))
    ));
    out.push_str(&format!("{indent}  intercepts: {}\n", list(&rt.intercepts)));
    out.push_str(&format!("{indent}  replaces: {}\n", list(&rt.replaces)));
    out.push_str(&format!(
        "{indent}  capabilities: {}\n",
        list(&rt.capabilities)
    ));
    let provider_ui: Vec<String> = rt
        .capabilities
        .iter()
        .filter(|c| matches!(c.as_str(), "providers" | "ui"))
        .cloned()
        .collect();
    out.push_str(&format!(
        "{indent}  provider/UI capabilities: {}\n",
        list(&provider_ui)
    ));
    out.push_str(&format!("{indent}  tools: {}\n", list(&rt.tools)));
    out
}

fn opt(s: &Option<String>) -> &str {
    s.as_deref().filter(|v| !v.is_empty()).unwrap_or("-")
}

/// The text of `show`.
pub fn show_text(i: &Installed) -> String {
    let e = &i.entry;
    let mut out = String::new();
    out.push_str(&format!("name: {}\n", e.name));
    out.push_str(&format!("version: {}\n", opt(&e.version)));
    out.push_str(&format!("enabled: {}\n", e.enabled));
    out.push_str(&format!("state: {}\n", i.state()));
    out.push_str(&format!("kind: {}\n", opt(&e.manifest_kind)));
    out.push_str(&format!("root: {}\n", i.root.display()));
    out.push_str(&format!("source: {}\n", opt(&e.source)));
    if e.is_link() {
        out.push_str("mode: link (the source directory is used in place; no content pin)\n");
    }
    if let Some(c) = &e.commit {
        out.push_str(&format!("commit: {c}\n"));
    }
    if let Some(d) = &e.tree_digest {
        out.push_str(&format!("treeDigest: {d}\n"));
    }
    let pkg = match &i.package {
        Ok(p) => p,
        Err(err) => {
            out.push_str(&format!("error: {err}\n"));
            return out;
        }
    };
    if let Some(d) = &pkg.description {
        out.push_str(&format!("description: {}\n", one_line(d)));
    }
    let c = Counts::of(pkg);
    out.push_str(&format!("skills: {}\n", c.skills));
    out.push_str(&format!("commands: {}\n", c.commands));
    out.push_str(&format!("prompts: {}\n", c.prompts));
    out.push_str(&format!("agents: {}\n", c.agents));
    out.push_str(&format!("hooks: {}\n", c.hooks));
    out.push_str(&format!("mcpServers: {}\n", c.mcp));
    out.push_str(&format!("themes: {}\n", c.themes));
    if let Some(rt) = runtime_info(pkg) {
        out.push_str(&full_trust_block(&rt, ""));
    }
    out.push_str(&inventory_text(&e.name, pkg));
    for w in &pkg.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

fn inventory_text(plugin: &str, pkg: &LoadedPackage) -> String {
    let inv = &pkg.inventory;
    // Package text, one field per column: a newline or an escape sequence in
    // a description cannot forge a line or drive the terminal.
    let desc = |d: &Option<String>| one_line(d.as_deref().unwrap_or_default());
    let mut out = String::new();
    if !inv.skills.is_empty() {
        out.push_str("skills:\n");
        for s in &inv.skills {
            out.push_str(&format!(
                "  /{plugin}:{}\t[{}]\t{}\n",
                s.name,
                s.run_as,
                desc(&s.description)
            ));
        }
    }
    for (title, list) in [("commands", &inv.commands), ("prompts", &inv.prompts)] {
        if list.is_empty() {
            continue;
        }
        out.push_str(&format!("{title}:\n"));
        for c in list {
            out.push_str(&format!(
                "  /{plugin}:{}\t{}\t{}\n",
                c.name,
                one_line(c.argument_hint.as_deref().unwrap_or_default()),
                desc(&c.description)
            ));
        }
    }
    if !inv.agents.is_empty() {
        out.push_str("agents:\n");
        for a in &inv.agents {
            out.push_str(&format!(
                "  /{plugin}:agent:{}\t{}\n",
                a.name,
                desc(&a.description)
            ));
        }
    }
    if !inv.themes.is_empty() {
        out.push_str("themes:\n");
        for t in &inv.themes {
            // A rejected theme is not in the picker: say so, and why.
            let verdict = reasonix_package::themes::check(&pkg.root, t)
                .rejected
                .map(|why| format!("\trejected: {why}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  plugin:{plugin}:{}\t{}{verdict}\n",
                t.name, t.path
            ));
        }
    }
    if !inv.hooks.is_empty() {
        out.push_str("hooks:\n");
        for h in &inv.hooks {
            let what = h
                .command
                .clone()
                .or_else(|| h.context_file.as_ref().map(|f| format!("contextFile {f}")))
                .unwrap_or_default();
            out.push_str(&format!(
                "  {}\tmatch={}\t{}\t{}\n",
                one_line(&h.event),
                one_line(
                    h.matcher
                        .as_deref()
                        .filter(|m| !m.is_empty())
                        .unwrap_or("*")
                ),
                one_line(&what),
                desc(&h.description)
            ));
        }
    }
    if !inv.mcp_servers.is_empty() {
        out.push_str("mcpServers:\n");
        for m in &inv.mcp_servers {
            let target = m
                .command
                .clone()
                .map(|c| {
                    std::iter::once(c)
                        .chain(m.args.iter().cloned())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .or_else(|| m.url.clone())
                .unwrap_or_default();
            out.push_str(&format!(
                "  {}\t{}\t{}\n",
                one_line(&m.name),
                m.transport,
                one_line(&target)
            ));
        }
    }
    out
}

/// A JSON view of one package (shape of upstream's `GET /plugins` rows).
pub fn show_json(i: &Installed) -> serde_json::Value {
    let e = &i.entry;
    let mut v = serde_json::json!({
        "name": e.name,
        "version": e.version,
        "description": e.description,
        "source": e.source,
        "root": i.root.to_string_lossy(),
        "manifestKind": e.manifest_kind,
        "enabled": e.enabled,
        "state": i.state(),
        "commit": e.commit,
        "treeDigest": e.tree_digest,
    });
    let obj = v.as_object_mut().expect("object literal");
    match &i.package {
        Err(err) => {
            obj.insert("error".into(), err.clone().into());
        }
        Ok(pkg) => {
            let plugin = &e.name;
            let inv = &pkg.inventory;
            obj.insert(
                "compatibility".into(),
                serde_json::to_value(&pkg.compatibility).unwrap_or_default(),
            );
            obj.insert(
                "skills".into(),
                inv.skills
                    .iter()
                    .map(|s| serde_json::json!({"name": s.name, "description": s.description, "runAs": s.run_as, "invocation": format!("/{plugin}:{}", s.name)}))
                    .collect(),
            );
            let cmds = |list: &[reasonix_package::Command]| -> serde_json::Value {
                list.iter()
                    .map(|c| serde_json::json!({"name": c.name, "description": c.description, "argumentHint": c.argument_hint, "invocation": format!("/{plugin}:{}", c.name)}))
                    .collect()
            };
            obj.insert("commands".into(), cmds(&inv.commands));
            obj.insert("prompts".into(), cmds(&inv.prompts));
            obj.insert(
                "agents".into(),
                inv.agents
                    .iter()
                    .map(|a| serde_json::json!({"name": a.name, "description": a.description, "invocation": format!("/{plugin}:agent:{}", a.name)}))
                    .collect(),
            );
            obj.insert(
                "themes".into(),
                inv.themes
                    .iter()
                    .map(|t| {
                        let mut v = serde_json::json!({"name": t.name, "id": format!("plugin:{plugin}:{}", t.name), "path": t.path});
                        if let Some(why) = reasonix_package::themes::check(&pkg.root, t).rejected {
                            v["rejected"] = why.into();
                        }
                        v
                    })
                    .collect(),
            );
            obj.insert(
                "hooks".into(),
                inv.hooks
                    .iter()
                    .map(|h| serde_json::json!({"event": h.event, "match": h.matcher, "command": h.command, "contextFile": h.context_file, "description": h.description}))
                    .collect(),
            );
            obj.insert(
                "mcpServers".into(),
                inv.mcp_servers
                    .iter()
                    .map(|m| serde_json::json!({"name": m.name, "displayName": m.display_name, "transport": m.transport, "command": m.command, "url": m.url, "autoStart": m.auto_start}))
                    .collect(),
            );
            if let Some(rt) = runtime_info(pkg) {
                obj.insert(
                    "runtime".into(),
                    serde_json::to_value(rt).unwrap_or_default(),
                );
            }
            obj.insert("manifestKind".into(), manifest_kind_str(pkg.kind).into());
            obj.insert("warnings".into(), pkg.warnings.clone().into());
        }
    }
    v
}

pub fn run(args: ShowArgs) -> ExitCode {
    let result = home().and_then(|h| find_installed(&h, &args.name));
    let (found, warnings) = match result {
        Ok(v) => v,
        Err(e) => return fail("show", &e, args.json),
    };
    let Some(installed) = found else {
        return fail("show", &not_installed(&args.name), args.json);
    };
    if args.json {
        output::raw_line(&crate::install::gojson::marshal(&show_json(&installed)));
    } else {
        output::text(&show_text(&installed));
        for w in warnings {
            errln!("warning: {w}");
        }
    }
    if installed.package.is_err() {
        return ExitCode::from(super::common::EXIT_FAILED);
    }
    ExitCode::SUCCESS
}
