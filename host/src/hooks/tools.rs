//! Tool names and tool inputs as a Claude-authored hook expects to see them.
//!
//! Reasonix calls its tools `bash`, `write_file`, …; Claude calls them `Bash`,
//! `Write`, …. An imported hook's matcher is written against Claude names
//! (current and legacy), and its script reads Claude's `tool_input` keys, so
//! both are translated at dispatch time.

use std::path::Path;

use reasonix_package::inventory::tools::{SUBAGENT_TOOLS, reasonix_tool_for_claude};
use serde_json::{Map, Value};

/// The current Claude name for a Reasonix tool; Reasonix-only and MCP tools
/// pass through unchanged.
pub fn claude_tool_name(reasonix: &str) -> &str {
    match reasonix {
        "bash" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "multi_edit" => "MultiEdit",
        "glob" => "Glob",
        "grep" => "Grep",
        "web_fetch" => "WebFetch",
        "ask" => "AskUserQuestion",
        "run_skill" | "read_only_skill" => "Skill",
        "todo_write" => "TodoWrite",
        "notebook_edit" => "NotebookEdit",
        "bash_output" | "wait" => "TaskOutput",
        "kill_shell" => "TaskStop",
        t if SUBAGENT_TOOLS.contains(&t) => "Agent",
        other => other,
    }
}

/// Every name a Claude matcher may have been written against for a Reasonix
/// tool: the current name plus legacy ones (`Task`, `BashOutput`, `KillShell`).
pub fn claude_match_names(reasonix: &str) -> Vec<&str> {
    match reasonix {
        t if SUBAGENT_TOOLS.contains(&t) => vec!["Agent", "Task"],
        "bash_output" | "wait" => vec!["TaskOutput", "BashOutput"],
        "kill_shell" => vec!["TaskStop", "KillShell"],
        other => vec![claude_tool_name(other)],
    }
}

/// A payload may name the tool either way; hooks are dispatched on the
/// Reasonix name.
pub fn to_reasonix_tool_name(name: &str) -> String {
    match reasonix_tool_for_claude(name) {
        Some(mapped) => mapped.to_owned(),
        None => name.to_owned(),
    }
}

/// Keys Reasonix names differently from Claude, per tool.
fn key_renames(tool: &str) -> &'static [(&'static str, &'static str)] {
    match tool {
        "read_file" | "write_file" | "edit_file" | "multi_edit" => &[("path", "file_path")],
        "notebook_edit" => &[("path", "notebook_path")],
        "run_skill" | "read_only_skill" => &[("name", "skill"), ("arguments", "args")],
        "bash_output" | "kill_shell" => &[("job_id", "task_id")],
        "explore" | "locate" | "research" | "review" | "security_review" => &[("task", "prompt")],
        _ => &[],
    }
}

/// Stable operation labels for Agent's required `description` when the
/// Reasonix call carried none.
fn default_agent_description(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "task" => "Run a subagent task",
        "read_only_task" => "Run a read-only subagent task",
        "parallel_tasks" => "Run parallel subagent tasks",
        "explore" => "Explore the codebase",
        "research" => "Research a question",
        "review" => "Review changes",
        "security_review" => "Review changes for security issues",
        _ => return None,
    })
}

