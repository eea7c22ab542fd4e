//! `doctor capabilities --live`: start the MCP servers a session would
//! start (declared `auto_start`, or enabled with `reasonix mcp enable`),
//! four at a time, each within the probe's timeout, and fold what they
//! answered into the static report: `runtime_status`, the tool list, and
//! `mcp.start_failed` / `mcp.no_tools` / `mcp.runtime_unavailable` issues.
//! Every process started here is gone when the probe returns.

use std::collections::BTreeMap;
use std::time::Duration;

use reasonix_sidecar::Guard;

use super::display::PathDisplay;
use super::{Issue, McpToolInfo, Options, Report, Severity, finish};
use crate::mcp::{HubOptions, McpHub};

/// How many servers start at once (a.11).
const CONCURRENCY: usize = 4;

/// Probe the report's MCP servers live; `report.live` becomes `true`.
pub async fn probe(report: &mut Report, opts: &Options, timeout: Duration) {
    report.live = true;
    let root = std::path::absolute(&opts.root).unwrap_or_else(|_| opts.root.clone());
    let disp = PathDisplay::new(&root, opts.user_home.as_deref());
    let mut options = HubOptions::new(Guard::CurrentExe);
    options.connect_timeout = timeout;
    let hub = match McpHub::from_home(&opts.home, options) {
        Ok(hub) => hub,
        Err(error) => {
            report.issues.push(Issue {
                severity: Severity::Error,
                code: "mcp.runtime_unavailable",
                subsystem: "mcp",
                name: String::new(),
                source: String::new(),
                message: disp.text(&format!("the MCP servers cannot be read: {error}")),
                remediation: "Run `reasonix plugin list` and `reasonix doctor` for the package \
                              at fault."
                    .into(),
                settings_tab: Some("mcp"),
            });
            finish(report);
            return;
        }
    };
    let enabled: BTreeMap<String, bool> = hub
        .servers()
        .into_iter()
        .map(|s| (s.id, s.enabled))
        .collect();
    // (index in the report, hub id) of every server to start.
    let mut starts = Vec::new();
    for (i, info) in report.mcp.servers.iter_mut().enumerate() {
        let id = info
            .effective
            .then(|| hub.id_of(&info.package_owner, &info.name))
            .flatten();
        match id {
            Some(id)
                if info.start_intent == "automatic"
                    || enabled.get(&id).copied().unwrap_or(false) =>
            {
                starts.push((i, id))
            }
            _ => info.runtime_status = "disabled".into(),
        }
    }
    let mut issues = Vec::new();
    for batch in starts.chunks(CONCURRENCY) {
        let results = futures::future::join_all(batch.iter().map(|(_, id)| hub.connect(id))).await;
        for ((i, _), result) in batch.iter().zip(results) {
            let info = &mut report.mcp.servers[*i];
            let issue = |severity, code, message: String, remediation: &str| Issue {
                severity,
                code,
                subsystem: "mcp",
                name: info.name.clone(),
                source: info.source_path.clone(),
                message: disp.text(&message),
                remediation: remediation.into(),
                settings_tab: Some("mcp"),
            };
            match result {
                Ok(tools) => {
                    if tools.is_empty() {
                        issues.push(issue(
                            Severity::Warning,
                            "mcp.no_tools",
                            format!("MCP server {:?} started but offers no tools", info.name),
                            "Check the server's configuration; a server without tools adds \
                             nothing to a session.",
                        ));
                    }
                    info.runtime_status = "connected".into();
                    info.tool_count = Some(tools.len());
                    info.tools = tools
                        .iter()
                        .map(|t| McpToolInfo {
                            name: disp.text(&t.tool),
                            read_only_hint: t.read_only_hint == Some(true),
                            destructive_hint: t.destructive_hint == Some(true),
                        })
                        .collect();
                }
                Err(error) => {
                    issues.push(issue(
                        Severity::Error,
                        "mcp.start_failed",
                        format!("MCP server {:?} did not start: {error}", info.name),
                        "Run `reasonix mcp tools <id>` for the whole error; check the \
                         command, URL and the environment variables it names.",
                    ));
                    info.runtime_status = "failed".into();
                    info.error = disp.text(&error.to_string());
                }
            }
        }
    }
    hub.close().await;
    report.issues.extend(issues);
    finish(report);
}
