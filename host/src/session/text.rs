//! Plain-text renderings of session events and UI surfaces: the text
//! fallbacks every frontend without structured UI uses (the terminal, ACP
//! clients that do not advertise `reasonix.extensionSurface`). Every string
//! from a package or an extension is reduced to plain text here, even
//! though the session already cleaned it: rendering is the last door.

use std::fmt::Write;

use super::events::{Question, SessionEvent};
use super::report::TurnStatus;
use crate::runtime::dispatcher::{ChainStep, StepResult, StepRole};
use crate::runtime::host::ReloadOutcome;
use crate::runtime::redaction::plain_text;
use crate::runtime::ui::payloads::{RequestKind, Severity, ViewNode};
use crate::runtime::ui::{SurfaceUpdate, UiPayload};

fn severity_mark(severity: Option<Severity>) -> &'static str {
    match severity {
        Some(Severity::Warn) => "!",
        Some(Severity::Error) => "✗",
        _ => "●",
    }
}

fn progress(p: Option<f64>) -> String {
    p.map(|p| format!(" [{:.0}%]", (p.clamp(0.0, 1.0)) * 100.0))
        .unwrap_or_default()
}

/// One surface as text. Forms say how to answer them.
pub fn surface_text(update: &SurfaceUpdate) -> String {
    let t = |s: &str| plain_text(s);
    let plugin = t(&update.plugin);
    let mut out = String::new();
    match &update.payload {
        UiPayload::Status(s) => {
            let _ = write!(
                out,
                "[{plugin}] {} {}{}{}",
                severity_mark(s.severity),
                t(&s.label),
                s.detail
                    .as_deref()
                    .map(|d| format!(" — {}", t(d)))
                    .unwrap_or_default(),
                progress(s.progress)
            );
        }
        UiPayload::Card(c) => {
            let _ = writeln!(
                out,
                "[{plugin}] ┌ {}{}",
                c.title.as_deref().map(t).unwrap_or_else(|| "card".into()),
                progress(c.progress)
            );
            for body in [&c.text, &c.markdown].into_iter().flatten() {
                for line in t(body).lines() {
                    let _ = writeln!(out, "[{plugin}] │ {line}");
                }
            }
            for field in c.fields.iter().flatten() {
                let _ = writeln!(
                    out,
                    "[{plugin}] │ {}: {}",
                    t(&field.key),
                    field.value.as_deref().map(t).unwrap_or_default()
                );
            }
            for action in c.actions.iter().flatten() {
                let _ = writeln!(
                    out,
                    "[{plugin}] │ {} → /{plugin}:{}",
                    t(&action.label),
                    t(&action.action_id)
                );
            }
            out.push_str(&format!("[{plugin}] └"));
        }
        UiPayload::Notification(n) => {
            let _ = write!(
                out,
                "[{plugin}] {} {}{}",
                severity_mark(n.severity),
                t(&n.title),
                n.body
                    .as_deref()
                    .map(|b| format!(": {}", t(b)))
                    .unwrap_or_default()
            );
        }
        UiPayload::Form(f) => {
            let _ = writeln!(
                out,
                "[{plugin}] form {}{}",
                f.title
                    .as_deref()
                    .map(t)
                    .unwrap_or_else(|| t(&update.surface_id)),
                f.message
                    .as_deref()
                    .map(|m| format!(" — {}", t(m)))
                    .unwrap_or_default()
            );
            for field in &f.fields {
                let _ = writeln!(out, "[{plugin}]   {}", field_line(field));
            }
            let keys: Vec<String> = f
                .fields
                .iter()
                .map(|f| format!("{}=…", t(&f.key)))
                .collect();
            let _ = write!(
                out,
                "[{plugin}]   answer: /form {plugin}/{} {}",
                t(&update.surface_id),
                keys.join(" ")
            );
        }
        UiPayload::Panel(p) => {
            let _ = write!(
                out,
                "[{plugin}] ▌ {}{}",
                p.title.as_deref().map(t).unwrap_or_else(|| "panel".into()),
                progress(p.progress)
            );
            for line in p.text.as_deref().map(t).unwrap_or_default().lines() {
                let _ = write!(out, "\n[{plugin}] ▌ {line}");
            }
            for field in p.fields.iter().flatten() {
                let _ = write!(
                    out,
                    "\n[{plugin}] ▌ {}: {}",
                    t(&field.key),
                    field.value.as_deref().map(t).unwrap_or_default()
                );
            }
        }
        UiPayload::View(v) => {
            let _ = write!(out, "[{plugin}] view {}", t(&update.surface_id));
            view_lines(&v.body, 1, &plugin, &mut out);
        }
    }
    out
}

