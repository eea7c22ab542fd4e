//! NDJSON framing: one JSON-RPC message per line, at most
//! [`FRAME_BYTES`] including the trailing newline, in both directions.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The frame cap, newline included (schema `limits.frameBytes`).
pub const FRAME_BYTES: usize = 8 * 1024 * 1024;

/// A failure of the inbound line reader.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The peer sent a line longer than the cap. Connection-fatal.
    #[error("inbound frame is at least {bytes} bytes; limit is {limit}")]
    TooLarge { bytes: usize, limit: usize },
    #[error("reading from the sidecar failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads NDJSON frames: trailing `\r`/`\n` stripped, ASCII whitespace
/// trimmed, blank lines skipped (upstream SDK's reader).
pub struct FrameReader<R> {
    inner: R,
    line: Vec<u8>,
    limit: usize,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, FRAME_BYTES)
    }

    /// A reader with another cap (tests).
    pub fn with_limit(inner: R, limit: usize) -> Self {
        FrameReader {
            inner,
            line: Vec::new(),
            limit,
        }
    }

    /// The next non-blank frame, or `None` at end of stream. The returned
    /// slice is valid until the next call.
    pub async fn next_frame(&mut self) -> Result<Option<&[u8]>, ReadError> {
        loop {
            self.line.clear();
            let complete = self.read_line().await?;
            if self.line.is_empty() && !complete {
                return Ok(None);
            }
            let Some(start) = self.line.iter().position(|b| !b.is_ascii_whitespace()) else {
                continue;
            };
            let end = self
                .line
                .iter()
                .rposition(|b| !b.is_ascii_whitespace())
                .map_or(start, |i| i + 1);
            return Ok(Some(&self.line[start..end]));
        }
    }

    /// Fills `self.line` with one line without its `\n`; `false` when the
    /// stream ended before a newline. Counts the newline toward the cap (an
    /// unterminated last line is counted as if it had one).
    async fn read_line(&mut self) -> Result<bool, ReadError> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            match memchr_newline(available) {
                Some(i) => {
                    if self.line.len() + i + 1 > self.limit {
                        return Err(ReadError::TooLarge {
                            bytes: self.line.len() + i + 1,
                            limit: self.limit,
                        });
                    }
                    self.line.extend_from_slice(&available[..i]);
                    self.inner.consume(i + 1);
                    return Ok(true);
                }
                None => {
                    let n = available.len();
                    if self.line.len() + n + 1 > self.limit {
                        return Err(ReadError::TooLarge {
                            bytes: self.line.len() + n + 1,
                            limit: self.limit,
                        });
                    }
                    self.line.extend_from_slice(available);
                    self.inner.consume(n);
                }
            }
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], limit: usize) -> Result<Vec<String>, ReadError> {
        let mut reader = FrameReader::with_limit(input, limit);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await? {
            out.push(String::from_utf8(frame.to_vec()).unwrap());
        }
        Ok(out)
    }

    #[tokio::test]
    async fn crlf_blank_lines_and_whitespace_are_tolerated() {
        let got = frames(b"{\"a\":1}\r\n\r\n   \n  {\"b\":2} \t\n{\"c\":3}", 64)
            .await
            .unwrap();
        assert_eq!(got, vec!["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[tokio::test]
    async fn limit_counts_the_newline() {
        // 9 bytes + newline = 10 = limit: accepted.
        assert_eq!(frames(b"123456789\n", 10).await.unwrap(), vec!["123456789"]);
        // 10 bytes + newline = 11 > limit.
        let err = frames(b"1234567890\n", 10).await.unwrap_err();
        assert!(
            matches!(
                err,
                ReadError::TooLarge {
                    bytes: 11,
                    limit: 10
                }
            ),
            "{err}"
        );
        // Without any newline the reader stops as soon as the cap is passed.
        let err = frames(&[b'x'; 100], 10).await.unwrap_err();
        assert!(matches!(err, ReadError::TooLarge { .. }));
    }

    #[tokio::test]
    async fn small_buffer_reassembles_long_lines() {
        let line = "y".repeat(70_000);
        let input = format!("{line}\n{line}\n");
        let reader = tokio::io::BufReader::with_capacity(1024, input.as_bytes());
        let mut reader = FrameReader::with_limit(reader, 80_000);
        assert_eq!(reader.next_frame().await.unwrap().unwrap().len(), 70_000);
        assert_eq!(reader.next_frame().await.unwrap().unwrap().len(), 70_000);
        assert!(reader.next_frame().await.unwrap().is_none());
    }
}
