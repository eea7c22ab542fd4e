//! `reasonix plugin doctor <name>`: the checks of §a.11.
use std::process::ExitCode;

use super::common::{EXIT_FAILED, fail, home};
use crate::capabilities::RuntimeCommand;
use crate::install::digest::tree_digest;
use crate::install::installed::find_installed;
use crate::install::plan::runtime_info;
use crate::install::view::theme_warnings;
use crate::install::{ErrorCode, InstallError};

#[derive(Debug, clap::Args)]
#[command(
    about = "Check an installed plugin: manifest, roots, runtime command, hook shells, a mod's Node",
    long_about = "Check an installed plugin: that its manifest parses, that every declared \
                  skill, command and prompt root exists, that a runtime's command exists, that \
                  the shells its hooks need are available, and that a copied tree still has \
                  the digest it was installed with. Warnings (themes, edits) never change the \
                  exit status; exit 1 means a check failed."
)]
pub struct DoctorArgs {
    /// Installed plugin name.
    pub name: String,
}

pub fn run(args: DoctorArgs) -> ExitCode {
    let result = home().and_then(|h| find_installed(&h, &args.name));
    let (found, warnings) = match result {
        Ok(v) => v,
        Err(e) => return fail("doctor", &e, false),
    };
    for w in &warnings {
        println!("warning: {w}");
    }
    let Some(installed) = found else {
        let err = InstallError::new(
            ErrorCode::NotInstalled,
            format!("plugin {:?} is not installed", args.name),
        );
        return fail("doctor", &err, false);
    };
    let root = &installed.root;
    let pkg = match &installed.package {
        Ok(p) => p,
        Err(e) => {
            println!("invalid: {e}");
            if e.contains("missing apiVersion") {
                println!("remediation: reasonix plugin migrate {} --to-v2", args.name);
            } else {
                println!(
                    "remediation: fix the manifest (reasonix plugin validate {} lists every error), or reinstall with --replace",
                    root.display()
                );
            }
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let mut failed = false;
    if let Some(native) = &pkg.native {
        if !native.requires.is_empty() {
            println!("requires:");
            for r in &native.requires {
                let range = r
                    .version_range
                    .as_deref()
                    .map(|v| format!(" range={v}"))
                    .unwrap_or_default();
                let optional = if r.optional { " (optional)" } else { "" };
                println!("  {}{range}{optional}", r.key());
            }
        }
        if !native.provides.is_empty() {
            println!("provides:");
            for p in &native.provides {
                let version = p
                    .version
                    .as_deref()
                    .map(|v| format!("@{v}"))
                    .unwrap_or_default();
                println!("  {}{version}", p.key());
            }
        }
    }
    let inv = &pkg.inventory;
    for (kind, roots) in [
        ("skill", &inv.skill_roots),
        ("command", &inv.command_roots),
        ("prompt", &inv.prompt_roots),
    ] {
        for r in roots {
            if !root.join(r).is_dir() {
                println!("missing {kind} root: {r}");
                failed = true;
            }
        }
    }
    if let Some(rt) = runtime_info(pkg) {
        print!("{}", super::show::full_trust_block(&rt, ""));
        match crate::capabilities::runtime_command(root, &rt) {
            RuntimeCommand::Missing(p) => {
                println!("missing runtime command: {} (expected a file)", p.display());
                println!(
                    "remediation: build or restore the runtime binary in the package source (see its README), then `reasonix plugin install <source> --replace --yes`"
                );
                failed = true;
            }
            RuntimeCommand::NotOnPath(cmd) => {
                println!("warning: runtime command {cmd:?} was not found on PATH");
            }
            RuntimeCommand::Found(_) | RuntimeCommand::OnPath(_) => {}
        }
    }
    for m in &inv.mcp_servers {
        let shown = m.display();
        println!("mcp server {}: {} {}", m.name, m.transport, shown.target());
        if let Some(command) = m.command.as_deref().filter(|_| m.transport == "stdio") {
            let expanded = command
                .replace("${CLAUDE_PLUGIN_ROOT}", &root.to_string_lossy())
                .replace("${REASONIX_PLUGIN_ROOT}", &root.to_string_lossy());
            let found = if expanded.contains('/') {
                let p = std::path::Path::new(&expanded);
                if p.is_absolute() {
                    p.is_file()
                } else {
                    root.join(p).is_file()
                }
            } else {
                std::env::var_os("PATH").is_some_and(|path| {
                    std::env::split_paths(&path).any(|dir| dir.join(&expanded).is_file())
                })
            };
            if !found && !expanded.contains('$') {
                println!(
                    "warning: MCP server {} command {:?} was not found (mcp.command_not_found)",
                    m.name,
                    shown.command.unwrap_or_default()
                );
            }
        }
    }
    if let Some(preview) = crate::install::plan::mod_preview(pkg) {
        print!("{}", super::show::mod_block(&preview, ""));
        failed |= !mod_prerequisites(pkg);
    }
    for w in pkg.warnings.iter().chain(theme_warnings(root, pkg).iter()) {
        println!("warning: {w}");
    }
    for issue in crate::hooks::check_hook_runtime(pkg) {
        if issue.prerequisite {
            println!("unavailable {} hook: {}", issue.event, issue.message);
            if let Some(r) = &issue.remediation {
                println!("remediation: {r}");
            }
            failed = true;
        } else {
            println!("warning: {} hook: {}", issue.event, issue.message);
        }
    }
    if let Some(expected) = &installed.entry.tree_digest {
        match tree_digest(root) {
            Ok(d) if &d == expected => println!("treeDigest: {d} (matches the registry)"),
            Ok(d) => println!(
                "warning: installed tree was changed after install (treeDigest {d}, registered {expected})"
            ),
            Err(e) => println!("warning: cannot hash the installed tree: {e}"),
        }
    }
    if failed {
        return ExitCode::from(EXIT_FAILED);
    }
    println!("ok: {} ({})", args.name, root.display());
    ExitCode::SUCCESS
}

/// The Node a mod needs (22+, on PATH, not inside the current directory's
/// workspace; 22.18+ for a TypeScript module). `false` when it is missing.
fn mod_prerequisites(pkg: &reasonix_package::LoadedPackage) -> bool {
    let cwd = std::env::current_dir().ok();
    let typescript = pkg
        .inventory
        .module
        .as_ref()
        .is_some_and(|m| m.language == reasonix_package::mods::ModLanguage::TypeScript);
    match crate::mods::node::find(cwd.as_deref()) {
        Err(problem) => {
            println!("unavailable mod: {problem}");
            println!("remediation: install Node.js 22 or newer and put it first on PATH");
            false
        }
        Ok(node)
            if typescript && node.type_stripping == crate::mods::TypeStripping::Unavailable =>
        {
            println!(
                "unavailable mod: the module is TypeScript, and the node on PATH ({} {}) does not strip types",
                node.path.display(),
                node.version
            );
            println!("remediation: use Node.js 22.18 or newer, or build the module to .js");
            false
        }
        Ok(node) => {
            println!("node: {} {}", node.path.display(), node.version);
            let home = crate::home::ReasonixHome::from_env();
            let on = home
                .ok()
                .and_then(|h| {
                    crate::config::Config::load(
                        &h,
                        cwd.as_deref().unwrap_or(std::path::Path::new(".")),
                    )
                    .ok()
                })
                .is_some_and(|c| c.mods.enabled);
            if !on {
                println!(
                    "warning: [mods] enabled is not set in config.toml: the mod does not run until you turn it on"
                );
            }
            true
        }
    }
}
