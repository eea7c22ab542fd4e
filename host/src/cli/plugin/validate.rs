//! `reasonix plugin validate <dir> [--json]`
use std::path::PathBuf;
use std::process::ExitCode;

use reasonix_package::{LoadedPackage, PackageError, load_package};
use serde_json::{Value, json};

use crate::cli::output::{self, errln};
use crate::install::ErrorCode;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Reads reasonix-plugin.json (strict reasonix.io/plugin/v2), or else \
                  .codex-plugin/plugin.json, or else .claude-plugin/plugin.json, applies the \
                  path rules (no absolute paths, no `..`, no symlinks out of the root, themes \
                  must be regular files) and prints what the package declares: its kind, \
                  name, version, counts of skills, agents, commands, prompts, hooks, MCP \
                  servers and themes, the runtime block if any, and warnings.\n\n\
                  On failure every problem is printed with its field path, e.g. \
                  `runtime: json: unknown field \"intrcepts\"`.\n\n\
                  Exit status: 0 valid, 1 invalid (or unreadable), 2 usage error."
)]
pub struct ValidateArgs {
    /// The plugin root: a directory holding reasonix-plugin.json,
    /// .codex-plugin/plugin.json or .claude-plugin/plugin.json.
    pub dir: PathBuf,
    /// Print the result as one JSON object: {"ok":true,…} or {"ok":false,
    /// "errorCode":…,"error":…,"errors":[{"path":…,"message":…}]}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ValidateArgs) -> ExitCode {
    match load_package(&args.dir) {
        Ok(pkg) => {
            if args.json {
                output::raw_line(&success_json(&pkg).to_string());
            } else {
                output::text(&success_text(&pkg));
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            let errors = error_list(&args.dir, &err);
            let code = error_code(&err);
            // Every problem on stderr, the code on the summary line; with
            // --json also the failure object (plus every error) on stdout.
            for (_, message) in &errors {
                errln!("error: {message}");
            }
            errln!(
                "invalid: {} ({} error{}) [{code}]",
                args.dir.display(),
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            );
            if args.json {
                let first = errors.first().map(|(_, m)| m.clone()).unwrap_or_default();
                let errors: Vec<Value> = errors
                    .iter()
                    .map(|(path, message)| json!({"path": path, "message": message}))
                    .collect();
                output::raw_line(
                    &json!({
                        "ok": false,
                        "op": "validate",
                        "errorCode": code,
                        "error": first,
                        "errors": errors,
                    })
                    .to_string(),
                );
            }
            ExitCode::from(1)
        }
    }
}

/// The install error code the same problem gets at install time.
fn error_code(err: &PackageError) -> &'static str {
    match err {
        PackageError::NoManifest(_) => ErrorCode::ManifestMissing.as_str(),
        PackageError::Io { .. } => ErrorCode::SourceUnreadable.as_str(),
        // The enum grows as more package kinds are read.
        _ => ErrorCode::InvalidManifest.as_str(),
    }
}

/// (field path, message) for every problem. Not an exhaustive `match`: the
/// error enum grows as more package kinds are read, and any other error is
/// reported against the directory.
fn error_list(dir: &std::path::Path, err: &PackageError) -> Vec<(String, String)> {
    if let PackageError::Manifest(m) = err {
        m.issues
            .iter()
            .map(|i| (i.path.clone(), i.message.clone()))
            .collect()
    } else if let PackageError::Io { path, .. } = err {
        vec![(path.display().to_string(), err.to_string())]
    } else {
        vec![(dir.display().to_string(), err.to_string())]
    }
}

fn kind_name(pkg: &LoadedPackage) -> Value {
    serde_json::to_value(pkg.kind).unwrap_or(Value::Null)
}

fn counts(pkg: &LoadedPackage) -> Value {
    let inv = &pkg.inventory;
    json!({
        "skills": inv.skills.len(),
        "skillRoots": inv.skill_roots.len(),
        "agents": inv.agents.len(),
        "agentRoots": inv.agent_roots.len(),
        "commands": inv.commands.len(),
        "commandRoots": inv.command_roots.len(),
        "prompts": inv.prompts.len(),
        "promptRoots": inv.prompt_roots.len(),
        "hooks": inv.hooks.len(),
        "mcpServers": inv.mcp_servers.len(),
        "themes": inv.themes.len(),
    })
}

