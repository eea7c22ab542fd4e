//! The event payload a hook receives on stdin, in Reasonix's native shape or
//! Claude's snake_case shape for imported hooks.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::tools;

/// What happened, as the session describes it (Reasonix names).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Payload {
    pub event: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub session_id: String,
    pub cwd: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub call_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_args: Option<Value>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subject: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool_result: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub prompt: String,
    #[serde(rename = "lastAssistantText", skip_serializing_if = "String::is_empty")]
    pub last_assistant: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub turn: i64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub trigger: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub notification_type: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_interrupt: bool,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl Payload {
    /// One JSON line for stdin: native camelCase, or Claude's snake_case
    /// envelope (with `hook_event_name` and translated tool fields).
    pub fn to_stdin(&self, payload_format: Option<&str>) -> String {
        let body = if payload_format == Some("claude") {
            self.claude_json()
        } else {
            serde_json::to_value(self).unwrap_or(Value::Null)
        };
        let mut line = body.to_string();
        line.push('\n');
        line
    }

    fn claude_json(&self) -> Value {
        let tool_input = match &self.tool_args {
            Some(args) => tools::claude_tool_input(&self.tool_name, args, &self.cwd),
            None => Value::Null,
        };
        let mut out = json!({
            "hook_event_name": self.event,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "tool_name": tools::claude_tool_name(&self.tool_name),
            "tool_input": tool_input,
            "tool_response": self.claude_tool_response(),
            "prompt": self.prompt,
            "last_assistant_message": self.last_assistant,
            "source": self.source,
            "reason": self.reason,
            "notification_type": self.notification_type,
            "message": self.message,
            "trigger": self.trigger,
            "error": self.error,
            "is_interrupt": self.is_interrupt,
        });
        if !self.call_id.is_empty() {
            out["tool_use_id"] = Value::String(self.call_id.clone());
        }
        out
    }

    /// Claude's Bash response is `{stdout, stderr, interrupted}`; other tools'
    /// results pass through (as JSON when they are JSON).
    fn claude_tool_response(&self) -> Value {
        let post = self.event == "PostToolUse" || self.event == "PostToolUseFailure";
        if post && tools::claude_tool_name(&self.tool_name) == "Bash" {
            return json!({
                "stdout": self.tool_result,
                "stderr": self.error,
                "interrupted": self.is_interrupt,
            });
        }
        let trimmed = self.tool_result.trim();
        if !trimmed.is_empty()
            && let Ok(v) = serde_json::from_str::<Value>(trimmed)
        {
            return v;
        }
        Value::String(self.tool_result.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_envelope() {
        let p = Payload {
            event: "PostToolUse".into(),
            cwd: "/ws".into(),
            tool_name: "bash".into(),
            tool_args: Some(json!({"command": "git commit"})),
            tool_result: "done".into(),
            error: "warn".into(),
            ..Default::default()
        };
        let v: Value = serde_json::from_str(&p.to_stdin(Some("claude"))).unwrap();
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert_eq!(v["tool_name"], "Bash");
        assert_eq!(v["tool_input"]["command"], "git commit");
        assert_eq!(
            v["tool_response"],
            json!({"stdout": "done", "stderr": "warn", "interrupted": false})
        );
        assert!(v.get("tool_use_id").is_none());
        let native: Value = serde_json::from_str(&p.to_stdin(None)).unwrap();
        assert_eq!(native["toolName"], "bash");
        assert_eq!(native["toolArgs"]["command"], "git commit");
        assert!(native.get("sessionId").is_none());
    }

    #[test]
    fn json_results_pass_through_as_json() {
        let p = Payload {
            event: "PostToolUse".into(),
            tool_name: "read_file".into(),
            tool_result: "{\"ok\":true}".into(),
            ..Default::default()
        };
        let v: Value = serde_json::from_str(&p.to_stdin(Some("claude"))).unwrap();
        assert_eq!(v["tool_response"], json!({"ok": true}));
    }
}
