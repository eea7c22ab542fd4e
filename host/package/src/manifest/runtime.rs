//! The `runtime` block: a code extension's sidecar process, exec form only.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use super::issue::{IssueKind, Issues};
use super::points::{self, SlotError};
use super::reader::{index, strict_object};

/// The variable a runtime command and its args may use to address files
/// inside the installed package. Expanded textually, never by a shell.
pub const PLUGIN_ROOT_VAR: &str = "${REASONIX_PLUGIN_ROOT}";

/// Lowest and highest interceptor priority.
pub const PRIORITY_RANGE: (i64, i64) = (-1000, 1000);

/// The most memory a manifest may grant a wasm runtime
/// (`runtime.sandbox.memoryMiB`); the host's default is 64 MiB.
pub const SANDBOX_MEMORY_CEILING_MIB: u32 = 512;

/// The most disk a manifest may grant a wasm runtime's data directory
/// (`runtime.sandbox.dataMiB`); the host's default is 64 MiB.
pub const SANDBOX_DATA_CEILING_MIB: u32 = 1024;

/// The host's ceiling for a runtime's intercept budget (60 s).
pub const MAX_TIMEOUT_MILLIS: u64 =
    reasonix_protocol::points::MAX_INTERCEPT_TIMEOUT.as_millis() as u64;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeSpec {
    /// As written (trimmed), `${REASONIX_PLUGIN_ROOT}` unexpanded.
    pub command: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    pub priority: i32,
    /// As declared; 0 means the host's per-point defaults. See [`Self::timeout_millis`].
    #[serde(rename = "timeoutMillis", skip_serializing_if = "is_zero")]
    pub declared_timeout_millis: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intercepts: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Limits of a wasm component runtime; only valid when `command`
    /// names a `.wasm` file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSpec>,
}

/// `runtime.sandbox`: what a sandboxed (wasm) runtime may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxSpec {
    /// Linear memory of one instance, 1..=[`SANDBOX_MEMORY_CEILING_MIB`].
    #[serde(rename = "memoryMiB", skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u32>,
    /// Bytes its data directory may hold, 1..=[`SANDBOX_DATA_CEILING_MIB`].
    #[serde(rename = "dataMiB", skip_serializing_if = "Option::is_none")]
    pub data_mib: Option<u32>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A model-callable tool the runtime serves.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON schema whose `type` is `object`.
    pub input_schema: Value,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// A runtime command ready to spawn directly (no shell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandedCommand {
    pub program: String,
    pub args: Vec<String>,
}

impl RuntimeSpec {
    /// Whether `command` names a wasm component (`.wasm`, any case), which
    /// the host runs sandboxed instead of as a process.
    pub fn is_wasm(&self) -> bool {
        Path::new(&self.command)
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("wasm"))
    }

    /// The intercept budget the host applies: `None` for the per-point
    /// defaults, otherwise the declared value clamped to 60 s.
    pub fn timeout_millis(&self) -> Option<u64> {
        (self.declared_timeout_millis > 0)
            .then(|| self.declared_timeout_millis.min(MAX_TIMEOUT_MILLIS))
    }

    /// Whether the runtime declares the given capability family.
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.iter().any(|c| c == name)
    }

    /// Substitute `${REASONIX_PLUGIN_ROOT}` with `root` in the command and
    /// every arg. A command that starts with the variable is joined onto the
    /// root as a path; elsewhere the substitution is plain text.
    pub fn expand_runtime_command(&self, root: &Path) -> ExpandedCommand {
        let root_text = root.to_string_lossy();
        let program = match self.command.strip_prefix(PLUGIN_ROOT_VAR) {
            Some(rest) => {
                let rest = rest.trim_start_matches(['/', '\\']);
                if rest.is_empty() {
                    root_text.to_string()
                } else {
                    root.join(rest).to_string_lossy().into_owned()
                }
            }
            None => self.command.replace(PLUGIN_ROOT_VAR, &root_text),
        };
        let args = self
            .args
            .iter()
            .map(|a| a.replace(PLUGIN_ROOT_VAR, &root_text))
            .collect();
        ExpandedCommand { program, args }
    }
}

