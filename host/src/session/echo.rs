//! The built-in echo provider of `reasonix dev turn`: deterministic, offline,
//! and able to ask for the tool calls the user scripted with `--call`.

use reasonix_protocol::types::{
    ProviderMessage, ProviderRequest, ProviderRole, ProviderToolCall, ProviderUsage,
};

use reasonix_protocol::payloads::ProviderResponsePayload;

/// The model name the echo provider reports.
pub const ECHO_MODEL: &str = "echo";

/// A tool call the user asked the echo provider to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    pub name: String,
    /// JSON object text.
    pub arguments: String,
}

fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

fn content(message: &ProviderMessage) -> &str {
    message.content.as_deref().unwrap_or_default()
}

/// Answer one provider round. In the first round (no tool results in the
/// request yet) the scripted calls are requested; afterwards the answer
/// summarises the tool results.
pub fn respond(request: &ProviderRequest, calls: &[ScriptedCall]) -> ProviderResponsePayload {
    let last_user = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Some(ProviderRole::User))
        .map(content)
        .unwrap_or_default();
    let tool_results: Vec<&ProviderMessage> = request
        .messages
        .iter()
        .rev()
        .take_while(|m| m.role != Some(ProviderRole::User))
        .filter(|m| m.role == Some(ProviderRole::Tool))
        .collect();
    let (text, calls) = if tool_results.is_empty() && !calls.is_empty() {
        let calls = calls
            .iter()
            .enumerate()
            .map(|(i, call)| ProviderToolCall {
                id: format!("call_{}", i + 1),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                thought_signature: None,
            })
            .collect();
        (format!("echo: {last_user}"), calls)
    } else if tool_results.is_empty() {
        (format!("echo: {last_user}"), Vec::new())
    } else {
        let mut lines: Vec<String> = tool_results
            .iter()
            .rev()
            .map(|m| {
                let name = m.name.as_deref().unwrap_or("tool");
                let first = content(m).lines().next().unwrap_or_default();
                format!("{name} → {first}")
            })
            .collect();
        lines.insert(0, "echo: tool results:".to_string());
        (lines.join("\n"), Vec::new())
    };
    let prompt_tokens: u64 = request.messages.iter().map(|m| words(content(m))).sum();
    let completion_tokens = words(&text);
    ProviderResponsePayload {
        usage: Some(ProviderUsage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
            cache_hit_tokens: 0,
            cache_miss_tokens: prompt_tokens,
            reasoning_tokens: 0,
            finish_reason: Some(
                if calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                }
                .to_string(),
            ),
        }),
        text,
        calls,
        ..ProviderResponsePayload::default()
    }
}