/// Adapt Reasonix tool arguments to the `tool_input` Claude's schema has:
/// renamed keys, absolute file paths (against `cwd`), and the fields Claude
/// requires that Reasonix treats as optional. Non-objects pass through.
pub fn claude_tool_input(tool: &str, args: &Value, cwd: &str) -> Value {
    let Value::Object(original) = args else {
        return args.clone();
    };
    let mut obj = original.clone();
    for (from, to) in key_renames(tool) {
        if let Some(v) = obj.remove(*from) {
            obj.insert((*to).to_owned(), v);
        }
    }
    match tool {
        "notebook_edit" if !obj.contains_key("new_source") => {
            let alias = ["content", "source", "new_string"]
                .iter()
                .find_map(|k| {
                    obj.get(*k)
                        .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                })
                .cloned();
            obj.insert(
                "new_source".into(),
                alias.unwrap_or(Value::String(String::new())),
            );
        }
        "bash_output" => {
            obj.insert("block".into(), Value::Bool(false));
            obj.insert("timeout".into(), Value::from(0));
        }
        "wait" => {
            obj.insert("block".into(), Value::Bool(true));
            if let Some(Value::Array(ids)) = obj.get("job_ids")
                && let [Value::String(only)] = ids.as_slice()
            {
                let only = only.clone();
                obj.insert("task_id".into(), Value::String(only));
            }
            // An unbounded wait omits Claude's optional timeout rather than
            // claiming a 0 ms budget.
            if let Some(secs) = obj.get("timeout_seconds").and_then(Value::as_i64)
                && secs > 0
                && let Some(ms) = secs.checked_mul(1000)
            {
                obj.insert("timeout".into(), Value::from(ms));
            }
        }
        "ask" => fill_ask_defaults(&mut obj),
        "todo_write" => fill_todo_defaults(&mut obj),
        "parallel_tasks" => {
            let prompts: Vec<String> = obj
                .get("tasks")
                .and_then(Value::as_array)
                .map(|tasks| {
                    tasks
                        .iter()
                        .filter_map(|t| t.get("prompt").and_then(Value::as_str))
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if !prompts.is_empty() {
                obj.insert("prompt".into(), Value::String(prompts.join("\n\n")));
            }
        }
        _ => {}
    }
    if let Some(label) = default_agent_description(tool) {
        let has_prompt = obj
            .get("prompt")
            .and_then(Value::as_str)
            .is_some_and(|p| !p.trim().is_empty());
        let has_description = obj
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.trim().is_empty());
        if has_prompt && !has_description {
            obj.insert("description".into(), Value::String(label.into()));
        }
    }
    if !cwd.is_empty() {
        for key in ["file_path", "notebook_path"] {
            if let Some(Value::String(p)) = obj.get(key)
                && !p.is_empty()
                && !Path::new(p).is_absolute()
            {
                let abs = Path::new(cwd).join(p).to_string_lossy().into_owned();
                obj.insert(key.into(), Value::String(abs));
            }
        }
    }
    Value::Object(obj)
}

fn fill_ask_defaults(obj: &mut Map<String, Value>) {
    let Some(Value::Array(questions)) = obj.get_mut("questions") else {
        return;
    };
    for q in questions.iter_mut() {
        let Value::Object(q) = q else { continue };
        q.entry("multiSelect").or_insert(Value::Bool(false));
        if let Some(Value::Array(options)) = q.get_mut("options") {
            for o in options.iter_mut() {
                if let Value::Object(o) = o {
                    o.entry("description")
                        .or_insert(Value::String(String::new()));
                }
            }
        }
    }
}

fn fill_todo_defaults(obj: &mut Map<String, Value>) {
    let Some(Value::Array(todos)) = obj.get_mut("todos") else {
        return;
    };
    for t in todos.iter_mut() {
        let Value::Object(t) = t else { continue };
        let has_active = t
            .get("activeForm")
            .and_then(Value::as_str)
            .is_some_and(|a| !a.trim().is_empty());
        if has_active {
            continue;
        }
        if let Some(content) = t
            .get("content")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
        {
            let content = content.to_owned();
            t.insert("activeForm".into(), Value::String(content));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_both_ways() {
        assert_eq!(claude_tool_name("bash"), "Bash");
        assert_eq!(claude_tool_name("write_file"), "Write");
        for t in SUBAGENT_TOOLS {
            assert_eq!(claude_tool_name(t), "Agent");
            assert_eq!(claude_match_names(t), ["Agent", "Task"]);
        }
        assert_eq!(
            claude_match_names("bash_output"),
            ["TaskOutput", "BashOutput"]
        );
        assert_eq!(claude_match_names("kill_shell"), ["TaskStop", "KillShell"]);
        assert_eq!(claude_tool_name("mcp__gh__x"), "mcp__gh__x");
        assert_eq!(to_reasonix_tool_name("Bash"), "bash");
        assert_eq!(to_reasonix_tool_name("Write"), "write_file");
        assert_eq!(to_reasonix_tool_name("code_index"), "code_index");
    }

    #[test]
    fn inputs_are_translated() {
        let got = claude_tool_input(
            "write_file",
            &json!({"path": "src/a.rs", "content": "x"}),
            "/ws",
        );
        assert_eq!(got, json!({"file_path": "/ws/src/a.rs", "content": "x"}));
        let got = claude_tool_input("read_file", &json!({"path": "/abs"}), "/ws");
        assert_eq!(got, json!({"file_path": "/abs"}));
        let got = claude_tool_input(
            "notebook_edit",
            &json!({"path": "n.ipynb", "content": "c"}),
            "/ws",
        );
        assert_eq!(got["notebook_path"], "/ws/n.ipynb");
        assert_eq!(got["new_source"], "c");
        let got = claude_tool_input("run_skill", &json!({"name": "s", "arguments": "a"}), "");
        assert_eq!(got, json!({"skill": "s", "args": "a"}));
        let got = claude_tool_input("kill_shell", &json!({"job_id": "j1"}), "");
        assert_eq!(got, json!({"task_id": "j1"}));
        let got = claude_tool_input("bash_output", &json!({"job_id": "j1"}), "");
        assert_eq!(got, json!({"task_id": "j1", "block": false, "timeout": 0}));
        let got = claude_tool_input(
            "wait",
            &json!({"job_ids": ["j1"], "timeout_seconds": 2}),
            "",
        );
        assert_eq!(got["task_id"], "j1");
        assert_eq!(got["timeout"], 2000);
        let got = claude_tool_input("wait", &json!({"job_ids": ["a", "b"]}), "");
        assert!(got.get("task_id").is_none() && got.get("timeout").is_none());
        let got = claude_tool_input("explore", &json!({"task": "find x"}), "");
        assert_eq!(
            got,
            json!({"prompt": "find x", "description": "Explore the codebase"})
        );
        let got = claude_tool_input(
            "parallel_tasks",
            &json!({"tasks": [{"prompt": "a"}, {"prompt": " b "}]}),
            "",
        );
        assert_eq!(got["prompt"], "a\n\nb");
        assert!(got["tasks"].is_array());
        let got = claude_tool_input(
            "ask",
            &json!({"questions": [{"question": "q", "options": [{"label": "l"}]}]}),
            "",
        );
        assert_eq!(got["questions"][0]["multiSelect"], false);
        assert_eq!(got["questions"][0]["options"][0]["description"], "");
        let got = claude_tool_input("todo_write", &json!({"todos": [{"content": "Do it"}]}), "");
        assert_eq!(got["todos"][0]["activeForm"], "Do it");
        let got = claude_tool_input("bash", &json!({"command": "ls"}), "/ws");
        assert_eq!(got, json!({"command": "ls"}));
        assert_eq!(
            claude_tool_input("bash", &json!("raw"), "/ws"),
            json!("raw")
        );
    }
}