const FIELDS: [&str; 11] = [
    "command",
    "args",
    "env",
    "required",
    "priority",
    "timeoutMillis",
    "intercepts",
    "replaces",
    "capabilities",
    "tools",
    "sandbox",
];

const SANDBOX_FIELDS: [&str; 2] = ["memoryMiB", "dataMiB"];

const TOOL_FIELDS: [&str; 4] = ["name", "description", "inputSchema", "readOnly"];

pub(crate) fn read_runtime(issues: &mut Issues, value: &Value) -> Option<RuntimeSpec> {
    let path = "runtime";
    let obj = strict_object(issues, value, path, &FIELDS)?;
    let command = obj
        .str(issues, "command")
        .unwrap_or_default()
        .trim()
        .to_string();
    if command.is_empty() {
        issues.push(
            "runtime.command",
            IssueKind::Required,
            "runtime.command is required when a runtime is declared",
        );
    } else if let Some(shell) = points::shell_named_by(&command) {
        issues.push(
            "runtime.command",
            IssueKind::InvalidValue,
            format!(
                "runtime.command \"{command}\" names the shell \"{shell}\"; runtimes are exec form only and never run through a shell"
            ),
        );
    }
    let args = obj.str_list(issues, "args").unwrap_or_default();
    for (i, arg) in args.iter().enumerate() {
        if arg.trim().is_empty() {
            let at = index("runtime.args", i);
            issues.push(
                &at,
                IssueKind::InvalidValue,
                format!("{at} must not be empty"),
            );
        }
    }
    let env = obj.str_map(issues, "env").unwrap_or_default();
    if env.keys().any(|k| k.trim().is_empty()) {
        issues.push(
            "runtime.env",
            IssueKind::InvalidValue,
            "runtime.env contains an empty key",
        );
    }
    let required = obj.bool(issues, "required").unwrap_or(false);
    let priority = obj.int(issues, "priority").unwrap_or(0);
    let (lo, hi) = PRIORITY_RANGE;
    if priority < lo || priority > hi {
        issues.push(
            "runtime.priority",
            IssueKind::InvalidValue,
            format!("runtime.priority {priority} out of range [{lo}, {hi}]"),
        );
    }
    let timeout = obj.int(issues, "timeoutMillis").unwrap_or(0);
    if timeout < 0 {
        issues.push(
            "runtime.timeoutMillis",
            IssueKind::InvalidValue,
            format!("runtime.timeoutMillis {timeout} must not be negative"),
        );
    }
    let intercepts = obj.str_list(issues, "intercepts").unwrap_or_default();
    for (i, point) in intercepts.iter().enumerate() {
        if !points::is_hook_point(point) {
            issues.push(
                &index("runtime.intercepts", i),
                IssueKind::InvalidValue,
                format!("runtime.intercepts: unknown interceptor point \"{point}\""),
            );
        }
    }
    let replaces = obj.str_list(issues, "replaces").unwrap_or_default();
    for (i, slot) in replaces.iter().enumerate() {
        let message = match points::check_slot(slot) {
            Ok(()) => continue,
            Err(SlotError::Unknown) => format!("runtime.replaces: unknown slot \"{slot}\""),
            Err(SlotError::BadTool) => format!(
                "runtime.replaces: invalid tool slot \"{slot}\": empty or whitespace tool name"
            ),
            Err(SlotError::BadProvider) => format!(
                "runtime.replaces: invalid provider slot \"{slot}\": want provider:<name>/<model> or provider:plugin/<plugin>/<name>/<model>"
            ),
        };
        issues.push(
            &index("runtime.replaces", i),
            IssueKind::InvalidValue,
            message,
        );
    }
    let capabilities = obj.str_list(issues, "capabilities").unwrap_or_default();
    for (i, cap) in capabilities.iter().enumerate() {
        if !points::RUNTIME_CAPABILITIES.contains(&cap.as_str()) {
            issues.push(
                &index("runtime.capabilities", i),
                IssueKind::InvalidValue,
                format!(
                    "runtime.capabilities: unknown capability \"{cap}\" (want one of: {})",
                    points::RUNTIME_CAPABILITIES.join(", ")
                ),
            );
        }
    }
    let tools = read_tools(issues, &obj, &capabilities);
    let sandbox = obj
        .value("sandbox")
        .and_then(|value| read_sandbox(issues, value, &command));
    Some(RuntimeSpec {
        command,
        args,
        env,
        required,
        priority: priority.clamp(lo, hi) as i32,
        declared_timeout_millis: timeout.max(0) as u64,
        intercepts,
        replaces,
        capabilities,
        tools,
        sandbox,
    })
}

