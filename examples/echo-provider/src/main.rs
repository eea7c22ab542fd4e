//! echo-provider: a model provider the host can stream from, selected with
//! `reasonix dev turn --model plugin/echo-provider/echo/echo-1`. It answers
//! with the last user message, one word per text chunk, then a usage chunk
//! (words counted as tokens) and `done`. The SDK numbers the chunks, sends
//! them after the open answer and ends the stream.

use reasonix_extension_sdk::prelude::*;
use reasonix_extension_sdk::protocol::types::ProviderRole;

/// The provider part of the model ref `plugin/echo-provider/echo/echo-1`.
const PROVIDER_REF: &str = "plugin/echo-provider/echo";
const MODEL: &str = "echo-1";

fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// The chunks answering `request`.
pub fn respond(
    request: &ProviderRequest,
) -> Vec<reasonix_extension_sdk::protocol::types::ProviderChunk> {
    let last_user = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Some(ProviderRole::User))
        .and_then(|m| m.content.as_deref())
        .unwrap_or("");
    let prompt_tokens: u64 = request
        .messages
        .iter()
        .filter_map(|m| m.content.as_deref())
        .map(words)
        .sum();
    let answer = if last_user.trim().is_empty() {
        "(nothing to echo)".to_owned()
    } else {
        last_user.trim().to_owned()
    };
    let mut chunks: Vec<_> = answer
        .split_whitespace()
        .enumerate()
        .map(|(i, w)| {
            chunk::text(if i == 0 {
                w.to_owned()
            } else {
                format!(" {w}")
            })
        })
        .collect();
    chunks.push(chunk::usage(prompt_tokens, words(&answer)));
    chunks.push(chunk::done());
    chunks
}

struct EchoProvider;

impl Extension for EchoProvider {
    fn initialize(&self, _init: &InitializeParams) -> Result<Declaration, Error> {
        Ok(
            Declaration::new("echo-provider", env!("CARGO_PKG_VERSION")).provider(
                ProviderDescriptor {
                    reference: PROVIDER_REF.to_owned(),
                    display_name: Some("Echo".to_owned()),
                    model: Some(MODEL.to_owned()),
                    context_window: Some(8192),
                    tools: Some(false),
                    reasoning: Some(false),
                    ..ProviderDescriptor::default()
                },
            ),
        )
    }

    fn open_stream(&self, _ctx: &Context, request: StreamRequest) -> Result<ChunkStream, Error> {
        if request.provider_ref != PROVIDER_REF {
            return Err(Error::failed(format!(
                "unknown provider {}",
                request.provider_ref
            )));
        }
        if let Some(model) = request.model.as_deref().filter(|m| *m != MODEL) {
            return Err(Error::failed(format!("unknown model {model}")));
        }
        Ok(Box::new(respond(&request.request).into_iter()))
    }
}

fn main() -> std::process::ExitCode {
    reasonix_extension_sdk::run_stdio(EchoProvider)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reasonix_extension_sdk::protocol::types::{ChunkType, ProviderMessage};

    fn message(role: ProviderRole, content: &str) -> ProviderMessage {
        ProviderMessage {
            role: Some(role),
            content: Some(content.to_owned()),
            ..ProviderMessage::default()
        }
    }

    #[test]
    fn echoes_the_last_user_message_with_usage() {
        let request = ProviderRequest {
            messages: vec![
                message(ProviderRole::System, "be brief"),
                message(ProviderRole::User, "hello  there world"),
            ],
            tools: Vec::new(),
            temperature: None,
            max_tokens: 100,
            response_format: None,
        };
        let chunks = respond(&request);
        let text: String = chunks.iter().filter_map(|c| c.text.clone()).collect();
        assert_eq!(text, "hello there world");
        let usage = chunks[chunks.len() - 2].usage.clone().unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.total_tokens
            ),
            (5, 3, 8)
        );
        assert_eq!(chunks.last().unwrap().chunk_type, ChunkType::Done);
    }
}
