//! `reasonix plugin install <source> [--dry-run|--yes] [--replace] [--name N] [--link] [--json]`
use std::process::ExitCode;

use super::common::{fail, home, usage};
use crate::cli::output;
use crate::install::plan::{InstallResponse, PluginAction};
use crate::install::progress::Progress;
use crate::install::source::{SourceContext, classify};
use crate::install::{InstallRequest, execute_install};

#[derive(Debug, clap::Args)]
#[command(
    about = "Plan or install a plugin package",
    long_about = "Plan or install a plugin package from a local directory (reasonix-plugin.json, \
                  .codex-plugin/plugin.json or .claude-plugin/plugin.json), an exported .zip, \
                  or GitHub (git:github.com/<owner>/<repo>, https://github.com/<owner>/<repo>, \
                  …/tree/<ref>[/<dir>]).\n\n\
                  Installing is two steps: --dry-run prints the plan as JSON and writes \
                  nothing; --yes installs exactly that plan (the copied bytes are re-hashed \
                  before installing and before the registry is published). Without either \
                  flag nothing is written.\n\n\
                  On a terminal the result is a readable summary. When stdout is not a \
                  terminal (a script), or with --json, stdout carries the install_source JSON \
                  (one line; failures have ok:false, errorCode and error) and the summary goes \
                  to stderr unless --json is given.\n\n\
                  Environment: REASONIX_HOME (default ~/.reasonix) is where packages are \
                  installed; REASONIX_GITHUB_BASE=<base> clones https://github.com/<o>/<r> \
                  from <base>/<o>/<r>.git instead (a mirror, or file:///path for tests)."
)]
pub struct InstallArgs {
    /// Local directory, .zip archive, or GitHub source.
    pub source: String,
    /// Plan and validate without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Apply: required for any install that writes files.
    #[arg(long)]
    pub yes: bool,
    /// Allow replacing an installed plugin with the same name.
    #[arg(long)]
    pub replace: bool,
    /// Install under this name instead of the manifest's.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Link a local directory instead of copying it (mutable, no content pin).
    #[arg(long)]
    pub link: bool,
    /// Refuse to apply unless the plan has this planId (from --dry-run).
    #[arg(long, value_name = "PLAN_ID")]
    pub plan_id: Option<String>,
    /// Refuse to apply unless the material has this contentDigest (from --dry-run).
    #[arg(long, value_name = "DIGEST")]
    pub expect_digest: Option<String>,
    /// Print the JSON response even on a terminal (no summary, no progress).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: InstallArgs) -> ExitCode {
    let ctx = SourceContext::from_env();
    // A person on a terminal reads a summary; a script (stdout not a
    // terminal) or --json gets the install_source JSON, as upstream prints it.
    let json = args.json || !output::stdout_is_terminal();
    if !args.dry_run && !args.yes {
        // Say what is wrong with the source before asking for --yes.
        if let Err(e) = classify(&args.source, &ctx) {
            return fail("install", &e, json);
        }
        return usage(
            "install",
            "plugin install writes files; re-run with --yes to apply, or --dry-run to preview",
            json,
        );
    }
    let home = match home() {
        Ok(h) => h,
        Err(e) => return fail("install", &e, json),
    };
    let req = InstallRequest {
        source: args.source.clone(),
        // Like upstream, a blank --name means "use the manifest's name".
        name: args
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from),
        replace: args.replace,
        link: args.link,
        apply: !args.dry_run,
        plan_id: args.plan_id.clone(),
        expect_digest: args.expect_digest.clone(),
    };
    let progress = Progress::for_terminal(args.json);
    match execute_install(&home, &ctx, &req, &progress) {
        Ok(resp) => {
            if json {
                output::raw_line(&resp.to_json());
                if !args.json {
                    output::note(&summary(&resp));
                }
            } else {
                output::text(&summary(&resp));
            }
            if resp.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(super::common::EXIT_FAILED)
            }
        }
        Err(e) => fail("install", &e, json),
    }
}

fn counts_line(a: &PluginAction) -> String {
    format!(
        "{} skills, {} commands, {} prompts, {} agents, {} hooks, {} MCP servers, {} themes{}",
        a.skill_count,
        a.command_count,
        a.prompt_count,
        a.agent_count,
        a.hook_count,
        a.tool_count,
        a.theme_count,
        if a.mod_preview.is_some() {
            ", 1 mod"
        } else {
            ""
        }
    )
}

/// A readable account of the response, ending with what to do next.
pub fn summary(resp: &InstallResponse) -> String {
    let mut out = String::new();
    let verb = match resp.status.as_str() {
        "planned" => "plan",
        "done" => "installed",
        other => other,
    };
    for a in &resp.actions {
        let version = if a.version.is_empty() {
            "-"
        } else {
            &a.version
        };
        out.push_str(&format!(
            "{verb}: plugin {} {version} ({}, {} mode) from {}\n",
            a.name, a.manifest_kind, a.mode, a.source
        ));
        out.push_str(&format!("  target: {}\n", a.target));
        out.push_str(&format!("  risk: {}\n", a.risk_level));
        for r in &a.risk_reasons {
            out.push_str(&format!("    - {r}\n"));
        }
        out.push_str(&format!("  capabilities: {}\n", counts_line(a)));
        out.push_str(&format!("  compatibility: {}\n", a.compatibility));
        for s in &a.skipped_capabilities {
            out.push_str(&format!("    skipped {}: {}\n", s.capability, s.reason));
        }
        if let Some(rt) = &a.runtime {
            out.push_str(&super::show::full_trust_block(rt, "  "));
        }
        if let Some(preview) = &a.mod_preview {
            out.push_str(&super::show::mod_block(preview, "  "));
        }
        if !a.commit.is_empty() {
            out.push_str(&format!("  commit: {}\n", a.commit));
        }
        if !a.tree_digest.is_empty() {
            out.push_str(&format!("  treeDigest: {}\n", a.tree_digest));
        }
        if !a.error.is_empty() {
            out.push_str(&format!("  error: {} [{}]\n", a.error, a.error_code));
            out.push_str(&format!("  next: {}\n", a.next));
        }
    }
    for w in &resp.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if !resp.error.is_empty() {
        out.push_str(&format!("error: {}\n", resp.error));
    }
    if !resp.content_digest.is_empty() {
        out.push_str(&format!("contentDigest: {}\n", resp.content_digest));
    }
    if !resp.plan_id.is_empty() {
        out.push_str(&format!("planId: {}\n", resp.plan_id));
    }
    match resp.status.as_str() {
        "planned" => {
            let name = resp.actions.first().map(|a| a.name.as_str()).unwrap_or("");
            out.push_str(&format!(
                "next: review the plan, then run `reasonix plugin install {} --yes --plan-id {}` to install exactly it{}\n",
                shell_word(&resp.source),
                resp.plan_id,
                if name.is_empty() { String::new() } else { format!(" (then `reasonix plugin show {name}`)") }
            ));
        }
        "done" => {
            for a in &resp.actions {
                out.push_str(&format!(
                    "next: `reasonix plugin show {0}` to see what it adds, `reasonix plugin doctor {0}` to check it\n",
                    a.name
                ));
            }
        }
        _ => {
            if !resp.next.is_empty() {
                out.push_str(&format!("next: {}\n", resp.next));
            }
        }
    }
    out
}

fn shell_word(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-:~@+=".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
