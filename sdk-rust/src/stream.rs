//! Provider streams: chunk builders, the stream an author returns, and the
//! pump that turns it into `stream/chunk` + exactly one `stream/end`.

use reasonix_protocol::ErrorReason;
use reasonix_protocol::Validate;
use reasonix_protocol::types::{
    ChunkType, ProviderChunk, ProviderError, ProviderErrorCode, ProviderRequest, ProviderToolCall,
    ProviderUsage, StreamChunkParams, StreamEndParams,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// The chunks of one response, pulled one at a time. Any iterator works:
/// `vec![...].into_iter()`, or a [`ChunkReceiver`] fed from another thread.
pub type ChunkStream = Box<dyn Iterator<Item = ProviderChunk> + Send>;

/// `end.error` of a stream whose provider produced an invalid chunk.
pub const INVALID_CHUNK_MESSAGE: &str = "the extension provider produced an invalid chunk";

/// Set when the host cancels the stream (or the connection shuts down).
/// A producer should check it and stop; nothing it yields afterwards is sent.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        CancelToken::default()
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    pub(crate) fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// What `extension/provider/stream/open` asks for.
#[derive(Debug, Clone)]
pub struct StreamRequest {
    pub stream_id: String,
    pub provider_ref: String,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub request: ProviderRequest,
    /// Cancelled by `stream/cancel` or shutdown.
    pub cancel: CancelToken,
}

/// The sending half of [`chunk_channel`]; dropping it ends the stream.
#[derive(Debug, Clone)]
pub struct ChunkSender(mpsc::Sender<ProviderChunk>);

impl ChunkSender {
    /// Queues a chunk; `false` once the stream is gone (cancelled or ended).
    pub fn send(&self, chunk: ProviderChunk) -> bool {
        self.0.send(chunk).is_ok()
    }
}

/// The receiving half of [`chunk_channel`]: a [`ChunkStream`] source.
pub struct ChunkReceiver(mpsc::Receiver<ProviderChunk>);

impl Iterator for ChunkReceiver {
    type Item = ProviderChunk;
    fn next(&mut self) -> Option<ProviderChunk> {
        self.0.recv().ok()
    }
}

/// A channel for producing chunks from a thread of your own (native only
/// makes sense; a component has one thread and should return an iterator).
pub fn chunk_channel() -> (ChunkSender, ChunkReceiver) {
    let (tx, rx) = mpsc::channel();
    (ChunkSender(tx), ChunkReceiver(rx))
}

/// Chunk builders.
pub mod chunk {
    use super::*;

    /// Visible text.
    pub fn text(text: impl Into<String>) -> ProviderChunk {
        ProviderChunk {
            text: Some(text.into()),
            ..ProviderChunk::of_type(ChunkType::Text)
        }
    }

    /// Reasoning text with an optional signature.
    pub fn reasoning(text: impl Into<String>, signature: Option<String>) -> ProviderChunk {
        ProviderChunk {
            text: Some(text.into()),
            signature,
            ..ProviderChunk::of_type(ChunkType::Reasoning)
        }
    }

    /// Token accounting; `total` is prompt + completion.
    pub fn usage(prompt_tokens: u64, completion_tokens: u64) -> ProviderChunk {
        usage_full(ProviderUsage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
            cache_hit_tokens: 0,
            cache_miss_tokens: prompt_tokens,
            reasoning_tokens: 0,
            finish_reason: Some("stop".to_owned()),
        })
    }

    /// Token accounting with every field chosen by the caller.
    pub fn usage_full(usage: ProviderUsage) -> ProviderChunk {
        ProviderChunk {
            usage: Some(usage),
            ..ProviderChunk::of_type(ChunkType::Usage)
        }
    }

    /// A complete tool call.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> ProviderChunk {
        ProviderChunk {
            tool_call: Some(ProviderToolCall {
                id: id.into(),
                name: name.into(),
                arguments: arguments.into(),
                thought_signature: None,
            }),
            ..ProviderChunk::of_type(ChunkType::ToolCall)
        }
    }

    /// End of output.
    pub fn done() -> ProviderChunk {
        ProviderChunk::of_type(ChunkType::Done)
    }

    /// A failure: not forwarded as a chunk; its message becomes the
    /// stream's `end.error`.
    pub fn error(message: impl Into<String>) -> ProviderChunk {
        ProviderChunk {
            error: Some(ProviderError {
                code: ProviderErrorCode::ProviderFailed,
                message: message.into(),
            }),
            ..ProviderChunk::of_type(ChunkType::Error)
        }
    }
}

/// One step the pump sees: a chunk from the author, or the host's cancel.
#[cfg_attr(target_family = "wasm", allow(dead_code))]
pub(crate) enum Step {
    Chunk(Box<ProviderChunk>),
    Cancelled,
}

