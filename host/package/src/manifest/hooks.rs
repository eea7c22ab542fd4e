//! Hook entries (`hooks.<Event>[i]`, `contributes.hooks.<Event>[i]`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::issue::{IssueKind, Issues};
use super::reader::{child, index, json_type, strict_object};
use crate::paths::clean_relative;

/// One hook as declared, normalised (trimmed; `shell` lowercased; a `shell`
/// without `args` implies shell form).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookEntry {
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `Some` whenever `args` was written, even as `[]`: that selects exec form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_file: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shell_command: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    #[serde(rename = "async", skip_serializing_if = "std::ops::Not::not")]
    pub is_async: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload_format: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

impl HookEntry {
    /// What the entry runs: the merge identity within one event.
    pub fn identity(&self) -> (Option<&str>, Option<&str>) {
        (self.command.as_deref(), self.context_file.as_deref())
    }
}

/// The events a Reasonix session runs hooks for. A manifest may declare
/// others (a newer event, a typo); they are kept but never run, and the
/// package reader warns about each.
pub const HOOK_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Stop",
    "StopFailure",
    "PostLLMCall",
    "SessionStart",
    "SessionEnd",
    "SubagentStart",
    "SubagentStop",
    "Notification",
    "PreCompact",
];

/// Shells a shell-form hook may name (`""` meaning the default).
pub const HOOK_SHELLS: [&str; 6] = ["", "auto", "bash", "powershell", "pwsh", "cmd"];

const FIELDS: [&str; 12] = [
    "match",
    "command",
    "args",
    "contextFile",
    "shellCommand",
    "shell",
    "async",
    "payloadFormat",
    "description",
    "timeout",
    "cwd",
    "env",
];

/// Read a hooks map (`event → [entry]`) at `path`.
pub(crate) fn read_hook_map(
    issues: &mut Issues,
    map: &Map<String, Value>,
    path: &str,
) -> BTreeMap<String, Vec<HookEntry>> {
    let mut out: BTreeMap<String, Vec<HookEntry>> = BTreeMap::new();
    for (event, entries) in map {
        let event_path = child(path, event);
        let name = event.trim();
        if name.is_empty() {
            issues.push(
                &event_path,
                IssueKind::Required,
                format!("{path}: hook event is required"),
            );
        }
        let items = match entries {
            Value::Null => continue,
            Value::Array(items) => items,
            other => {
                issues.push(
                    &event_path,
                    IssueKind::WrongType,
                    format!(
                        "{event_path} must be an array of hook entries (got {})",
                        json_type(other)
                    ),
                );
                continue;
            }
        };
        for (i, item) in items.iter().enumerate() {
            if let Some(hook) = read_hook(issues, item, &index(&event_path, i)) {
                out.entry(name.to_string()).or_default().push(hook);
            }
        }
    }
    out
}

fn read_hook(issues: &mut Issues, value: &Value, path: &str) -> Option<HookEntry> {
    let obj = strict_object(issues, value, path, &FIELDS)?;
    let args_present = obj.has("args");
    let args = obj.str_list(issues, "args");
    let timeout = obj.int(issues, "timeout");
    if let Some(t) = timeout
        && t < 0
    {
        issues.push(
            &obj.at("timeout"),
            IssueKind::InvalidValue,
            format!("{path}: hook timeout {t} must not be negative"),
        );
    }
    let shell = obj
        .str(issues, "shell")
        .map(|s| s.trim().to_ascii_lowercase());
    let mut hook = HookEntry {
        matcher: obj.trimmed(issues, "match"),
        command: obj.trimmed(issues, "command"),
        args: if args_present {
            Some(args.unwrap_or_default())
        } else {
            None
        },
        context_file: obj.trimmed(issues, "contextFile"),
        shell_command: obj.bool(issues, "shellCommand").unwrap_or(false),
        shell: shell.filter(|s| !s.is_empty()),
        is_async: obj.bool(issues, "async").unwrap_or(false),
        payload_format: obj.trimmed(issues, "payloadFormat"),
        description: obj.trimmed(issues, "description"),
        timeout: timeout.and_then(|t| u64::try_from(t).ok()),
        cwd: obj.trimmed(issues, "cwd"),
        env: obj.str_map(issues, "env").unwrap_or_default(),
    };
    if hook.shell.is_some() && hook.args.is_none() {
        hook.shell_command = true;
    }
    check_hook(issues, &hook, path);
    Some(hook)
}

/// The semantic rules every hook obeys, whatever manifest kind declared it.
fn check_hook(issues: &mut Issues, hook: &HookEntry, path: &str) {
    if hook.command.is_none() && hook.context_file.is_none() {
        issues.push(
            path,
            IssueKind::Required,
            format!("{path}: hook command or contextFile is required"),
        );
    }
    if hook.args.is_none() {
        let shell = hook.shell.as_deref().unwrap_or("");
        if !HOOK_SHELLS.contains(&shell) {
            issues.push(
                &child(path, "shell"),
                IssueKind::InvalidValue,
                format!(
                    "{path}: hook shell \"{shell}\" is not supported (use auto, bash, powershell, pwsh, or cmd)"
                ),
            );
        }
    }
    if let Some(command) = &hook.command
        && !hook.shell_command
        && !Path::new(command).is_absolute()
        && let Err(e) = clean_relative(command)
    {
        issues.push(
            &child(path, "command"),
            IssueKind::PathNotRelative,
            format!("{path}: {e}"),
        );
    }
    if let Some(file) = &hook.context_file
        && let Err(e) = clean_relative(file)
    {
        issues.push(
            &child(path, "contextFile"),
            IssueKind::PathNotRelative,
            format!("{path}: {e}"),
        );
    }
    if let Some(cwd) = &hook.cwd
        && !Path::new(cwd).is_absolute()
        && let Err(e) = clean_relative(cwd)
    {
        issues.push(
            &child(path, "cwd"),
            IssueKind::PathNotRelative,
            format!("{path}: {e}"),
        );
    }
}
