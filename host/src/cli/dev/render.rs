//! Plain-text rendering of a [`TurnReport`]: aligned columns, one line per
//! hook point, then the transcript. All extension text in the report was
//! already redacted; rendering adds no markup.

use std::fmt::Write;

use reasonix_protocol::types::ProviderRole;

use crate::runtime::dispatcher::Outcome;
use crate::runtime::redaction::plain_text;
use crate::runtime::ui::UiPayload;
use crate::session::text::step_text;
use crate::session::{TurnReport, TurnStatus};

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    plain_text(text)
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i == 0 {
                line.to_string()
            } else {
                format!("{pad}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Render the report for a terminal.
pub fn render(report: &TurnReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "reasonix dev turn · generation {} · model {} · session {}",
        report.generation, report.model, report.session_id
    );
    if report.runtimes.is_empty() {
        let _ = writeln!(
            out,
            "runtimes: none (nil dispatcher: no extension is called)"
        );
    } else {
        let list: Vec<String> = report
            .runtimes
            .iter()
            .map(|r| {
                let class = if r.required { ", required" } else { "" };
                format!("{} ({}{class})", r.plugin, r.trust.as_str())
            })
            .collect();
        let _ = writeln!(out, "runtimes: {}", list.join(", "));
    }
    for degraded in &report.degraded {
        let _ = writeln!(
            out,
            "degraded: {} was skipped: {}",
            degraded.plugin, degraded.why
        );
    }

    let _ = writeln!(out, "\nhook points");
    let labels: Vec<String> = report
        .points
        .iter()
        .map(|p| match &p.tool {
            Some(tool) => format!("{} [{tool}]", p.point),
            None => p.point.to_string(),
        })
        .collect();
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    for (point, label) in report.points.iter().zip(&labels) {
        let chain = if point.steps.is_empty() {
            "· (no extension)".to_string()
        } else {
            point
                .steps
                .iter()
                .map(step_text)
                .collect::<Vec<_>>()
                .join(" → ")
        };
        let mut line = format!("  {label:<width$}  {chain}");
        if let Outcome::Permission { plugin, allow, .. } = &point.outcome {
            let _ = write!(
                line,
                " ⇒ {} by {plugin}",
                if *allow { "allowed" } else { "denied" }
            );
        }
        if let Some(note) = &point.note {
            let _ = write!(line, "  ({})", plain_text(note));
        }
        let _ = writeln!(out, "{line}");
    }

    if !report.hooks.is_empty() {
        let _ = writeln!(out, "\nhooks");
        for hook in &report.hooks {
            let run = &hook.run;
            let tool = hook
                .tool
                .as_deref()
                .map(|t| format!(" [{t}]"))
                .unwrap_or_default();
            let result = if !run.matched {
                "not matched".to_string()
            } else {
                let verdict = serde_json::to_value(run.decision.verdict)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                format!(
                    "exit {} · {verdict}{}",
                    run.exit_code,
                    run.decision
                        .reason
                        .as_deref()
                        .map(|r| format!(": {}", indent(r, 6)))
                        .unwrap_or_default()
                )
            };
            let _ = writeln!(
                out,
                "  {}{tool}  {} #{} ({})  {result}",
                run.event, hook.plugin, run.index, run.form
            );
        }
    }

    if !report.tool_calls.is_empty() {
        let _ = writeln!(out, "\ntool calls");
        for call in &report.tool_calls {
            let marker = if call.is_error { "error" } else { "ok" };
            let by = call
                .decided_by
                .as_deref()
                .map(|d| format!(" by {}", plain_text(d)))
                .unwrap_or_default();
            let verdict = if call.decision == "blocked" {
                format!("blocked{by}")
            } else {
                format!("host {} → {}{by}", call.host_decision, call.decision)
            };
            let _ = writeln!(
                out,
                "  {} {} ({}) {verdict} · {marker}: {}",
                call.call_id,
                call.name,
                call.kind,
                indent(&call.result, 6)
            );
        }
    }

    let _ = writeln!(out, "\ntranscript");
    for message in &report.transcript {
        let role = match message.role {
            Some(ProviderRole::System) => "system",
            Some(ProviderRole::User) => "user",
            Some(ProviderRole::Assistant) => "assistant",
            Some(ProviderRole::Tool) => "tool",
            None => "?",
        };
        let mut content = message.content.clone().unwrap_or_default();
        if let Some(name) = &message.name {
            content = format!("[{name}] {content}");
        }
        let _ = writeln!(out, "  {role:<10} {}", indent(&content, 13));
        for call in &message.tool_calls {
            let _ = writeln!(
                out,
                "  {:<10} → {} {} {}",
                "",
                call.id,
                call.name,
                plain_text(&call.arguments)
            );
        }
    }

    if !report.ui.is_empty() || !report.ui_actions.is_empty() {
        let _ = writeln!(out, "\nui");
        for update in &report.ui {
            let summary = match &update.payload {
                UiPayload::Status(s) => s.label.clone(),
                UiPayload::Card(c) => c.title.clone().or(c.text.clone()).unwrap_or_default(),
                UiPayload::Form(f) => f.title.clone().unwrap_or_else(|| "form".into()),
                UiPayload::Notification(n) => n.title.clone(),
                UiPayload::Panel(p) => p.title.clone().unwrap_or_default(),
                UiPayload::View(_) => "view".to_string(),
            };
            let _ = writeln!(
                out,
                "  {}/{}  {}  {}",
                update.plugin,
                update.surface_id,
                update.kind.as_str(),
                indent(&summary, 6)
            );
        }
        for action in &report.ui_actions {
            let label = action.label.as_deref().unwrap_or_default();
            let _ = writeln!(out, "  action {}  {label}", action.command);
        }
    }

    if !report.warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings");
        for warning in &report.warnings {
            let _ = writeln!(out, "  {}: {}", warning.plugin, indent(&warning.message, 4));
        }
    }
    if !report.audit.is_empty() {
        let _ = writeln!(out, "\naudit");
        for entry in &report.audit {
            let _ = writeln!(
                out,
                "  {} ({}) answered {} over host {} at {}{}: {}",
                entry.plugin,
                entry.trust.as_str(),
                entry.extension_decision,
                entry.host_decision,
                entry.point,
                entry
                    .tool
                    .as_deref()
                    .map(|t| format!(" for {t}"))
                    .unwrap_or_default(),
                if entry.applied { "applied" } else { "refused" }
            );
        }
    }

    if let Some(summary) = &report.compacted_to {
        let _ = writeln!(out, "\ncompacted to: {}", indent(summary, 14));
    }
    let _ = writeln!(out, "\nprefix {}", report.prefix_hash);
    if let Some(path) = &report.session_file {
        let _ = writeln!(out, "session saved to {}", path.display());
    }
    match &report.status {
        TurnStatus::Completed => {
            let _ = writeln!(out, "result: completed");
        }
        TurnStatus::Blocked {
            point,
            plugin,
            reason,
        } => {
            let _ = writeln!(out, "result: blocked at {point} by {plugin}: {reason}");
        }
        TurnStatus::Failed { point, error } => {
            let _ = writeln!(out, "result: FAILED at {point}: {}", indent(error, 8));
        }
        TurnStatus::Cancelled => {
            let _ = writeln!(out, "result: cancelled");
        }
    }
    for log in &report.logs {
        let _ = writeln!(out, "log of {} (most recent last):", log.plugin);
        for line in &log.lines {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(reload) = &report.reload {
        let _ = writeln!(
            out,
            "queued reload: {}",
            serde_json::to_string(reload).unwrap_or_default()
        );
    }
    out
}
