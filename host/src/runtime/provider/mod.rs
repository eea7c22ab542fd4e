//! Extension providers: the model catalog (`plugin/<plugin>/<provider>/<model>`)
//! and the host receiver of a provider stream (spec §9).
//!
//! A crashed or unknown provider fails the request. There is never a fallback
//! to another model.

pub mod reassembly;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use reasonix_protocol::types::{
    ChunkType, ProviderChunk, ProviderDescriptor, ProviderToolCall, ProviderUsage,
};
use serde::Serialize;
use tokio::time::Instant;

use reassembly::{StreamFailure, StreamInput, StreamReassembler, StreamStatus};

use super::redaction::clean_text;
use super::{ExtensionRuntime, StreamMessage, StreamOpen, StreamReceiver};

/// The gap timer armed after an `end` with missing chunks (spec §5.1).
pub const GAP_TIMEOUT: Duration = Duration::from_secs(1);
/// Budget of the best-effort `stream/cancel`.
pub const CANCEL_TIMEOUT: Duration = Duration::from_secs(2);

/// One model in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEntry {
    /// `plugin/<plugin>/<provider>/<model>`: what `--model` takes.
    pub model_ref: String,
    pub plugin: String,
    /// The provider's descriptor, text fields redacted.
    pub descriptor: ProviderDescriptor,
}

impl CatalogEntry {
    /// The `providerRef` to send at stream open.
    pub fn provider_ref(&self) -> &str {
        &self.descriptor.reference
    }

    /// The `model` to send at stream open.
    pub fn model(&self) -> Option<String> {
        self.descriptor
            .model
            .clone()
            .or_else(|| self.model_ref.rsplit('/').next().map(str::to_string))
    }
}

/// Why a descriptor was left out of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin `{plugin}`: provider {reference:?} {why}")]
pub struct CatalogRejection {
    pub plugin: String,
    pub reference: String,
    pub why: String,
}

/// Turn one descriptor into a catalog entry. The ref must start with
/// `plugin/<plugin>/`; it names either the model itself
/// (`plugin/<plugin>/<provider>/<model>`) or the provider
/// (`plugin/<plugin>/<provider>`, with the model in `model`).
pub fn catalog_entry(
    plugin: &str,
    mut descriptor: ProviderDescriptor,
) -> Result<CatalogEntry, CatalogRejection> {
    let reject = |why: &str, reference: &str| CatalogRejection {
        plugin: plugin.to_string(),
        reference: clean_text(reference),
        why: why.to_string(),
    };
    let reference = descriptor.reference.clone();
    let Some(rest) = reference.strip_prefix(&format!("plugin/{plugin}/")) else {
        return Err(reject(
            &format!("must start with plugin/{plugin}/"),
            &reference,
        ));
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let valid = |s: &str| !s.is_empty() && !s.chars().any(char::is_whitespace);
    let model_ref = match parts.as_slice() {
        [provider, model] if valid(provider) && valid(model) => reference.clone(),
        [provider] if valid(provider) => match descriptor.model.as_deref() {
            Some(model) if valid(model) && !model.contains('/') => {
                format!("plugin/{plugin}/{provider}/{model}")
            }
            _ => {
                return Err(reject(
                    "names no model: give `model` or a 4-part ref",
                    &reference,
                ));
            }
        },
        _ => {
            return Err(reject(
                "is not plugin/<plugin>/<provider>/<model>",
                &reference,
            ));
        }
    };
    for text in [
        &mut descriptor.display_name,
        &mut descriptor.pricing_currency,
        &mut descriptor.default_effort,
    ]
    .into_iter()
    .flatten()
    {
        *text = clean_text(text);
    }
    Ok(CatalogEntry {
        model_ref,
        plugin: plugin.to_string(),
        descriptor,
    })
}

/// A fresh stream id: `es_` + 24 hex.
pub fn new_stream_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    format!(
        "es_{:016x}{:08x}",
        nanos ^ u64::from(std::process::id()),
        n as u32
    )
}

