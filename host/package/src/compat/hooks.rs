//! Importing Claude-format hook files (`hooks/hooks.json`,
//! `.claude/settings.json`, …) as Reasonix hooks, with every gap reported.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::{Map, Value};

use super::json;
use crate::{Hook, SkippedCapability};

/// Claude hook events Reasonix runs.
pub const CLAUDE_HOOK_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Stop",
    "StopFailure",
    "SessionStart",
    "SessionEnd",
    "SubagentStop",
    "Notification",
    "PreCompact",
];

/// Events whose `matcher` selects tool names; other events ignore it.
pub const TOOL_SCOPED_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
];

/// Claude tools Reasonix never passes to a hook, so a matcher naming only
/// these can never fire.
const NEVER_FIRING_TOOLS: &[&str] = &["WebSearch", "ExitPlanMode", "EnterPlanMode", "Artifact"];

/// Hooks collected per event, deduplicated by invocation identity.
#[derive(Debug, Default)]
pub struct HookSet {
    by_event: BTreeMap<String, Vec<Hook>>,
}

impl HookSet {
    /// Add `hook` unless an identical invocation is already present.
    /// `description`, `source` and `context_file` are not part of the identity.
    pub fn add(&mut self, hook: Hook) {
        let list = self.by_event.entry(hook.event.clone()).or_default();
        if !list.iter().any(|h| same_invocation(h, &hook)) {
            list.push(hook);
        }
    }

    /// Hooks sorted by event, then declaration order.
    pub fn into_vec(self) -> Vec<Hook> {
        self.by_event.into_values().flatten().collect()
    }
}

fn same_invocation(a: &Hook, b: &Hook) -> bool {
    a.context_file.is_some() == b.context_file.is_some()
        && a.context_file == b.context_file
        && a.matcher == b.matcher
        && a.command == b.command
        && a.args == b.args
        && a.shell == b.shell
        && a.shell_command == b.shell_command
        && a.payload_format == b.payload_format
        && a.is_async == b.is_async
        && a.timeout_ms == b.timeout_ms
        && a.cwd == b.cwd
        && a.env == b.env
}

/// Import one Claude hook document (already parsed) declared in `rel`.
/// Returns `true` when the document had a `hooks` object at all.
pub fn import_document(
    doc: &Value,
    rel: &str,
    hooks: &mut HookSet,
    skipped: &mut Vec<SkippedCapability>,
) -> bool {
    let issue = |reason: String| SkippedCapability {
        capability: "hooks".into(),
        path: Some(rel.to_owned()),
        reason,
    };
    let Value::Object(top) = doc else {
        skipped.push(issue("hook file must be a JSON object".into()));
        return false;
    };
    let events = match json::get(top, "hooks") {
        None | Some(Value::Null) => return false,
        Some(Value::Object(events)) => events,
        Some(_) => {
            skipped.push(issue("\"hooks\" must be an object of events".into()));
            return false;
        }
    };
    let mut gap_web_fetch = false;
    let mut gap_notebook = false;
    let mut gap_task_output = false;
    for (event_raw, blocks) in events {
        let event = event_raw.trim();
        if !CLAUDE_HOOK_EVENTS.contains(&event) {
            skipped.push(issue(format!("unsupported Claude hook event {event:?}")));
            continue;
        }
        let Value::Array(blocks) = blocks else {
            skipped.push(issue(format!(
                "hooks.{event} must be an array of matcher blocks"
            )));
            continue;
        };
        let tool_scoped = TOOL_SCOPED_EVENTS.contains(&event);
        for (bi, block) in blocks.iter().enumerate() {
            let Value::Object(block) = block else {
                skipped.push(issue(format!("hooks.{event}[{bi}] must be an object")));
                continue;
            };
            let matcher = match block_matcher(block) {
                Ok(m) => m,
                Err(e) => {
                    skipped.push(issue(format!("hooks.{event}[{bi}]: {e}")));
                    continue;
                }
            };
            let items = match json::get(block, "hooks") {
                None | Some(Value::Null) => continue,
                Some(Value::Array(items)) => items,
                Some(_) => {
                    skipped.push(issue(format!("hooks.{event}[{bi}].hooks must be an array")));
                    continue;
                }
            };
            for (ii, item) in items.iter().enumerate() {
                let at = format!("hooks.{event}[{bi}].hooks[{ii}]");
                let Value::Object(item) = item else {
                    skipped.push(issue(format!("{at} must be an object")));
                    continue;
                };
                match import_item(event, &matcher, item, rel) {
                    Ok(None) => {}
                    Ok(Some((hook, notes))) => {
                        skipped.extend(notes.into_iter().map(issue));
                        if tool_scoped {
                            let m = matcher.as_deref().unwrap_or("");
                            gap_web_fetch |= matcher_includes(m, "WebFetch");
                            gap_notebook |= matcher_includes(m, "NotebookEdit");
                            gap_task_output |= matcher_includes(m, "TaskOutput")
                                || matcher_includes(m, "BashOutput");
                        }
                        hooks.add(hook);
                    }
                    Err(reason) => skipped.push(issue(reason.replace("{at}", &at))),
                }
            }
        }
    }
    // Structural gaps are reported once per file, not once per hook.
    for (hit, reason) in [
        (
            gap_web_fetch,
            "a tool-scoped hook matcher includes Claude WebFetch, but Reasonix web_fetch cannot supply Claude's required \"prompt\" input; such hooks receive only \"url\" for that tool",
        ),
        (
            gap_notebook,
            "a tool-scoped hook matcher includes Claude NotebookEdit, but Reasonix notebook_edit may target a cell by cell_number, which cannot be converted to Claude's opaque cell_id; such hooks receive cell_number as an extra field for those calls",
        ),
        (
            gap_task_output,
            "a tool-scoped hook matcher includes Claude TaskOutput, but Reasonix wait may cover multiple or all background jobs in one call, which cannot be represented by Claude's single task_id; such hooks receive job_ids as an extra field for those calls",
        ),
    ] {
        if hit {
            skipped.push(issue(reason.to_owned()));
        }
    }
    true
}