fn read_sandbox(issues: &mut Issues, value: &Value, command: &str) -> Option<SandboxSpec> {
    let path = "runtime.sandbox";
    let obj = strict_object(issues, value, path, &SANDBOX_FIELDS)?;
    let is_wasm = Path::new(command)
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("wasm"));
    if !is_wasm {
        issues.push(
            path,
            IssueKind::InvalidValue,
            "runtime.sandbox applies only to a wasm runtime (runtime.command naming a .wasm component); a native sidecar is not sandboxed",
        );
    }
    let mut mib = |field: &str, ceiling: u32| {
        obj.int(issues, field).and_then(|mib| {
            let max = i64::from(ceiling);
            if (1..=max).contains(&mib) {
                u32::try_from(mib).ok()
            } else {
                issues.push(
                    &format!("{path}.{field}"),
                    IssueKind::InvalidValue,
                    format!("{path}.{field} {mib} out of range [1, {max}] (the host ceiling)"),
                );
                None
            }
        })
    };
    let memory_mib = mib("memoryMiB", SANDBOX_MEMORY_CEILING_MIB);
    let data_mib = mib("dataMiB", SANDBOX_DATA_CEILING_MIB);
    Some(SandboxSpec {
        memory_mib,
        data_mib,
    })
}

fn read_tools(
    issues: &mut Issues,
    obj: &super::reader::Obj<'_>,
    capabilities: &[String],
) -> Vec<ToolSpec> {
    let Some(items) = obj.array(issues, "tools") else {
        return Vec::new();
    };
    if !items.is_empty() && !capabilities.iter().any(|c| c == "tools") {
        issues.push(
            "runtime.tools",
            IssueKind::InvalidValue,
            "runtime.tools needs \"tools\" in runtime.capabilities",
        );
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = index("runtime.tools", i);
        let Some(tool) = strict_object(issues, item, &at, &TOOL_FIELDS) else {
            continue;
        };
        let name = tool.str(issues, "name").unwrap_or_default();
        if !valid_tool_name(&name) {
            issues.push(
                &format!("{at}.name"),
                IssueKind::InvalidValue,
                format!("{at}.name \"{name}\" must be 1-48 letters, digits, _ or -"),
            );
        } else if !seen.insert(name.clone()) {
            issues.push(
                &format!("{at}.name"),
                IssueKind::Duplicate,
                format!("runtime.tools: \"{name}\" is declared twice"),
            );
        }
        let description = tool.trimmed(issues, "description").unwrap_or_default();
        if description.is_empty() {
            issues.push(
                &format!("{at}.description"),
                IssueKind::Required,
                format!("{at}.description is required"),
            );
        }
        let input_schema = tool.value("inputSchema").cloned().unwrap_or(Value::Null);
        let object_schema = input_schema
            .as_object()
            .is_some_and(|s| s.get("type").and_then(Value::as_str) == Some("object"));
        if !object_schema {
            issues.push(
                &format!("{at}.inputSchema"),
                IssueKind::InvalidValue,
                format!("{at}.inputSchema must be a JSON schema with \"type\": \"object\""),
            );
        }
        let read_only = tool.bool(issues, "readOnly").unwrap_or(false);
        out.push(ToolSpec {
            name,
            description,
            input_schema,
            read_only,
        });
    }
    out
}

/// 1–48 ASCII letters, digits, `_` or `-`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=48).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