/// An open provider stream: yields chunks in order, or exactly one failure.
pub struct ProviderStream {
    runtime: Arc<dyn ExtensionRuntime>,
    stream_id: String,
    generation: u64,
    messages: StreamReceiver,
    assembler: StreamReassembler<ProviderChunk>,
    ready: VecDeque<ProviderChunk>,
    gap_deadline: Option<Instant>,
    status: StreamStatus,
    stale_dropped: u64,
}

impl ProviderStream {
    /// Open a stream on `runtime`. A refusal or error fails here.
    pub async fn open(
        runtime: Arc<dyn ExtensionRuntime>,
        open: StreamOpen,
    ) -> Result<ProviderStream, StreamFailure> {
        let stream_id = open.stream_id.clone();
        let generation = open.generation;
        let messages = runtime
            .provider_stream(open)
            .await
            .map_err(|error| StreamFailure::Provider(clean_text(&error.message)))?;
        Ok(ProviderStream {
            runtime,
            stream_id,
            generation,
            messages,
            assembler: StreamReassembler::new(),
            ready: VecDeque::new(),
            gap_deadline: None,
            status: StreamStatus::Open,
            stale_dropped: 0,
        })
    }

    pub fn stream_id(&self) -> &str {
        &self.stream_id
    }

    /// Chunks dropped because they named another generation.
    pub fn stale_dropped(&self) -> u64 {
        self.stale_dropped
    }

    fn feed(&mut self, input: StreamInput<ProviderChunk>) {
        let progress = self.assembler.accept(input);
        for chunk in progress.deliver {
            self.ready.push_back(chunk);
        }
        self.gap_deadline = match progress.status {
            StreamStatus::AwaitingGap { .. } => Some(
                self.gap_deadline
                    .unwrap_or_else(|| Instant::now() + GAP_TIMEOUT),
            ),
            _ => None,
        };
        self.status = progress.status;
    }

    /// The next chunk, `None` after a clean end, or the failure (once; then `None`).
    pub async fn next(&mut self) -> Option<Result<ProviderChunk, StreamFailure>> {
        loop {
            if let Some(chunk) = self.ready.pop_front() {
                if chunk.chunk_type == ChunkType::Error {
                    let message = chunk
                        .error
                        .as_ref()
                        .map(|e| e.message.clone())
                        .unwrap_or_else(|| "the provider reported an error".to_string());
                    let failure = StreamFailure::Provider(clean_text(&message));
                    self.ready.clear();
                    self.status = StreamStatus::Failed(failure.clone());
                    self.assembler.accept(StreamInput::Cancelled);
                    return Some(Err(failure));
                }
                return Some(Ok(chunk));
            }
            match &self.status {
                StreamStatus::Complete => return None,
                StreamStatus::Failed(failure) => {
                    let failure = match failure {
                        StreamFailure::Provider(m) => StreamFailure::Provider(clean_text(m)),
                        other => other.clone(),
                    };
                    // Report once, then behave as ended.
                    self.status = StreamStatus::Complete;
                    return Some(Err(failure));
                }
                StreamStatus::Open | StreamStatus::AwaitingGap { .. } => {}
            }
            let message = match self.gap_deadline {
                Some(deadline) => tokio::select! {
                    message = self.messages.recv() => message,
                    _ = tokio::time::sleep_until(deadline) => {
                        self.feed(StreamInput::GapTimerFired);
                        continue;
                    }
                },
                None => self.messages.recv().await,
            };
            match message {
                Some(StreamMessage::Chunk {
                    seq,
                    generation,
                    chunk,
                }) => {
                    let named = generation.or(chunk.generation);
                    if named.is_some_and(|g| g != self.generation) {
                        self.stale_dropped += 1;
                        continue;
                    }
                    self.feed(StreamInput::Chunk { seq, chunk: *chunk });
                }
                Some(StreamMessage::End(end)) => self.feed(StreamInput::End(end)),
                Some(StreamMessage::Invalid(why)) => {
                    // An invalid message ends the stream like a broken connection.
                    self.ready.clear();
                    self.status = StreamStatus::Failed(StreamFailure::Interrupted(format!(
                        "the provider sent an invalid stream message: {why}"
                    )));
                    self.assembler.accept(StreamInput::Cancelled);
                }
                Some(StreamMessage::Disconnected) | None => self.feed(StreamInput::Disconnected),
            }
        }
    }

