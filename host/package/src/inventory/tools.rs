//! Claude tool names and their Reasonix equivalents.
//!
//! The table is the one the hook runner uses in the other direction (see the
//! host's `hooks::tools`); MCP tools share the `mcp__<server>__<tool>`
//! convention in both systems and pass through unchanged.

/// Reasonix tool for a Claude tool name (current and legacy spellings).
pub fn reasonix_tool_for_claude(name: &str) -> Option<&'static str> {
    Some(match name {
        "Bash" => "bash",
        // Claude's Read reads notebooks too; NotebookRead is its legacy name.
        "Read" | "NotebookRead" => "read_file",
        "Write" => "write_file",
        "Edit" => "edit_file",
        "MultiEdit" => "multi_edit",
        "Glob" => "glob",
        "Grep" => "grep",
        "WebFetch" => "web_fetch",
        "AskUserQuestion" => "ask",
        "Skill" => "run_skill",
        "TodoWrite" => "todo_write",
        "NotebookEdit" => "notebook_edit",
        "TaskOutput" | "BashOutput" => "bash_output",
        "TaskStop" | "KillShell" => "kill_shell",
        "Agent" | "Task" => "task",
        _ => return None,
    })
}

/// Result of mapping one agent `tools` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolMapping {
    Mapped(String),
    /// A Claude tool with no Reasonix equivalent.
    Unmapped(String),
}

/// Map one `tools:` entry. `Bash(git add:*)` keeps its argument pattern;
/// `mcp__server__tool` and `mcp__server__*` are already Reasonix names;
/// names that are already Reasonix tool names are kept.
pub fn map_agent_tool(entry: &str) -> ToolMapping {
    let entry = entry.trim();
    if entry.starts_with("mcp__") || entry == "*" {
        return ToolMapping::Mapped(entry.to_owned());
    }
    let (base, suffix) = match entry.find('(') {
        Some(i) if entry.ends_with(')') => (&entry[..i], &entry[i..]),
        _ => (entry, ""),
    };
    if let Some(mapped) = reasonix_tool_for_claude(base.trim()) {
        return ToolMapping::Mapped(format!("{mapped}{suffix}"));
    }
    if is_reasonix_tool(base.trim()) {
        return ToolMapping::Mapped(entry.to_owned());
    }
    ToolMapping::Unmapped(entry.to_owned())
}

/// Reasonix's own tool names that a Claude-format file may already use.
pub fn is_reasonix_tool(name: &str) -> bool {
    matches!(
        name,
        "bash"
            | "read_file"
            | "write_file"
            | "edit_file"
            | "multi_edit"
            | "glob"
            | "grep"
            | "web_fetch"
            | "ask"
            | "run_skill"
            | "read_only_skill"
            | "todo_write"
            | "notebook_edit"
            | "bash_output"
            | "wait"
            | "kill_shell"
    ) || crate::inventory::tools::SUBAGENT_TOOLS.contains(&name)
}

/// Every Reasonix tool that spawns a subagent; all map to Claude's `Agent`.
pub const SUBAGENT_TOOLS: &[&str] = &[
    "task",
    "read_only_task",
    "parallel_tasks",
    "explore",
    "research",
    "review",
    "security_review",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_current_legacy_mcp_and_patterns() {
        let m = |s| map_agent_tool(s);
        assert_eq!(m("Bash"), ToolMapping::Mapped("bash".into()));
        assert_eq!(m("Write"), ToolMapping::Mapped("write_file".into()));
        assert_eq!(m("KillShell"), ToolMapping::Mapped("kill_shell".into()));
        assert_eq!(m("BashOutput"), ToolMapping::Mapped("bash_output".into()));
        assert_eq!(m("Task"), ToolMapping::Mapped("task".into()));
        assert_eq!(
            m("mcp__github__create_issue"),
            ToolMapping::Mapped("mcp__github__create_issue".into())
        );
        assert_eq!(
            m("mcp__github__*"),
            ToolMapping::Mapped("mcp__github__*".into())
        );
        assert_eq!(
            m("Bash(git add:*)"),
            ToolMapping::Mapped("bash(git add:*)".into())
        );
        assert_eq!(m("read_file"), ToolMapping::Mapped("read_file".into()));
        assert_eq!(m("WebSearch"), ToolMapping::Unmapped("WebSearch".into()));
        assert_eq!(m("LS"), ToolMapping::Unmapped("LS".into()));
    }
}
