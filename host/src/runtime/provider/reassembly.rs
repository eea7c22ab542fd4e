//! The host receiver of a provider stream (spec §9) as a pure state machine.
//!
//! Sidecars deliver `stream/chunk` and `stream/end` notifications in arrival
//! order; this type turns them into the ordered chunk sequence the agent sees,
//! or into exactly one failure. It owns no timers and does no I/O: the driver
//! arms the 1 s gap timer when told to and feeds back [`StreamInput::GapTimerFired`].

use std::collections::BTreeMap;

/// How far ahead of the next expected sequence number a chunk may arrive and
/// still be buffered (spec §9: "buffered up to 256 ahead").
pub const MAX_BUFFERED_AHEAD: u64 = 256;

/// One thing the stream receiver can be told.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamInput<C> {
    /// A `stream/chunk` with its sequence number.
    Chunk { seq: u64, chunk: C },
    /// A `stream/end`.
    End(StreamEnd),
    /// The gap timer armed after an `end` with missing chunks expired.
    GapTimerFired,
    /// The sidecar connection ended (crash or exit) before the stream did.
    Disconnected,
    /// The caller cancelled the stream.
    Cancelled,
}

/// The fields of `extension/provider/stream/end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEnd {
    pub last_seq: u64,
    pub error: Option<String>,
    pub interrupted: bool,
}

/// Why a stream did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamFailure {
    /// The provider reported an error in its `end` (text not yet redacted:
    /// the driver redacts before anything shows it).
    Provider(String),
    /// The stream was interrupted; the text says how.
    Interrupted(String),
    /// The caller cancelled it.
    Cancelled,
}

impl std::fmt::Display for StreamFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamFailure::Provider(message) => write!(f, "provider failed: {message}"),
            StreamFailure::Interrupted(message) => write!(f, "stream interrupted: {message}"),
            StreamFailure::Cancelled => f.write_str("stream cancelled"),
        }
    }
}

/// Where the stream stands after an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamStatus {
    /// Still open, nothing for the driver to do.
    Open,
    /// `end` arrived but chunks ≤ `last_seq` are missing: the driver must arm
    /// (or keep) the 1 s gap timer.
    AwaitingGap { missing: u64, last_seq: u64 },
    /// Every chunk up to `last_seq` was delivered and the end was clean.
    Complete,
    /// Terminal failure.
    Failed(StreamFailure),
}

impl StreamStatus {
    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamStatus::Complete | StreamStatus::Failed(_))
    }
}

/// The result of one input: chunks now deliverable in order, and the status.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamProgress<C> {
    pub deliver: Vec<C>,
    pub status: StreamStatus,
}

/// Reassembles one stream. Sequence numbers start at 1 and are contiguous.
#[derive(Debug)]
pub struct StreamReassembler<C> {
    next_seq: u64,
    ahead: BTreeMap<u64, C>,
    end: Option<StreamEnd>,
    terminal: Option<StreamStatus>,
    duplicates_dropped: u64,
}

impl<C> Default for StreamReassembler<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C> StreamReassembler<C> {
    pub fn new() -> Self {
        StreamReassembler {
            next_seq: 1,
            ahead: BTreeMap::new(),
            end: None,
            terminal: None,
            duplicates_dropped: 0,
        }
    }

    /// The sequence number the receiver waits for next.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// How many duplicate chunks were dropped so far.
    pub fn duplicates_dropped(&self) -> u64 {
        self.duplicates_dropped
    }

    /// Feed one input. After a terminal status every further input is ignored
    /// and the terminal status is repeated.
    pub fn accept(&mut self, input: StreamInput<C>) -> StreamProgress<C> {
        if let Some(terminal) = &self.terminal {
            return StreamProgress {
                deliver: Vec::new(),
                status: terminal.clone(),
            };
        }
        let mut deliver = Vec::new();
        let status = match input {
            StreamInput::Chunk { seq, chunk } => self.on_chunk(seq, chunk, &mut deliver),
            StreamInput::End(end) => self.on_end(end),
            StreamInput::GapTimerFired => match &self.end {
                Some(end) if self.next_seq <= end.last_seq => {
                    StreamStatus::Failed(StreamFailure::Interrupted(format!(
                        "missing chunk {} of {}",
                        self.next_seq, end.last_seq
                    )))
                }
                _ => self.status_after_progress(),
            },
            StreamInput::Disconnected => StreamStatus::Failed(StreamFailure::Interrupted(
                "the provider's sidecar disconnected before the stream ended".to_string(),
            )),
            StreamInput::Cancelled => StreamStatus::Failed(StreamFailure::Cancelled),
        };
        if status.is_terminal() {
            self.ahead.clear();
            self.terminal = Some(status.clone());
        }
        StreamProgress { deliver, status }
    }

