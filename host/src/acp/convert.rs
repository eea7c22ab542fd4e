//! The pure mappings between the session and ACP's schema: prompt content
//! to input text, the slash menu to available commands, the models to the
//! model selector, tool calls and results, the transcript replayed by
//! `session/load`, reload outcomes and session errors.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, ContentChunk, EmbeddedResourceResource,
    SessionConfigKind, SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelect,
    SessionConfigSelectOption, SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UnstructuredCommandInput,
};
use agent_client_protocol::{Error, ErrorCode};
use reasonix_protocol::types::{ProviderMessage, ProviderRole};
use serde_json::{Value, json};

use super::vendor::{DegradedPlugin, ReloadAnswer, ReloadState};
use crate::runtime::host::ReloadOutcome;
use crate::runtime::redaction::plain_text;
use crate::session::text::reload_text;
use crate::session::{ECHO_MODEL, MenuEntry, SessionError, ToolRecord};

/// The id of the model selector among the session's config options.
pub const MODEL_OPTION: &str = "model";

/// The input text of a `session/prompt`: text blocks as they are, resource
/// links as Markdown links, embedded text resources as fenced blocks naming
/// their URI. Images, audio and binary resources are refused (the agent
/// does not advertise them).
pub fn prompt_text(blocks: &[ContentBlock]) -> Result<String, String> {
    let mut text = String::new();
    for (i, block) in blocks.iter().enumerate() {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!("[{}]({})", link.name, link.uri));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => {
                    if !text.is_empty() && !text.ends_with('\n') {
                        text.push('\n');
                    }
                    text.push_str(&format!("{}:\n```\n{}\n```\n", contents.uri, contents.text));
                }
                _ => {
                    return Err(format!(
                        "prompt[{i}]: binary resources are not supported; embed text or link the file"
                    ));
                }
            },
            ContentBlock::Image(_) => {
                return Err(format!(
                    "prompt[{i}]: images are not supported (promptCapabilities.image is false)"
                ));
            }
            ContentBlock::Audio(_) => {
                return Err(format!(
                    "prompt[{i}]: audio is not supported (promptCapabilities.audio is false)"
                ));
            }
            _ => return Err(format!("prompt[{i}]: this content type is not supported")),
        }
    }
    if text.trim().is_empty() {
        return Err("the prompt has no text".to_string());
    }
    Ok(text)
}

/// The slash menu as ACP available commands: names without the slash (the
/// client shows `/<name>` and sends the prompt `/<name> <input>`).
pub fn available_commands(menu: &[MenuEntry]) -> Vec<AvailableCommand> {
    menu.iter()
        .map(|entry| {
            let name = entry.command.trim_start_matches('/').to_string();
            let description = entry
                .description
                .clone()
                .unwrap_or_else(|| match &entry.plugin {
                    Some(plugin) => format!("{} from {plugin}", entry.kind),
                    None => entry.kind.to_string(),
                });
            let mut meta = serde_json::Map::new();
            meta.insert(
                "reasonix.io".into(),
                json!({"kind": entry.kind, "plugin": entry.plugin}),
            );
            AvailableCommand::new(name, description)
                .input(entry.argument_hint.clone().map(|hint| {
                    AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint))
                }))
                .meta(meta)
        })
        .collect()
}

/// The session's config options: the model selector (`echo` and every
/// `plugin/<plugin>/<provider>/<model>` ref).
pub fn config_options(models: &[String], current: &str) -> Vec<SessionConfigOption> {
    let options: Vec<SessionConfigSelectOption> = models
        .iter()
        .map(|model| {
            let description = if model == ECHO_MODEL {
                "built in: answers with the input".to_string()
            } else {
                match model.split('/').nth(1) {
                    Some(plugin) => format!("from the plugin {plugin}"),
                    None => "from a plugin".to_string(),
                }
            };
            SessionConfigSelectOption::new(model.clone(), model.clone()).description(description)
        })
        .collect();
    vec![
        SessionConfigOption::new(
            MODEL_OPTION,
            "Model",
            SessionConfigKind::Select(SessionConfigSelect::new(current.to_string(), options)),
        )
        .category(SessionConfigOptionCategory::Model)
        .description("The model of the next turn".to_string()),
    ]
}

/// What kind of tool a host tool is (for the client's icons).
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "read_file" | "list_dir" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        _ => ToolKind::Other,
    }
}

fn arguments_value(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(plain_text(arguments)))
}

/// The file a host tool call touches, inside the workspace.
fn locations(name: &str, arguments: &Value, workspace: &Path) -> Vec<ToolCallLocation> {
    if !matches!(tool_kind(name), ToolKind::Read | ToolKind::Edit) {
        return Vec::new();
    }
    arguments
        .get("path")
        .and_then(Value::as_str)
        .map(|path| vec![ToolCallLocation::new(workspace.join(path))])
        .unwrap_or_default()
}

