//! The sidecar's stderr: drained continuously (a full pipe would block the
//! sidecar), logged line by line and kept as a bounded tail for startup and
//! crash diagnostics. Everything leaving this module is redacted.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

use crate::redact::redact;

/// Bytes of stderr kept.
pub const STDERR_TAIL_BYTES: usize = 16 * 1024;

/// A handle to the tail of one sidecar's stderr.
#[derive(Clone)]
pub struct StderrTail {
    buf: Arc<Mutex<VecDeque<u8>>>,
    plugin: Arc<str>,
}

impl StderrTail {
    /// Starts draining `stderr` in a task; the task ends at EOF.
    pub fn spawn<R>(plugin: &str, mut stderr: R) -> (Self, JoinHandle<()>)
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let tail = StderrTail {
            buf: Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES))),
            plugin: plugin.into(),
        };
        let sink = tail.clone();
        let task = tokio::spawn(async move {
            let mut chunk = vec![0u8; 8192];
            let mut line = Vec::new();
            loop {
                let n = match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                sink.push(&chunk[..n]);
                for &b in &chunk[..n] {
                    if b == b'\n' {
                        sink.log_line(&line);
                        line.clear();
                    } else if line.len() < STDERR_TAIL_BYTES {
                        line.push(b);
                    }
                }
            }
            if !line.is_empty() {
                sink.log_line(&line);
            }
        });
        (tail, task)
    }

    fn push(&self, bytes: &[u8]) {
        let mut buf = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        buf.extend(bytes);
        let excess = buf.len().saturating_sub(STDERR_TAIL_BYTES);
        buf.drain(..excess);
    }

    fn log_line(&self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        tracing::debug!(plugin = %self.plugin, "sidecar stderr: {}", redact(text.trim_end()));
    }

    /// The redacted tail. When the buffer has wrapped, the first (partial)
    /// line is dropped so a secret cut in half cannot escape redaction.
    pub fn text(&self) -> String {
        let buf = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        let bytes: Vec<u8> = buf.iter().copied().collect();
        drop(buf);
        let start = if bytes.len() >= STDERR_TAIL_BYTES {
            bytes.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1)
        } else {
            0
        };
        let text = String::from_utf8_lossy(&bytes[start..]);
        redact(text.trim_end()).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn tail_is_bounded_redacted_and_starts_on_a_line() {
        let (mut writer, reader) = tokio::io::duplex(4096);
        let (tail, task) = StderrTail::spawn("p", reader);
        let filler = "log line that is long enough to matter\n".repeat(1000);
        writer.write_all(filler.as_bytes()).await.unwrap();
        writer
            .write_all(b"last: token=abc123 and ghp_0123456789abcdefghijABCDEFGHIJ012345\n")
            .await
            .unwrap();
        drop(writer);
        task.await.unwrap();
        let text = tail.text();
        assert!(text.len() <= STDERR_TAIL_BYTES);
        assert!(text.starts_with("log line"), "{:?}", &text[..40]);
        assert!(
            text.ends_with("last: token=[REDACTED] and [REDACTED]"),
            "{text:?}"
        );
    }
}