fn success_json(pkg: &LoadedPackage) -> Value {
    let runtime = pkg
        .native
        .as_ref()
        .and_then(|m| m.runtime.as_ref())
        .map(|rt| {
            json!({
                "command": rt.command,
                "args": rt.args,
                "required": rt.required,
                "priority": rt.priority,
                "timeoutMillis": rt.timeout_millis(),
                "intercepts": rt.intercepts,
                "replaces": rt.replaces,
                "capabilities": rt.capabilities,
                "tools": rt.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            })
        });
    let inv = &pkg.inventory;
    json!({
        "ok": true,
        "kind": kind_name(pkg),
        "manifest": pkg.manifest_path,
        "name": pkg.name,
        "version": pkg.version,
        "description": pkg.description,
        "compatibility": pkg.compatibility,
        "counts": counts(pkg),
        "roots": {
            "skills": inv.skill_roots,
            "agents": inv.agent_roots,
            "commands": inv.command_roots,
            "prompts": inv.prompt_roots,
        },
        "themes": inv.themes.iter().map(|t| json!({"name": t.name, "path": t.path})).collect::<Vec<_>>(),
        "runtime": runtime,
        "warnings": pkg.warnings,
    })
}

fn success_text(pkg: &LoadedPackage) -> String {
    use std::fmt::Write;
    let inv = &pkg.inventory;
    let mut out = String::new();
    let kind = kind_name(pkg);
    let _ = writeln!(
        out,
        "ok: {}{} ({} manifest {})",
        pkg.name,
        pkg.version
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default(),
        kind.as_str().unwrap_or("?"),
        pkg.manifest_path
    );
    if let Some(d) = &pkg.description {
        let _ = writeln!(out, "  description: {d}");
    }
    let status = serde_json::to_value(pkg.compatibility.status).unwrap_or(Value::Null);
    let _ = writeln!(
        out,
        "  compatibility: {}{}",
        status.as_str().unwrap_or("?"),
        if pkg.compatibility.mapped.is_empty() {
            String::new()
        } else {
            format!(" (mapped: {})", pkg.compatibility.mapped.join(", "))
        }
    );
    for (label, found, roots) in [
        ("skills", inv.skills.len(), &inv.skill_roots),
        ("agents", inv.agents.len(), &inv.agent_roots),
        ("commands", inv.commands.len(), &inv.command_roots),
        ("prompts", inv.prompts.len(), &inv.prompt_roots),
    ] {
        let plural = if roots.len() == 1 { "root" } else { "roots" };
        let _ = match (found, roots.is_empty()) {
            (0, true) => writeln!(out, "  {label}: 0"),
            (0, false) => writeln!(
                out,
                "  {label}: {} {plural} ({})",
                roots.len(),
                roots.join(", ")
            ),
            (n, _) => writeln!(
                out,
                "  {label}: {n} in {} {plural} ({})",
                roots.len(),
                roots.join(", ")
            ),
        };
    }
    let _ = writeln!(out, "  hooks: {}", inv.hooks.len());
    for h in &inv.hooks {
        let what = h
            .command
            .as_deref()
            .or(h.context_file.as_deref())
            .unwrap_or("");
        let _ = writeln!(out, "    {}: {what}", h.event);
    }
    let _ = writeln!(out, "  mcpServers: {}", inv.mcp_servers.len());
    for s in &inv.mcp_servers {
        let _ = writeln!(out, "    {} ({})", s.name, s.transport);
    }
    let _ = writeln!(out, "  themes: {}", inv.themes.len());
    for t in &inv.themes {
        let _ = writeln!(out, "    {} - {}", t.name, t.path);
    }
    match pkg.native.as_ref().and_then(|m| m.runtime.as_ref()) {
        None => {
            let _ = writeln!(out, "  runtime: none");
        }
        Some(rt) => {
            if rt.is_wasm() {
                let _ = writeln!(
                    out,
                    "  runtime: SANDBOXED (wasm component: plugin root read-only, its data dir read-write, no network)"
                );
            } else {
                let _ = writeln!(out, "  runtime: FULL TRUST (runs outside the sandbox)");
            }
            let mut cmd = rt.command.clone();
            for a in &rt.args {
                cmd.push(' ');
                cmd.push_str(a);
            }
            let _ = writeln!(out, "    command: {cmd}");
            let list = |v: &[String]| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    v.join(", ")
                }
            };
            let _ = writeln!(out, "    intercepts: {}", list(&rt.intercepts));
            let _ = writeln!(out, "    replaces: {}", list(&rt.replaces));
            let _ = writeln!(out, "    capabilities: {}", list(&rt.capabilities));
            let tools: Vec<String> = rt.tools.iter().map(|t| t.name.clone()).collect();
            let _ = writeln!(out, "    tools: {}", list(&tools));
            let _ = writeln!(
                out,
                "    priority: {}, required: {}, timeout: {}",
                rt.priority,
                rt.required,
                rt.timeout_millis()
                    .map(|t| format!("{t} ms"))
                    .unwrap_or_else(|| "host defaults".to_string())
            );
        }
    }
    for w in &pkg.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