/// Why the pump could not send a chunk.
#[cfg_attr(target_family = "wasm", allow(dead_code))]
pub(crate) enum EmitError {
    /// The chunk's frame is over the cap: the stream ends with the
    /// invalid-chunk message.
    TooLarge,
    /// The connection is gone: nothing more can be sent.
    Closed,
}

/// Forwards `steps` as chunk notifications with contiguous seqs from
/// max(seq_base, 1), then sends exactly one end (unless the connection is
/// gone). Error chunks are not forwarded: their message becomes
/// `end.error`; an invalid chunk ends the stream with
/// [`INVALID_CHUNK_MESSAGE`]; a cancel ends it `interrupted`.
pub(crate) fn pump(
    stream_id: &str,
    seq_base: u64,
    steps: impl Iterator<Item = Step>,
    mut emit_chunk: impl FnMut(StreamChunkParams) -> Result<(), EmitError>,
    emit_end: impl FnOnce(StreamEndParams),
    log: impl Fn(&str),
) {
    let mut last_seq = 0;
    let end = |last_seq, error: Option<String>, interrupted: bool| StreamEndParams {
        stream_id: stream_id.to_owned(),
        last_seq,
        error,
        interrupted: interrupted.then_some(true),
    };
    for (seq, step) in (seq_base.max(1)..).zip(steps) {
        let chunk = match step {
            Step::Cancelled => return emit_end(end(last_seq, None, true)),
            Step::Chunk(chunk) => *chunk,
        };
        if chunk.chunk_type == ChunkType::Error {
            let message = chunk
                .error
                .map(|e| e.message)
                .filter(|m| !m.trim().is_empty())
                .unwrap_or_else(|| ErrorReason::ProviderFailed.message().to_owned());
            return emit_end(end(last_seq, Some(message), false));
        }
        if let Err(e) = chunk.validate() {
            log(&format!("provider stream {stream_id}: invalid chunk: {e}"));
            return emit_end(end(last_seq, Some(INVALID_CHUNK_MESSAGE.to_owned()), false));
        }
        let params = StreamChunkParams {
            stream_id: stream_id.to_owned(),
            seq,
            chunk,
            generation: None,
            epoch: None,
        };
        match emit_chunk(params) {
            Ok(()) => {}
            Err(EmitError::TooLarge) => {
                log(&format!(
                    "provider stream {stream_id}: chunk {seq} is over the frame cap"
                ));
                return emit_end(end(last_seq, Some(INVALID_CHUNK_MESSAGE.to_owned()), false));
            }
            Err(EmitError::Closed) => return,
        }
        last_seq = seq;
    }
    emit_end(end(last_seq, None, false));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(c: ProviderChunk) -> Step {
        Step::Chunk(Box::new(c))
    }

    fn run(seq_base: u64, steps: Vec<Step>) -> (Vec<StreamChunkParams>, StreamEndParams) {
        let mut chunks = Vec::new();
        let mut ended = None;
        pump(
            "es_1",
            seq_base,
            steps.into_iter(),
            |c| {
                chunks.push(c);
                Ok(())
            },
            |e| ended = Some(e),
            |_| {},
        );
        (chunks, ended.expect("exactly one end"))
    }

    #[test]
    fn seqs_are_contiguous_from_the_base_and_end_counts_them() {
        let steps = vec![
            ch(chunk::text("a")),
            ch(chunk::usage(3, 4)),
            ch(chunk::done()),
        ];
        let (chunks, end) = run(0, steps);
        assert_eq!(chunks.iter().map(|c| c.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!((end.last_seq, end.error, end.interrupted), (3, None, None));
        let (chunks, end) = run(5, vec![ch(chunk::text("a"))]);
        assert_eq!((chunks[0].seq, end.last_seq), (5, 5));
    }

    #[test]
    fn error_chunks_become_the_end_error() {
        let (chunks, end) = run(
            1,
            vec![
                ch(chunk::text("a")),
                ch(chunk::error("model exploded")),
                ch(chunk::text("never")),
            ],
        );
        assert_eq!(chunks.len(), 1);
        assert_eq!(end.error.as_deref(), Some("model exploded"));
        assert_eq!(end.last_seq, 1);
    }

    #[test]
    fn invalid_chunks_and_cancels_end_the_stream() {
        let bad = ProviderChunk::of_type(ChunkType::Usage); // usage chunk without usage
        let (chunks, end) = run(1, vec![ch(bad)]);
        assert!(chunks.is_empty());
        assert_eq!(end.error.as_deref(), Some(INVALID_CHUNK_MESSAGE));
        let (_, end) = run(
            1,
            vec![ch(chunk::text("a")), Step::Cancelled, ch(chunk::text("b"))],
        );
        assert_eq!((end.last_seq, end.interrupted), (1, Some(true)));
    }
}
