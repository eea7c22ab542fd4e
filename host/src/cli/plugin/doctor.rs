//! `reasonix plugin doctor <name>`: the checks of §a.11.
use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;

use super::common::{EXIT_FAILED, fail, home, not_installed};
use crate::capabilities::RuntimeCommand;
use crate::cli::output::{self, outln};
use crate::install::digest::tree_digest;
use crate::install::installed::{Installed, find_installed};
use crate::install::plan::runtime_info;
use crate::install::view::theme_warnings;

#[derive(Debug, clap::Args)]
#[command(
    about = "Check an installed plugin: manifest, roots, runtime command, hook shells, a mod's Node",
    long_about = "Check an installed plugin: that its manifest parses, that every declared \
                  skill, command and prompt root exists, that a runtime's command exists, that \
                  the shells its hooks need are available, and that a copied tree still has \
                  the digest it was installed with. Warnings (themes, edits) never change the \
                  exit status; exit 1 means a check failed.\n\n\
                  --json prints {\"ok\":…,\"name\",\"root\",\"linked\",\"findings\":[{\"level\",\
                  \"message\",\"remediation\"}]}; a failed check adds errorCode and error."
)]
pub struct DoctorArgs {
    /// Installed plugin name.
    pub name: String,
    /// Print the checks as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
struct Finding {
    /// `info`, `warning` or `error` (a failed check).
    level: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    remediation: Option<String>,
    /// How the text report prints it (`missing runtime command: …`).
    #[serde(skip)]
    text: String,
}

#[derive(Default)]
struct Report {
    findings: Vec<Finding>,
}

impl Report {
    fn info(&mut self, text: String) {
        self.findings.push(Finding {
            level: "info",
            message: text.clone(),
            remediation: None,
            text,
        });
    }

    fn warning(&mut self, message: String) {
        self.findings.push(Finding {
            level: "warning",
            text: format!("warning: {message}"),
            message,
            remediation: None,
        });
    }

    /// A failed check: `text` is its line, `message` the bare problem.
    fn error(&mut self, text: String, message: String, remediation: Option<String>) {
        self.findings.push(Finding {
            level: "error",
            message,
            remediation,
            text,
        });
    }