    fn on_chunk(&mut self, seq: u64, chunk: C, deliver: &mut Vec<C>) -> StreamStatus {
        if seq < self.next_seq || self.ahead.contains_key(&seq) {
            self.duplicates_dropped += 1;
            return self.status_after_progress();
        }
        if let Some(end) = &self.end
            && seq > end.last_seq
        {
            return StreamStatus::Failed(StreamFailure::Interrupted(format!(
                "chunk {seq} arrived after the end at {}",
                end.last_seq
            )));
        }
        if seq == self.next_seq {
            deliver.push(chunk);
            self.next_seq += 1;
            while let Some(next) = self.ahead.remove(&self.next_seq) {
                deliver.push(next);
                self.next_seq += 1;
            }
        } else if seq - self.next_seq > MAX_BUFFERED_AHEAD {
            return StreamStatus::Failed(StreamFailure::Interrupted(format!(
                "chunk {seq} is more than {MAX_BUFFERED_AHEAD} ahead of the missing chunk {}",
                self.next_seq
            )));
        } else {
            self.ahead.insert(seq, chunk);
        }
        self.status_after_progress()
    }

    fn on_end(&mut self, end: StreamEnd) -> StreamStatus {
        if let Some(previous) = &self.end {
            if *previous == end {
                return self.status_after_progress();
            }
            return StreamStatus::Failed(StreamFailure::Interrupted(format!(
                "conflicting end: lastSeq {} after lastSeq {}",
                end.last_seq, previous.last_seq
            )));
        }
        if let Some(error) = &end.error {
            return StreamStatus::Failed(StreamFailure::Provider(error.clone()));
        }
        if end.interrupted {
            return StreamStatus::Failed(StreamFailure::Interrupted(
                "the provider interrupted the stream".to_string(),
            ));
        }
        let delivered = self.next_seq - 1;
        if delivered > end.last_seq {
            return StreamStatus::Failed(StreamFailure::Interrupted(format!(
                "end says lastSeq {} but chunk {delivered} was already received",
                end.last_seq
            )));
        }
        if let Some((&beyond, _)) = self.ahead.range(end.last_seq + 1..).next() {
            return StreamStatus::Failed(StreamFailure::Interrupted(format!(
                "chunk {beyond} arrived beyond the end at {}",
                end.last_seq
            )));
        }
        self.end = Some(end);
        self.status_after_progress()
    }

