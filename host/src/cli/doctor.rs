//! `reasonix doctor …`: workspace-wide diagnostics.
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
                  The report is static: nothing is started. With --live, the MCP servers a \
                  session would start (declared auto_start, or enabled with `reasonix mcp \
                  enable`) are started four at a time, each within --timeout, and the report \
                  adds their state and tools (mcp.start_failed, mcp.no_tools); every process \
                  started is gone when the command returns.\n\n\
                  Exit status: 0 when there is no error-level issue (a live start failure is \
                  one), 1 otherwise, 2 for a usage error."
)]
pub struct CapabilitiesArgs {
    /// The workspace root to diagnose (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Print the report as JSON (schema_version 1).
    #[arg(long)]
    pub json: bool,
    /// Start the MCP servers a session would start and report what they offer.
    #[arg(long)]
    pub live: bool,
    /// With --live: how long each server may take to start (1s to 60s).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_timeout)]
    pub timeout: Duration,
}

/// `5s`, `500ms`, `1m` or plain seconds, between 1 s and 60 s.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (write 10s, 500ms or 1m)"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        _ => {
            return Err(format!(
                "{text:?} is not a duration (write 10s, 500ms or 1m)"
            ));
        }
    };
    if !(Duration::from_secs(1)..=Duration::from_secs(60)).contains(&duration) {
        return Err(format!("{text} is outside 1s..60s"));
    }
    Ok(duration)
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
    let options = capabilities::Options {
        root,
        home,
        user_home: crate::home::user_home(),
    };
    let mut report = capabilities::collect(&options);
    if args.live {
        let runtime = match crate::cli::runtime() {
            Ok(runtime) => runtime,
            Err(e) => {
                output::note(&format!("error: cannot start the async runtime: {e}\n"));
                return ExitCode::from(EXIT_FAILED);
            }
        };
        runtime.block_on(capabilities::live::probe(
            &mut report,
            &options,
            args.timeout,
        ));
    }
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
        let live = match (m.runtime_status.as_str(), m.tool_count) {
            ("", _) => String::new(),
            (status, Some(n)) => format!("\t{status}, {n} tools"),
            (status, None) => format!("\t{status}"),
        };
        let _ = writeln!(
            out,
            "  {}\t{}\t{target}\t{}\tfrom {}{live}",
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