    fn failed(&self) -> Option<&Finding> {
        self.findings.iter().find(|f| f.level == "error")
    }
}

pub fn run(args: DoctorArgs) -> ExitCode {
    let result = home().and_then(|h| find_installed(&h, &args.name));
    let (found, warnings) = match result {
        Ok(v) => v,
        Err(e) => return fail("doctor", &e, args.json),
    };
    let Some(installed) = found else {
        return fail("doctor", &not_installed(&args.name), args.json);
    };
    let mut report = Report::default();
    for w in &warnings {
        report.warning(w.clone());
    }
    let linked = installed.entry.is_link();
    check(&installed, &mut report);
    let root = &installed.root;
    if args.json {
        let mut value = serde_json::json!({
            "ok": report.failed().is_none(),
            "op": "doctor",
            "name": args.name,
            "root": root.to_string_lossy(),
            "linked": linked,
            "findings": report.findings,
        });
        if let Some(failed) = report.failed() {
            value["errorCode"] = "plugin.check_failed".into();
            value["error"] = failed.message.clone().into();
            if let Some(r) = &failed.remediation {
                value["next"] = r.clone().into();
            }
        }
        output::raw_line(&crate::install::gojson::marshal(&value));
    } else {
        for f in &report.findings {
            outln!("{}", f.text);
            if let Some(r) = &f.remediation {
                outln!("remediation: {r}");
            }
        }
        if report.failed().is_none() {
            outln!("ok: {} ({})", args.name, root.display());
        }
    }
    if report.failed().is_some() {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// What to do about a missing runtime binary: a linked plugin runs from
/// its source directory, so building there is the whole fix; a copy must
/// be reinstalled from a source that has the binary.
fn rebuild_hint(linked: bool, root: &Path) -> String {
    if linked {
        format!(
            "build the runtime binary in {} (the linked source directory; see its README); no reinstall is needed",
            root.display()
        )
    } else {
        "build or restore the runtime binary in the package source (see its README), then `reasonix plugin install <source> --replace --yes`".to_string()
    }
}

fn check(installed: &Installed, report: &mut Report) {
    let root = &installed.root;
    let linked = installed.entry.is_link();
    let pkg = match &installed.package {
        Ok(p) => p,
        Err(e) => {
            let remediation = if e.contains("missing apiVersion") {
                format!("reasonix plugin migrate {} --to-v2", installed.entry.name)
            } else if linked {
                format!(
                    "fix the manifest in {} (reasonix plugin validate {} lists every error); the link picks the fix up",
                    root.display(),
                    root.display()
                )
            } else {
                format!(
                    "fix the manifest (reasonix plugin validate {} lists every error), or reinstall with --replace",
                    root.display()
                )
            };
            report.error(format!("invalid: {e}"), e.clone(), Some(remediation));
            return;
        }
    };
    if let Some(native) = &pkg.native {
        if !native.requires.is_empty() {
            report.info("requires:".into());
            for r in &native.requires {
                let range = r
                    .version_range
                    .as_deref()
                    .map(|v| format!(" range={v}"))
                    .unwrap_or_default();
                let optional = if r.optional { " (optional)" } else { "" };
                report.info(format!("  {}{range}{optional}", r.key()));
            }
        }
        if !native.provides.is_empty() {
            report.info("provides:".into());
            for p in &native.provides {
                let version = p
                    .version
                    .as_deref()
                    .map(|v| format!("@{v}"))
                    .unwrap_or_default();
                report.info(format!("  {}{version}", p.key()));
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
                let message = format!("missing {kind} root: {r}");
                report.error(message.clone(), message, None);
            }
        }
    }
    if let Some(rt) = runtime_info(pkg) {
        for line in super::show::full_trust_block(&rt, "").lines() {
            report.info(line.to_string());
        }
        match crate::capabilities::runtime_command(root, &rt) {
            RuntimeCommand::Missing(p) => {
                let message = format!("missing runtime command: {} (expected a file)", p.display());
                report.error(message.clone(), message, Some(rebuild_hint(linked, root)));
            }
            RuntimeCommand::NotOnPath(cmd) => {
                report.warning(format!("runtime command {cmd:?} was not found on PATH"));
            }
            RuntimeCommand::Found(_) | RuntimeCommand::OnPath(_) => {}
        }
    }
    for m in &inv.mcp_servers {
        let shown = m.display();
        report.info(format!(
            "mcp server {}: {} {}",
            m.name,
            m.transport,
            shown.target()
        ));
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
                report.warning(format!(
                    "MCP server {} command {:?} was not found (mcp.command_not_found)",
                    m.name,
                    shown.command.unwrap_or_default()
                ));
            }
        }
    }
    if let Some(preview) = crate::install::plan::mod_preview(pkg) {
        for line in super::show::mod_block(&preview, "").lines() {
            report.info(line.to_string());
        }
        mod_prerequisites(pkg, report);
    }
    for w in pkg.warnings.iter().chain(theme_warnings(root, pkg).iter()) {
        report.warning(w.clone());
    }
    for issue in crate::hooks::check_hook_runtime(pkg) {
        if issue.prerequisite {
            let message = format!("unavailable {} hook: {}", issue.event, issue.message);
            report.error(message.clone(), message, issue.remediation.clone());
        } else {
            report.warning(format!("{} hook: {}", issue.event, issue.message));
        }
    }
    if let Some(expected) = &installed.entry.tree_digest {
        match tree_digest(root) {
            Ok(d) if &d == expected => {
                report.info(format!("treeDigest: {d} (matches the registry)"))
            }
            Ok(d) => report.warning(format!(
                "installed tree was changed after install (treeDigest {d}, registered {expected})"
            )),
            Err(e) => report.warning(format!("cannot hash the installed tree: {e}")),
        }
    }
}

/// The Node a mod needs (22+, on PATH, not inside the current directory's
/// workspace; 22.18+ for a TypeScript module). `false` when it is missing.
/// Node for a mod: missing or unable to run the module is an error.
fn mod_prerequisites(pkg: &reasonix_package::LoadedPackage, report: &mut Report) {
    let cwd = std::env::current_dir().ok();
    let typescript = pkg
        .inventory
        .module
        .as_ref()
        .is_some_and(|m| m.language == reasonix_package::mods::ModLanguage::TypeScript);
    match crate::mods::node::find(cwd.as_deref()) {
        Err(problem) => {
            let message = format!("unavailable mod: {problem}");
            report.error(
                message.clone(),
                message,
                Some("install Node.js 22 or newer and put it first on PATH".into()),
            );
        }
        Ok(node)
            if typescript && node.type_stripping == crate::mods::TypeStripping::Unavailable =>
        {
            let message = format!(
                "unavailable mod: the module is TypeScript, and the node on PATH ({} {}) does not strip types",
                node.path.display(),
                node.version
            );
            report.error(
                message.clone(),
                message,
                Some("use Node.js 22.18 or newer, or build the module to .js".into()),
            );
        }
        Ok(node) => {
            report.info(format!("node: {} {}", node.path.display(), node.version));
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
                report.warning(
                    "[mods] enabled is not set in config.toml: the mod does not run until you \
                     turn it on"
                        .into(),
                );
            }
        }
    }
}
