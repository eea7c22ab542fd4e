//! What a finished hook decided: exit codes and Claude's JSON output shapes.

use serde::Serialize;
use serde_json::Value;

/// The verdict of one hook invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Exit 0, nothing decided.
    Pass,
    /// An explicit allow (Claude PermissionRequest `decision.behavior: "allow"`).
    Allow,
    /// A tool call or permission refused (PreToolUse, PermissionRequest).
    Deny,
    /// A prompt refused (UserPromptSubmit).
    Block,
    /// Non-zero exit where it cannot gate: reported, not enforced.
    Warn,
    /// The hook could not run at all.
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Decision {
    pub fn new(verdict: Verdict, reason: Option<String>) -> Decision {
        Decision { verdict, reason }
    }
}

/// Whether exit 2 / a timeout refuses the action for this hook. Native
/// Reasonix gating events are PreToolUse and UserPromptSubmit; an imported
/// Claude PermissionRequest hook answers the permission dialog as well.
pub fn is_gating(event: &str, claude: bool) -> bool {
    event == "PreToolUse" || event == "UserPromptSubmit" || (claude && event == "PermissionRequest")
}

fn refusal(event: &str) -> Verdict {
    if event == "UserPromptSubmit" {
        Verdict::Block
    } else {
        Verdict::Deny
    }
}

/// Decide from a finished process. `stdout`/`stderr` feed the reason.
pub fn decide(
    event: &str,
    claude: bool,
    exit_code: i32,
    timed_out: bool,
    stdout: &str,
    stderr: &str,
    timeout_ms: u64,
) -> Decision {
    let gating = is_gating(event, claude);
    let text = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    if timed_out {
        // A hung hook must not hold the session hostage: the turn goes on,
        // and a gating event counts the timeout as no decision (and says so).
        let consequence = if gating {
            "counted as no decision"
        } else {
            "ignored"
        };
        return Decision::new(
            Verdict::Warn,
            Some(format!(
                "hook timed out after {timeout_ms} ms; {consequence}"
            )),
        );
    }
    if exit_code == 2 && gating {
        return Decision::new(refusal(event), text(stderr).or_else(|| text(stdout)));
    }
    if exit_code != 0 {
        return Decision::new(
            Verdict::Warn,
            text(stderr).or_else(|| Some(format!("hook exited with status {exit_code}"))),
        );
    }
    if claude && let Some(d) = claude_json_decision(event, stdout) {
        return d;
    }
    Decision::new(Verdict::Pass, None)
}

/// Claude's exit-0 JSON decisions: `hookSpecificOutput.permissionDecision`
/// ("deny") for PreToolUse, top-level `decision: "block"` for
/// UserPromptSubmit, and `hookSpecificOutput.decision.behavior`
/// ("allow"/"deny") for PermissionRequest. `ask`, `defer` and `updatedInput`
/// are not honoured.
fn claude_json_decision(event: &str, stdout: &str) -> Option<Decision> {
    if !matches!(
        event,
        "PreToolUse" | "PermissionRequest" | "UserPromptSubmit"
    ) {
        return None;
    }
    let trimmed = stdout.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    let Value::Object(out) = serde_json::from_str::<Value>(trimmed).ok()? else {
        return None;
    };
    let spec = out.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |obj: Option<&serde_json::Map<String, Value>>, key: &str| {
        obj.and_then(|o| o.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("")
            .to_owned()
    };
    if let Some(name) = spec
        .and_then(|s| s.get("hookEventName"))
        .and_then(Value::as_str)
        && !name.is_empty()
        && name != event
    {
        // Output written for another event decides nothing here.
        return None;
    }
    let reason = |s: String| Some(s).filter(|s| !s.is_empty());
    let behavior = field(
        spec.and_then(|s| s.get("decision"))
            .and_then(Value::as_object),
        "behavior",
    );
    if event == "UserPromptSubmit" && field(Some(&out), "decision").eq_ignore_ascii_case("block") {
        return Some(Decision::new(
            Verdict::Block,
            reason(field(Some(&out), "reason")),
        ));
    }
    let permission = field(spec, "permissionDecision");
    if permission.eq_ignore_ascii_case("deny") || behavior.eq_ignore_ascii_case("deny") {
        let why = field(spec, "permissionDecisionReason");
        let why = if why.is_empty() {
            field(
                spec.and_then(|s| s.get("decision"))
                    .and_then(Value::as_object),
                "message",
            )
        } else {
            why
        };
        let verdict = if event == "UserPromptSubmit" {
            Verdict::Block
        } else {
            Verdict::Deny
        };
        return Some(Decision::new(verdict, reason(why)));
    }
    if event == "PermissionRequest" && behavior.eq_ignore_ascii_case("allow") {
        return Some(Decision::new(Verdict::Allow, None));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_and_json_shapes() {
        let d =
            |event, claude, code, out: &str| decide(event, claude, code, false, out, "why", 5000);
        assert_eq!(d("PreToolUse", true, 2, "").verdict, Verdict::Deny);
        assert_eq!(d("PreToolUse", true, 2, "").reason.as_deref(), Some("why"));
        assert_eq!(d("UserPromptSubmit", false, 2, "").verdict, Verdict::Block);
        assert_eq!(d("PermissionRequest", true, 2, "").verdict, Verdict::Deny);
        assert_eq!(d("PermissionRequest", false, 2, "").verdict, Verdict::Warn);
        assert_eq!(d("PostToolUse", true, 2, "").verdict, Verdict::Warn);
        assert_eq!(d("PostToolUse", true, 0, "").verdict, Verdict::Pass);
        let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}"#;
        assert_eq!(
            d("PreToolUse", true, 0, deny),
            Decision::new(Verdict::Deny, Some("no".into()))
        );
        assert_eq!(
            d("PreToolUse", false, 0, deny).verdict,
            Verdict::Pass,
            "native hooks: exit code only"
        );
        assert_eq!(
            d("PermissionRequest", true, 0, deny).verdict,
            Verdict::Pass,
            "event name mismatch"
        );
        let ask = r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#;
        assert_eq!(d("PreToolUse", true, 0, ask).verdict, Verdict::Pass);
        let block = r#"{"decision":"block","reason":"secret"}"#;
        assert_eq!(
            d("UserPromptSubmit", true, 0, block),
            Decision::new(Verdict::Block, Some("secret".into()))
        );
        assert_eq!(d("PreToolUse", true, 0, block).verdict, Verdict::Pass);
        let allow = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;
        assert_eq!(
            d("PermissionRequest", true, 0, allow).verdict,
            Verdict::Allow
        );
        let pdeny = r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"nope"}}}"#;
        assert_eq!(
            d("PermissionRequest", true, 0, pdeny),
            Decision::new(Verdict::Deny, Some("nope".into()))
        );
        assert_eq!(d("PreToolUse", true, 0, "{not json").verdict, Verdict::Pass);
        // A timeout never refuses: the turn goes on without a decision.
        let t = decide("PreToolUse", true, -1, true, "", "", 5000);
        assert_eq!(
            t,
            Decision::new(
                Verdict::Warn,
                Some("hook timed out after 5000 ms; counted as no decision".into())
            )
        );
        assert_eq!(
            decide("Stop", true, -1, true, "", "", 10).verdict,
            Verdict::Warn
        );
    }
}