/// A tool call as it starts.
pub fn tool_call(call_id: &str, name: &str, arguments: &str, workspace: &Path) -> ToolCall {
    let input = arguments_value(arguments);
    ToolCall::new(call_id.to_string(), plain_text(name))
        .kind(tool_kind(name))
        .status(ToolCallStatus::InProgress)
        .locations(locations(name, &input, workspace))
        .raw_input(input)
}

/// A tool call's outcome: completed when it ran without error, failed when
/// it was refused, blocked or errored (the result says why).
pub fn tool_result(record: &ToolRecord) -> ToolCallUpdate {
    let ok = record.decision == "allow" && !record.is_error;
    ToolCallUpdate::new(
        record.call_id.clone(),
        ToolCallUpdateFields::new()
            .status(if ok {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            })
            .content(vec![ToolCallContent::from(plain_text(&record.result))])
            .raw_output(json!({
                "decision": record.decision,
                "hostDecision": record.host_decision,
                "decidedBy": record.decided_by,
                "isError": record.is_error,
            })),
    )
}

/// The transcript as `session/load` replays it: user and assistant
/// messages as chunks, the assistant's tool calls, and their results.
/// System messages (a compaction summary) are not part of the conversation
/// a client shows.
pub fn replay(transcript: &[ProviderMessage], workspace: &Path) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    for message in transcript {
        let text = message
            .content
            .as_deref()
            .map(plain_text)
            .unwrap_or_default();
        match message.role {
            Some(ProviderRole::User) if !text.is_empty() => {
                updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                    ContentBlock::from(text),
                )));
            }
            Some(ProviderRole::Assistant) => {
                if let Some(reasoning) = message
                    .reasoning_content
                    .as_deref()
                    .filter(|r| !r.is_empty())
                {
                    updates.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                        ContentBlock::from(plain_text(reasoning)),
                    )));
                }
                if !text.is_empty() {
                    updates.push(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                        ContentBlock::from(text),
                    )));
                }
                for call in &message.tool_calls {
                    updates.push(SessionUpdate::ToolCall(tool_call(
                        &call.id,
                        &call.name,
                        &call.arguments,
                        workspace,
                    )));
                }
            }
            Some(ProviderRole::Tool) => {
                if let Some(id) = &message.tool_call_id {
                    updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        id.clone(),
                        ToolCallUpdateFields::new()
                            .status(ToolCallStatus::Completed)
                            .content(vec![ToolCallContent::from(text)]),
                    )));
                }
            }
            _ => {}
        }
    }
    updates
}

/// A reload outcome as the vendor method answers it; `serving` is the
/// generation serving when the answer is `queued`.
pub fn reload_answer(outcome: &ReloadOutcome, serving: u64) -> ReloadAnswer {
    let message = plain_text(&reload_text(outcome));
    let empty = ReloadAnswer {
        outcome: ReloadState::Queued,
        generation: serving,
        previous_generation: None,
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
        degraded: Vec::new(),
        why: None,
        message,
    };
    match outcome {
        ReloadOutcome::Queued => empty,
        ReloadOutcome::Swapped(report) => ReloadAnswer {
            outcome: ReloadState::Applied,
            generation: report.to_generation,
            previous_generation: Some(report.from_generation),
            added: report.added.clone(),
            removed: report.removed.clone(),
            changed: report.changed.clone(),
            degraded: report
                .degraded
                .iter()
                .map(|d| DegradedPlugin {
                    plugin: d.plugin.clone(),
                    why: plain_text(&d.why),
                })
                .collect(),
            ..empty
        },
        ReloadOutcome::Failed { kept, why } => ReloadAnswer {
            outcome: ReloadState::Failed,
            generation: *kept,
            why: Some(plain_text(why)),
            ..empty
        },
    }
}