    fn status_after_progress(&self) -> StreamStatus {
        match &self.end {
            None => StreamStatus::Open,
            Some(end) if self.next_seq > end.last_seq => StreamStatus::Complete,
            Some(end) => StreamStatus::AwaitingGap {
                missing: self.next_seq,
                last_seq: end.last_seq,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(seq: u64) -> StreamInput<u64> {
        StreamInput::Chunk { seq, chunk: seq }
    }

    fn end(last_seq: u64) -> StreamInput<u64> {
        StreamInput::End(StreamEnd {
            last_seq,
            error: None,
            interrupted: false,
        })
    }

    /// Feed inputs, collect delivered chunks and the last status.
    fn run(inputs: Vec<StreamInput<u64>>) -> (Vec<u64>, StreamStatus) {
        let mut stream = StreamReassembler::new();
        let mut delivered = Vec::new();
        let mut status = StreamStatus::Open;
        for input in inputs {
            let progress = stream.accept(input);
            delivered.extend(progress.deliver);
            status = progress.status;
        }
        (delivered, status)
    }

    #[test]
    fn in_order_stream_completes() {
        let (got, status) = run(vec![chunk(1), chunk(2), chunk(3), end(3)]);
        assert_eq!(got, vec![1, 2, 3]);
        assert_eq!(status, StreamStatus::Complete);
    }

    #[test]
    fn empty_stream_completes_with_last_seq_zero() {
        let (got, status) = run(vec![end(0)]);
        assert!(got.is_empty());
        assert_eq!(status, StreamStatus::Complete);
    }

    #[test]
    fn duplicates_are_dropped() {
        let mut stream = StreamReassembler::new();
        for input in [chunk(1), chunk(1), chunk(2), chunk(1)] {
            stream.accept(input);
        }
        assert_eq!(stream.duplicates_dropped(), 2);
        let (got, status) = run(vec![chunk(1), chunk(1), chunk(2), chunk(2), end(2)]);
        assert_eq!(got, vec![1, 2]);
        assert_eq!(status, StreamStatus::Complete);
    }

    #[test]
    fn duplicate_of_a_buffered_chunk_is_dropped() {
        let (got, status) = run(vec![chunk(2), chunk(2), chunk(1), end(2)]);
        assert_eq!(got, vec![1, 2]);
        assert_eq!(status, StreamStatus::Complete);
    }

    #[test]
    fn out_of_order_chunks_are_buffered_and_released_in_order() {
        let (got, status) = run(vec![
            chunk(3),
            chunk(2),
            chunk(1),
            chunk(5),
            chunk(4),
            end(5),
        ]);
        assert_eq!(got, vec![1, 2, 3, 4, 5]);
        assert_eq!(status, StreamStatus::Complete);
    }

    #[test]
    fn buffering_exactly_256_ahead_is_allowed() {
        let (got, status) = run(vec![chunk(1 + MAX_BUFFERED_AHEAD), chunk(1)]);
        assert_eq!(got, vec![1]);
        assert_eq!(status, StreamStatus::Open);
    }

    #[test]
    fn a_chunk_further_than_256_ahead_interrupts() {
        let (_, status) = run(vec![chunk(2 + MAX_BUFFERED_AHEAD)]);
        assert_eq!(
            status,
            StreamStatus::Failed(StreamFailure::Interrupted(
                "chunk 258 is more than 256 ahead of the missing chunk 1".into()
            ))
        );
    }

    #[test]
    fn gap_after_end_waits_then_names_the_missing_chunk() {
        let mut stream = StreamReassembler::new();
        stream.accept(chunk(1));
        stream.accept(chunk(3));
        let progress = stream.accept(end(3));
        assert_eq!(
            progress.status,
            StreamStatus::AwaitingGap {
                missing: 2,
                last_seq: 3
            }
        );
        let progress = stream.accept(StreamInput::GapTimerFired);
        assert_eq!(
            progress.status,
            StreamStatus::Failed(StreamFailure::Interrupted("missing chunk 2 of 3".into()))
        );
    }

    #[test]
    fn gap_filled_before_the_timer_completes() {
        let (got, status) = run(vec![chunk(1), chunk(3), end(3), chunk(2)]);
        assert_eq!(got, vec![1, 2, 3]);
        assert_eq!(status, StreamStatus::Complete);
        // A late timer after completion changes nothing.
        let mut stream = StreamReassembler::new();
        for input in [chunk(2), end(2), chunk(1)] {
            stream.accept(input);
        }
        assert_eq!(
            stream.accept(StreamInput::GapTimerFired).status,
            StreamStatus::Complete
        );
    }

    #[test]
    fn end_with_nothing_received_and_last_seq_two_awaits_chunk_one() {
        let (_, status) = run(vec![end(2)]);
        assert_eq!(
            status,
            StreamStatus::AwaitingGap {
                missing: 1,
                last_seq: 2
            }
        );
    }

    #[test]
    fn chunk_beyond_last_seq_after_end_interrupts() {
        let (_, status) = run(vec![chunk(1), end(2), chunk(3)]);
        assert_eq!(
            status,
            StreamStatus::Failed(StreamFailure::Interrupted(
                "chunk 3 arrived after the end at 2".into()
            ))
        );
        // After a clean completion the stream is over: late chunks change nothing.
        let (got, status) = run(vec![chunk(1), end(1), chunk(2)]);
        assert_eq!(got, vec![1]);
        assert_eq!(status, StreamStatus::Complete);
    }

    #[test]
    fn buffered_chunk_beyond_last_seq_at_end_interrupts() {
        let (_, status) = run(vec![chunk(1), chunk(4), end(2)]);
        assert_eq!(
            status,
            StreamStatus::Failed(StreamFailure::Interrupted(
                "chunk 4 arrived beyond the end at 2".into()
            ))
        );
    }

    #[test]
    fn end_below_what_was_delivered_interrupts() {
        let (_, status) = run(vec![chunk(1), chunk(2), end(1)]);
        assert!(matches!(
            status,
            StreamStatus::Failed(StreamFailure::Interrupted(_))
        ));
    }

    #[test]
    fn conflicting_second_end_interrupts_and_identical_one_is_ignored() {
        let (_, status) = run(vec![chunk(1), chunk(3), end(3), end(3)]);
        assert_eq!(
            status,
            StreamStatus::AwaitingGap {
                missing: 2,
                last_seq: 3
            }
        );
        let (_, status) = run(vec![chunk(1), chunk(3), end(3), end(4)]);
        assert_eq!(
            status,
            StreamStatus::Failed(StreamFailure::Interrupted(
                "conflicting end: lastSeq 4 after lastSeq 3".into()
            ))
        );
    }

    #[test]
    fn end_with_error_fails_and_interrupted_end_interrupts() {
        let (got, status) = run(vec![
            chunk(1),
            StreamInput::End(StreamEnd {
                last_seq: 1,
                error: Some("quota exceeded".into()),
                interrupted: false,
            }),
        ]);
        assert_eq!(got, vec![1]);
        assert_eq!(
            status,
            StreamStatus::Failed(StreamFailure::Provider("quota exceeded".into()))
        );
        let (_, status) = run(vec![StreamInput::End(StreamEnd {
            last_seq: 0,
            error: None,
            interrupted: true,
        })]);
        assert!(matches!(
            status,
            StreamStatus::Failed(StreamFailure::Interrupted(_))
        ));
    }

    #[test]
    fn disconnect_and_cancel_are_terminal_and_sticky() {
        let mut stream = StreamReassembler::new();
        stream.accept(chunk(1));
        let progress = stream.accept(StreamInput::Disconnected);
        assert!(matches!(
            progress.status,
            StreamStatus::Failed(StreamFailure::Interrupted(_))
        ));
        // Nothing is delivered after a terminal status.
        let after = stream.accept(chunk(2));
        assert!(after.deliver.is_empty());
        assert_eq!(after.status, progress.status);

        let (_, status) = run(vec![chunk(1), StreamInput::Cancelled, end(1)]);
        assert_eq!(status, StreamStatus::Failed(StreamFailure::Cancelled));
    }
}
