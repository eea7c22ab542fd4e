//! `reasonix plugin show <name> [--json]`
use std::process::ExitCode;

use reasonix_package::LoadedPackage;

use super::common::{fail, home, not_installed};
use crate::cli::output::{self, errln, one_line};
use crate::install::installed::{Installed, find_installed};
use reasonix_package::mods::preview::ModPreview;

use crate::install::plan::{Counts, RuntimePlanInfo, mod_preview, runtime_info};
use crate::install::view::plugin_view;
use crate::runtime::redaction::clean_text;

#[derive(Debug, clap::Args)]
#[command(
    about = "Show one plugin's metadata, root, source and capability inventory",
    long_about = "Show one installed plugin: metadata, root, source, capability counts, the \
                  FULL TRUST block of a code-extension runtime or a Claude Code mod (its \
                  events and $ calls read from its syntax tree), and the concrete inventory: \
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

/// The FULL TRUST block of a Claude Code mod: what its module registers
/// and calls, read from its syntax tree, and what could not be listed.
pub fn mod_block(preview: &ModPreview, indent: &str) -> String {
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter()
                .map(|s| clean_text(s))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut out = format!(
        "{indent}FULL TRUST: a Claude Code mod; its module runs on this machine as you, outside the sandbox: it can read files, start processes and use the network\n"
    );
    out.push_str(&format!(
        "{indent}  module: {} ({}; runs only while [mods] enabled = true)\n",
        clean_text(&preview.module),
        preview.language
    ));
    out.push_str(&format!("{indent}  events: {}\n", list(&preview.events)));
    out.push_str(&format!("{indent}  $ calls: {}\n", list(&preview.calls)));
    out.push_str(&format!(
        "{indent}  reads the session: {}\n",
        if preview.reads_session {
            "yes ($.session.messages / $.session.usage)"
        } else {
            "no"
        }
    ));
    out.push_str(&format!(
        "{indent}  unserved: {}\n",
        list(&preview.unserved)
    ));
    out.push_str(&format!("{indent}  imports: {}\n", list(&preview.imports)));
    if let Some(error) = &preview.error {
        out.push_str(&format!("{indent}  error: {}\n", clean_text(error)));
    }
    if preview.not_listed.is_empty() {
        out.push_str(&format!(
            "{indent}  not listed: nothing found (the listing is an aid, not a guarantee)\n"
        ));
    } else {
        out.push_str(&format!(
            "{indent}  not listed (the listing is an aid, not a guarantee):\n"
        ));
        for note in &preview.not_listed {
            out.push_str(&format!("{indent}    - {}\n", clean_text(note)));
        }
    }
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
    if let Some(preview) = mod_preview(pkg) {
        out.push_str(&mod_block(&preview, ""));
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
            // Only the masked entry is ever shown (reasonix_package::mask).
            let target = m.display().target();
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
        output::raw_line(&crate::install::gojson::marshal(&plugin_view(&installed)));
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
