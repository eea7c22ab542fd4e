//! The host's own tools in `reasonix dev turn`: small, real and read-only,
//! so scripted turns can exercise the tool and permission points.

use std::path::Path;

use serde_json::Value;

/// A host tool's provider-visible schema.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTool {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: &'static str,
    pub read_only: bool,
}

pub const HOST_TOOLS: &[HostTool] = &[
    HostTool {
        name: "echo",
        description: "Return the given text unchanged.",
        parameters: r#"{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}"#,
        read_only: true,
    },
    HostTool {
        name: "list_dir",
        description: "List the entries of a directory inside the workspace.",
        parameters: r#"{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}"#,
        read_only: true,
    },
];

pub fn find(name: &str) -> Option<&'static HostTool> {
    HOST_TOOLS.iter().find(|t| t.name == name)
}

/// Run a host tool: `Ok(content)` or `Err(content)` for a tool-level error.
pub fn run(name: &str, arguments: &str, workspace: &Path) -> Result<String, String> {
    let arguments: Value = if arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(arguments).map_err(|e| format!("arguments are not JSON: {e}"))?
    };
    let field = |key: &str| arguments.get(key).and_then(Value::as_str);
    match name {
        "echo" => Ok(field("text").unwrap_or_default().to_string()),
        "list_dir" => {
            let relative = field("path").unwrap_or(".");
            let relative_path = Path::new(relative);
            if relative_path.is_absolute()
                || relative_path
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                return Err(format!("path {relative:?} must stay inside the workspace"));
            }
            let dir = workspace.join(relative_path);
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .filter_map(|entry| entry.ok())
                .map(|entry| {
                    let mut name = entry.file_name().to_string_lossy().into_owned();
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        name.push('/');
                    }
                    name
                })
                .collect();
            names.sort();
            Ok(names.join("\n"))
        }
        other => Err(format!("unknown host tool `{other}`")),
    }
}