/// A session error as a JSON-RPC error: the message for people, the stable
/// code in `data.errorCode`.
pub fn session_error(error: &SessionError) -> Error {
    let code = match error {
        SessionError::UnknownCommand { .. }
        | SessionError::Ambiguous { .. }
        | SessionError::Usage(_)
        | SessionError::UnknownModel { .. }
        | SessionError::Workspace(_) => ErrorCode::INVALID_PARAMS,
        SessionError::Busy | SessionError::Closed => ErrorCode::INVALID_REQUEST,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    Error::new(code, plain_text(&error.to_string())).data(json!({"errorCode": error.code()}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextResourceContents,
    };

    #[test]
    fn prompts_become_text_and_unsupported_content_is_refused() {
        let blocks = vec![
            ContentBlock::from("Fix "),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///w/main.rs")),
            ContentBlock::from(" please"),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///w/lib.rs",
                )),
            )),
        ];
        assert_eq!(
            prompt_text(&blocks).unwrap(),
            "Fix [main.rs](file:///w/main.rs) please\nfile:///w/lib.rs:\n```\nfn main() {}\n```\n"
        );
        let image = vec![ContentBlock::Image(ImageContent::new("AAAA", "image/png"))];
        assert!(
            prompt_text(&image)
                .unwrap_err()
                .contains("prompt[0]: images")
        );
        assert!(prompt_text(&[ContentBlock::from("  ")]).is_err());
        assert!(prompt_text(&[]).is_err());
    }

    #[test]
    fn commands_drop_the_slash_and_keep_their_hint() {
        let menu = vec![
            MenuEntry {
                command: "/status-ui:reset".into(),
                kind: "action",
                description: Some("Reset the input counters".into()),
                argument_hint: None,
                plugin: Some("status-ui".into()),
            },
            MenuEntry {
                command: "/starter:review".into(),
                kind: "command",
                description: None,
                argument_hint: Some("<file>".into()),
                plugin: Some("starter".into()),
            },
        ];
        let commands = serde_json::to_value(available_commands(&menu)).unwrap();
        assert_eq!(commands[0]["name"], "status-ui:reset");
        assert_eq!(commands[0]["description"], "Reset the input counters");
        assert!(commands[0].get("input").is_none());
        assert_eq!(commands[0]["_meta"]["reasonix.io"]["kind"], "action");
        assert_eq!(commands[1]["description"], "command from starter");
        assert_eq!(commands[1]["input"]["hint"], "<file>");
    }

    #[test]
    fn the_model_selector_lists_every_model() {
        let models = vec![
            ECHO_MODEL.to_string(),
            "plugin/echo-provider/echo/echo-1".to_string(),
        ];
        let options = serde_json::to_value(config_options(&models, ECHO_MODEL)).unwrap();
        assert_eq!(options[0]["id"], MODEL_OPTION);
        assert_eq!(options[0]["category"], "model");
        assert_eq!(options[0]["type"], "select");
        assert_eq!(options[0]["currentValue"], ECHO_MODEL);
        assert_eq!(
            options[0]["options"][1]["value"],
            "plugin/echo-provider/echo/echo-1"
        );
        assert_eq!(
            options[0]["options"][1]["description"],
            "from the plugin echo-provider"
        );
    }

    #[test]
    fn tool_calls_and_results_map_to_statuses() {
        let call = serde_json::to_value(tool_call(
            "c1",
            "write_file",
            r#"{"path":"a.txt","content":"x"}"#,
            Path::new("/w"),
        ))
        .unwrap();
        assert_eq!(call["toolCallId"], "c1");
        assert_eq!(call["kind"], "edit");
        assert_eq!(call["status"], "in_progress");
        assert_eq!(call["locations"][0]["path"], "/w/a.txt");
        assert_eq!(call["rawInput"]["content"], "x");
        let mut record = ToolRecord {
            call_id: "c1".into(),
            name: "write_file".into(),
            arguments: "{}".into(),
            kind: "host",
            host_decision: "ask",
            decision: "deny",
            decided_by: Some("the user".into()),
            result: "denied\u{1b}[31m".into(),
            is_error: true,
        };
        let update = serde_json::to_value(tool_result(&record)).unwrap();
        assert_eq!(update["status"], "failed");
        assert_eq!(update["content"][0]["content"]["text"], "denied[31m");
        record.decision = "allow";
        record.is_error = false;
        let update = serde_json::to_value(tool_result(&record)).unwrap();
        assert_eq!(update["status"], "completed");
    }

    #[test]
    fn the_transcript_replays_as_chunks_and_tool_calls() {
        let message = |role, content: &str| ProviderMessage {
            role: Some(role),
            content: Some(content.into()),
            ..ProviderMessage::default()
        };
        let mut assistant = message(ProviderRole::Assistant, "echo: hi");
        assistant.tool_calls = vec![reasonix_protocol::types::ProviderToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"n.txt"}"#.into(),
            thought_signature: None,
        }];
        let mut tool = message(ProviderRole::Tool, "hello");
        tool.tool_call_id = Some("c1".into());
        let transcript = vec![
            message(ProviderRole::System, "Summary"),
            message(ProviderRole::User, "hi"),
            assistant,
            tool,
        ];
        let updates = serde_json::to_value(replay(&transcript, Path::new("/w"))).unwrap();
        let kinds: Vec<&str> = updates
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update"
            ]
        );
        assert_eq!(updates[0]["content"]["text"], "hi");
        assert_eq!(updates[3]["status"], "completed");
    }

    #[test]
    fn reload_outcomes_answer_applied_queued_or_failed() {
        let queued = reload_answer(&ReloadOutcome::Queued, 3);
        assert_eq!(
            (queued.outcome, queued.generation),
            (ReloadState::Queued, 3)
        );
        let failed = reload_answer(
            &ReloadOutcome::Failed {
                kept: 3,
                why: "bad\u{7}".into(),
            },
            3,
        );
        assert_eq!(failed.outcome, ReloadState::Failed);
        assert_eq!(failed.why.as_deref(), Some("bad"));
        assert!(failed.message.contains("generation 3 keeps serving"));
    }

    #[test]
    fn session_errors_carry_their_stable_code() {
        let error = session_error(&SessionError::Busy);
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(error.data.unwrap()["errorCode"], "session.busy");
    }
}