fn block_matcher(block: &Map<String, Value>) -> Result<Option<String>, String> {
    let matcher = json::get_str(block, "matcher")?
        .map(str::trim)
        .unwrap_or("");
    let matcher = if matcher.is_empty() {
        json::get_str(block, "match")?.map(str::trim).unwrap_or("")
    } else {
        matcher
    };
    Ok((!matcher.is_empty()).then(|| matcher.to_owned()))
}

/// One hook item → the hook plus partial-compatibility notes, `Ok(None)` for
/// an item that is silently ignored (empty command), `Err` for a skipped item.
fn import_item(
    event: &str,
    matcher: &Option<String>,
    item: &Map<String, Value>,
    rel: &str,
) -> Result<Option<(Hook, Vec<String>)>, String> {
    let field = |e: String| format!("{{at}}: {e}");
    let kind = json::get_str(item, "type")
        .map_err(field)?
        .unwrap_or("")
        .trim();
    if !kind.is_empty() && kind != "command" {
        return Err(format!("unsupported hook type {kind:?} for {event}"));
    }
    let command = json::get_str(item, "command").map_err(field)?.unwrap_or("");
    if command.trim().is_empty() {
        return Ok(None);
    }
    let args = json::get_string_list(item, "args").map_err(field)?;
    let shell_raw = json::get_str(item, "shell").map_err(field)?.unwrap_or("");
    let shell = shell_raw.trim().to_ascii_lowercase();
    if args.is_none() && !matches!(shell.as_str(), "" | "bash" | "powershell") {
        return Err(format!(
            "{event} hook {command:?} uses unsupported shell {shell_raw:?}"
        ));
    }
    let is_async = json::get_bool(item, "async").map_err(field)?;
    let async_rewake = json::get_bool(item, "asyncRewake").map_err(field)?;
    let condition = json::get_str(item, "if")
        .map_err(field)?
        .unwrap_or("")
        .trim();
    let env = json::get_string_map(item, "env").map_err(field)?;
    let timeout_ms = timeout_ms(item).map_err(field)?;
    let description = json::get_str(item, "description")
        .map_err(field)?
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("Claude-compatible hook from {rel}"));

    let mut notes = Vec::new();
    if !condition.is_empty() {
        notes.push(format!(
            "{event} hook {command:?} has a conditional \"if\": {condition:?} that Reasonix does not evaluate — it runs unconditionally instead of only for the matching case"
        ));
    }
    if async_rewake {
        let mode = if is_async {
            "async, but without a wake-on-exit-2 callback"
        } else {
            "synchronously"
        };
        notes.push(format!(
            "{event} hook {command:?} uses \"asyncRewake\", which Reasonix does not support — it runs {mode} instead"
        ));
    }
    if event == "Stop" || event == "SubagentStop" {
        notes.push(format!(
            "{event} hook {command:?} cannot block the turn the way Claude's contract does — Reasonix's {event} hook is observation-only and never forces the loop to continue"
        ));
    }
    if TOOL_SCOPED_EVENTS.contains(&event) && matcher_never_fires(matcher.as_deref().unwrap_or(""))
    {
        notes.push(format!(
            "{event} hook {command:?} matcher {:?} names a Claude tool Reasonix has no equivalent for, so it will never fire",
            matcher.as_deref().unwrap_or("")
        ));
    }
    let exec = args.is_some();
    Ok(Some((
        Hook {
            event: event.to_owned(),
            matcher: matcher.clone(),
            command: Some(command.to_owned()),
            args,
            context_file: None,
            shell: (!exec && !shell.is_empty()).then_some(shell),
            shell_command: !exec,
            is_async,
            payload_format: Some("claude".into()),
            description: Some(description),
            timeout_ms,
            cwd: Some(".".into()),
            env,
            source: rel.to_owned(),
        },
        notes,
    )))
}

/// `timeout` in seconds → milliseconds; zero/negative means "no timeout".
fn timeout_ms(item: &Map<String, Value>) -> Result<Option<u64>, String> {
    match json::get(item, "timeout") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let seconds = n.as_f64().unwrap_or(0.0);
            if seconds <= 0.0 || !seconds.is_finite() {
                Ok(None)
            } else {
                Ok(Some((seconds * 1000.0).round().min(u64::MAX as f64) as u64))
            }
        }
        Some(_) => Err("timeout must be a number of seconds".into()),
    }
}

/// Whether a matcher is a `|`-list of plain tool names that Reasonix never emits.
fn matcher_never_fires(matcher: &str) -> bool {
    let matcher = matcher.trim();
    if matcher.is_empty() || matcher == "*" {
        return false;
    }
    matcher.split('|').all(|part| {
        let part = part.trim();
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
            && NEVER_FIRING_TOOLS.contains(&part)
    })
}

/// Whether a matcher (anchored regex; empty and `*` match everything) selects `tool`.
pub fn matcher_includes(matcher: &str, tool: &str) -> bool {
    let matcher = matcher.trim();
    if matcher.is_empty() || matcher == "*" {
        return true;
    }
    Regex::new(&format!("^(?:{matcher})$")).is_ok_and(|re| re.is_match(tool))
}