    /// Cancel: tell the extension (best effort, 2 s) and end the stream.
    pub async fn cancel(mut self) -> StreamFailure {
        let _ = self
            .runtime
            .provider_cancel(&self.stream_id, CANCEL_TIMEOUT)
            .await;
        self.feed(StreamInput::Cancelled);
        StreamFailure::Cancelled
    }

    /// Read the stream to its end and assemble the answer.
    pub async fn collect(mut self) -> Result<AssembledResponse, StreamFailure> {
        let mut response = AssembledResponse::default();
        while let Some(chunk) = self.next().await {
            response.absorb(chunk?);
        }
        response.finish();
        Ok(response)
    }
}

/// A provider answer assembled from its chunks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssembledResponse {
    pub text: String,
    pub reasoning: String,
    pub signature: String,
    pub calls: Vec<ProviderToolCall>,
    pub usage: Option<ProviderUsage>,
    pub chunks: usize,
    #[serde(skip)]
    partial_calls: Vec<ProviderToolCall>,
}

impl AssembledResponse {
    pub fn absorb(&mut self, chunk: ProviderChunk) {
        self.chunks += 1;
        match chunk.chunk_type {
            ChunkType::Text => self
                .text
                .push_str(chunk.text.as_deref().unwrap_or_default()),
            ChunkType::Reasoning => {
                self.reasoning
                    .push_str(chunk.text.as_deref().unwrap_or_default());
                if let Some(signature) = chunk.signature {
                    self.signature = signature;
                }
            }
            ChunkType::ToolCallStart => {
                if let Some(call) = chunk.tool_call {
                    self.partial_calls.push(call);
                }
            }
            ChunkType::ToolCallArgsDelta => {
                if let Some(call) = self.partial_calls.last_mut() {
                    call.arguments
                        .push_str(chunk.text.as_deref().unwrap_or_default());
                }
            }
            ChunkType::ToolCall => {
                if let Some(call) = chunk.tool_call {
                    self.partial_calls.retain(|partial| partial.id != call.id);
                    self.calls.push(call);
                }
            }
            ChunkType::Usage => self.usage = chunk.usage,
            ChunkType::Done | ChunkType::Error => {}
        }
    }

    pub fn finish(&mut self) {
        // A call that was started and streamed but never completed by a
        // `tool_call` chunk is still a call.
        self.calls.append(&mut self.partial_calls);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(reference: &str, model: Option<&str>) -> ProviderDescriptor {
        ProviderDescriptor {
            reference: reference.to_string(),
            model: model.map(str::to_string),
            ..ProviderDescriptor::default()
        }
    }

    #[test]
    fn catalog_refs_are_namespaced_by_plugin() {
        let entry = catalog_entry("echo", descriptor("plugin/echo/local/small", None)).unwrap();
        assert_eq!(entry.model_ref, "plugin/echo/local/small");
        assert_eq!(entry.model().as_deref(), Some("small"));
        let entry = catalog_entry("echo", descriptor("plugin/echo/local", Some("big"))).unwrap();
        assert_eq!(entry.model_ref, "plugin/echo/local/big");
        for (reference, model) in [
            ("plugin/other/local/small", None),
            ("echo/local/small", None),
            ("plugin/echo/local", None),
            ("plugin/echo/a/b/c", None),
            ("plugin/echo//x", None),
        ] {
            assert!(
                catalog_entry("echo", descriptor(reference, model)).is_err(),
                "{reference}"
            );
        }
    }

    #[test]
    fn stream_ids_have_the_wire_shape_and_differ() {
        let a = new_stream_id();
        let b = new_stream_id();
        assert_ne!(a, b);
        for id in [a, b] {
            let hex = id.strip_prefix("es_").unwrap();
            assert_eq!(hex.len(), 24, "{id}");
            assert!(
                hex.bytes()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            );
        }
    }
}