fn field_line(field: &crate::runtime::ui::payloads::FormField) -> String {
    let kind = match field.kind {
        RequestKind::Confirm => "yes/no".to_string(),
        RequestKind::Input => "text".to_string(),
        RequestKind::Select | RequestKind::Multiselect => {
            let options = field
                .options
                .iter()
                .flatten()
                .map(|o| plain_text(o))
                .collect::<Vec<_>>()
                .join(" | ");
            if field.kind == RequestKind::Multiselect {
                format!("any of: {options}")
            } else {
                format!("one of: {options}")
            }
        }
    };
    format!(
        "{}{} ({kind}){}",
        plain_text(&field.key),
        field
            .label
            .as_deref()
            .map(|l| format!(" “{}”", plain_text(l)))
            .unwrap_or_default(),
        if field.required == Some(true) {
            " required"
        } else {
            ""
        }
    )
}

fn view_lines(node: &ViewNode, depth: usize, plugin: &str, out: &mut String) {
    let text = [node.label.as_deref(), node.value.as_deref()]
        .into_iter()
        .flatten()
        .map(plain_text)
        .collect::<Vec<_>>()
        .join(": ");
    let _ = write!(
        out,
        "\n[{plugin}] {}{} {text}{}",
        "  ".repeat(depth),
        plain_text(&node.kind),
        node.action_id
            .as_deref()
            .map(|a| format!(" → /{plugin}:{}", plain_text(a)))
            .unwrap_or_default()
    );
    for child in node.children.iter().flatten() {
        view_lines(child, depth + 1, plugin, out);
    }
}

fn step_text(step: &ChainStep) -> String {
    let who = match step.role {
        StepRole::Chain => step.plugin.clone(),
        StepRole::Strategy => format!("{} (slot owner)", step.plugin),
    };
    let what = match &step.result {
        StepResult::Continued => "continue".to_string(),
        StepResult::Replaced => "replace".to_string(),
        StepResult::Blocked { reason } => format!("block: {reason}"),
        StepResult::Allowed {
            overrode_host_deny: true,
        } => "allow (overrides the host deny)".to_string(),
        StepResult::Allowed { .. } => "allow".to_string(),
        StepResult::Denied => "deny".to_string(),
        StepResult::Refused { why } => format!("allow refused: {why}"),
        StepResult::Skipped { why } => format!("skipped: {why}"),
        StepResult::Failed { why } => format!("failed: {why}"),
    };
    plain_text(&format!("{who} {what}"))
}

