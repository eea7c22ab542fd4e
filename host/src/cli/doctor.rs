//! `reasonix doctor …`: workspace-wide diagnostics.
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use super::output;
use super::plugin::common::{EXIT_FAILED, fail, home};
use crate::capabilities::{self, Report, Severity};

#[derive(Debug, Subcommand)]
pub enum DoctorCommand {
    Capabilities(CapabilitiesArgs),
}

#[derive(Debug, clap::Args)]
#[command(
    about = "Report what the installed plugin packages contribute to this workspace, and what is wrong",
    long_about = "Report, without changing anything, what a session of this workspace gets from \
                  the installed plugin packages: instruction documents, skills, commands and \
                  prompts, hooks, MCP servers, and each package's status and runtime. Every \
                  finding is an issue with a severity and a stable code (plugin.missing_root, \
                  hook.invalid_matcher, mcp.command_not_found, …) and a remediation. Paths are \
                  shown as <workspace>/…, ~/… or <external>/name; credentials are redacted. \
                  The report is static: no MCP server or extension is started.\n\n\
                  Exit status: 0 when there is no error-level issue, 1 otherwise."
)]
pub struct CapabilitiesArgs {
    /// The workspace root to diagnose (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Print the report as JSON (schema_version 1).
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: DoctorCommand) -> ExitCode {
    match cmd {
        DoctorCommand::Capabilities(args) => capabilities(args),
    }
}

fn capabilities(args: CapabilitiesArgs) -> ExitCode {
    let home = match home() {
        Ok(h) => h,
        Err(e) => return fail("doctor capabilities", &e, args.json),
    };
    let root = match args.root {
        Some(r) => r,
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    };
    let report = capabilities::collect(&capabilities::Options {
        root,
        home,
        user_home: crate::home::user_home(),
    });
    if args.json {
        output::raw_line(&crate::install::gojson::marshal(&report));
    } else {
        output::text(&text(&report));
    }
    if report.summary.errors > 0 {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// The human form of the report.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let s = &r.summary;
    let _ = writeln!(
        out,
        "capabilities of {} ({}): {} errors, {} warnings, {} infos",
        r.root,
        if r.live { "live" } else { "static" },
        s.errors,
        s.warnings,
        s.infos
    );
    let _ = writeln!(out, "instructions: {}", s.instructions);
    for d in &r.instructions.docs {
        let _ = writeln!(out, "  {}. {} ({})", d.order, d.path, d.scope);
    }
    let _ = writeln!(out, "plugins: {}", s.plugins);
    for p in &r.plugins.packages {
        let runtime = p
            .trust
            .map(|t| format!(" / {t} runtime"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}\t{}\t{}\t{} skills / {} commands / {} prompts / {} hooks / {} MCP / {} themes{runtime}",
            p.name,
            p.status,
            if p.manifest_kind.is_empty() {
                "-"
            } else {
                &p.manifest_kind
            },
            p.skills,
            p.commands,
            p.prompts,
            p.hooks,
            p.mcp_servers,
            p.themes
        );
    }
    for (title, assets) in [("skills", &r.skills), ("commands", &r.commands)] {
        let _ = writeln!(out, "{title}: {}", assets.winners);
        for e in &assets.entries {
            let _ = writeln!(out, "  /{}\t{}", e.name, e.status);
        }
    }
    let _ = writeln!(out, "hooks: {}", s.hooks);
    for h in &r.hooks.entries {
        let what = if h.command.is_empty() {
            &h.context_file
        } else {
            &h.command
        };
        let _ = writeln!(
            out,
            "  {}\tmatch={}\t{what}\t{}",
            h.event,
            if h.matcher.is_empty() {
                "*"
            } else {
                &h.matcher
            },
            h.scope
        );
    }
    let _ = writeln!(out, "mcp servers: {}", s.mcp_servers);
    for m in &r.mcp.servers {
        let target = if m.command.is_empty() {
            &m.url_host
        } else {
            &m.command
        };
        let _ = writeln!(
            out,
            "  {}\t{}\t{target}\t{}\tfrom {}",
            m.name, m.transport, m.start_intent, m.package_owner
        );
    }
    if !r.issues.is_empty() {
        let _ = writeln!(out, "issues:");
    }
    for i in &r.issues {
        let severity = match i.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        let name = if i.name.is_empty() {
            String::new()
        } else {
            format!(" {}", i.name)
        };
        let _ = writeln!(out, "  {severity}\t{}{name}: {}", i.code, i.message);
        if !i.source.is_empty() {
            let _ = writeln!(out, "    source: {}", i.source);
        }
        if !i.remediation.is_empty() {
            let _ = writeln!(out, "    next: {}", i.remediation);
        }
    }
    out
}