fn first_line(text: &str, max: usize) -> String {
    let line = plain_text(text.lines().next().unwrap_or_default());
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// The lines a terminal prints for `event` (none for events a reader does
/// not need: status refreshes, streamed deltas, closed questions).
pub fn event_lines(event: &SessionEvent) -> Vec<String> {
    match event {
        SessionEvent::Opened { status } => vec![format!(
            "session {} · generation {} · model {}{}",
            status.session_id,
            status.generation,
            status.model,
            if status.runtimes.is_empty() {
                String::new()
            } else {
                format!(" · runtimes: {}", status.runtimes.join(", "))
            }
        )],
        SessionEvent::UserMessage { text } => vec![format!("you: {}", plain_text(text))],
        SessionEvent::Context { source, text } => vec![format!(
            "context from {}: {}",
            plain_text(source),
            first_line(text, 100)
        )],
        SessionEvent::AssistantMessage { text } => {
            let text = plain_text(text);
            let mut lines = text.lines();
            let mut out = vec![format!("assistant: {}", lines.next().unwrap_or_default())];
            out.extend(lines.map(|l| format!("  {l}")));
            out
        }
        SessionEvent::Point { record } if !record.steps.is_empty() => {
            let chain = record
                .steps
                .iter()
                .map(step_text)
                .collect::<Vec<_>>()
                .join(" → ");
            vec![format!(
                "  · {}{}: {chain}{}",
                record.point,
                record
                    .tool
                    .as_deref()
                    .map(|t| format!(" [{}]", plain_text(t)))
                    .unwrap_or_default(),
                record
                    .note
                    .as_deref()
                    .map(|n| format!(" ({})", plain_text(n)))
                    .unwrap_or_default()
            )]
        }
        SessionEvent::Hook { record } if record.run.matched => {
            let verdict = serde_json::to_value(record.run.decision.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            vec![format!(
                "  · hook {} ({}): exit {} · {verdict}{}",
                record.run.event,
                plain_text(&record.plugin),
                record.run.exit_code,
                record
                    .run
                    .decision
                    .reason
                    .as_deref()
                    .map(|r| format!(": {}", first_line(r, 120)))
                    .unwrap_or_default()
            )]
        }
        SessionEvent::ToolCall {
            name, arguments, ..
        } => vec![format!(
            "  → {} {}",
            plain_text(name),
            first_line(arguments, 100)
        )],
        SessionEvent::ToolResult { record } => {
            let by = record
                .decided_by
                .as_deref()
                .map(|d| format!(" by {}", plain_text(d)))
                .unwrap_or_default();
            vec![format!(
                "  ← {} {}{by}{}: {}",
                plain_text(&record.name),
                record.decision,
                if record.is_error { " · error" } else { "" },
                first_line(&record.result, 120)
            )]
        }
        SessionEvent::Question { question, .. } => match question {
            Question::Permission {
                tool, arguments, ..
            } => vec![format!(
                "? allow {} {}",
                plain_text(tool),
                first_line(arguments, 100)
            )],
            Question::Form { plugin, form, .. } => {
                let mut out = vec![format!(
                    "? [{}] {}",
                    plain_text(plugin),
                    form.title
                        .as_deref()
                        .or(form.message.as_deref())
                        .map(plain_text)
                        .unwrap_or_else(|| "a question".to_string())
                )];
                out.extend(form.fields.iter().map(|f| format!("    {}", field_line(f))));
                out
            }
        },
        SessionEvent::Surface { update } => {
            surface_text(update).lines().map(str::to_string).collect()
        }
        SessionEvent::Warning { source, message } => vec![format!(
            "warning: {}: {}",
            plain_text(source),
            plain_text(message)
        )],
        SessionEvent::Reload { outcome } => vec![reload_text(outcome)],
        SessionEvent::CommandOutput { text, .. } => {
            plain_text(text).lines().map(str::to_string).collect()
        }
        SessionEvent::TurnEnded { status, .. } => match status {
            TurnStatus::Completed => Vec::new(),
            TurnStatus::Blocked {
                point,
                plugin,
                reason,
            } => vec![format!(
                "blocked at {point} by {}: {}",
                plain_text(plugin),
                plain_text(reason)
            )],
            TurnStatus::Failed { point, error } => {
                vec![format!("failed at {point}: {}", plain_text(error))]
            }
            TurnStatus::Cancelled => vec!["cancelled".to_string()],
        },
        _ => Vec::new(),
    }
}

/// A reload's result in one line.
pub fn reload_text(outcome: &ReloadOutcome) -> String {
    match outcome {
        ReloadOutcome::Queued => "reload queued: it runs when the turn ends".to_string(),
        ReloadOutcome::Swapped(report) => {
            let mut parts = Vec::new();
            for (label, items) in [
                ("added", &report.added),
                ("removed", &report.removed),
                ("changed", &report.changed),
            ] {
                if !items.is_empty() {
                    parts.push(format!("{label} {}", items.join(", ")));
                }
            }
            for degraded in &report.degraded {
                parts.push(format!(
                    "degraded {}: {}",
                    degraded.plugin,
                    plain_text(&degraded.why)
                ));
            }
            format!(
                "reloaded: generation {} → {}{}",
                report.from_generation,
                report.to_generation,
                if parts.is_empty() {
                    " (no change)".to_string()
                } else {
                    format!(" ({})", parts.join("; "))
                }
            )
        }
        ReloadOutcome::Failed { kept, why } => format!(
            "reload failed; generation {kept} keeps serving: {}",
            plain_text(why)
        ),
    }
}
