//! What a component may touch: no ambient authority.
//!
//! The WASI context of every instance is built from a [`SandboxPolicy`]
//! alone: no network (no TCP, no UDP, no name lookup, every address
//! refused), no environment but the manifest's `runtime.env`, no arguments,
//! and a filesystem made only of two preopens that wasmtime-wasi opens with
//! cap-std: the plugin root read-only at [`GUEST_PLUGIN_ROOT`] and the
//! plugin's data directory read-write at [`GUEST_DATA_DIR`]. cap-std resolves
//! every path (`..`, symlinks) inside its preopen, so nothing outside them is
//! reachable; how much the guest may hold open and store there is bounded
//! by [`super::fs_limits`]. Guest stdout and stderr go into the [`GuestLog`].

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::error::WasmError;

/// Where the guest sees the plugin root (read-only).
pub const GUEST_PLUGIN_ROOT: &str = "/plugin";
/// Where the guest sees its data directory (read-write).
pub const GUEST_DATA_DIR: &str = "/data";
/// How much guest output the host keeps (the newest bytes win).
pub const GUEST_LOG_TAIL_BYTES: usize = 16 * 1024;
/// The longest guest text kept in one error or log line.
pub const MAX_GUEST_TEXT: usize = 4096;

/// The sandbox of one plugin's component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The installed package directory, mounted read-only.
    pub plugin_root: PathBuf,
    /// `$REASONIX_HOME/data/<plugin>/`, created if missing, mounted
    /// read-write.
    pub data_dir: PathBuf,
    /// Exactly the manifest's `runtime.env`; nothing from the host's
    /// environment.
    pub env: BTreeMap<String, String>,
    /// What the data directory may hold (`runtime.sandbox.dataMiB`):
    /// writes past it fail for the guest.
    pub data_limit_bytes: u64,
}

impl SandboxPolicy {
    /// The policy for a plugin installed at `plugin_root` under a Reasonix
    /// home at `reasonix_home`.
    pub fn for_plugin(
        reasonix_home: &Path,
        plugin_id: &str,
        plugin_root: &Path,
        env: BTreeMap<String, String>,
    ) -> SandboxPolicy {
        SandboxPolicy {
            plugin_root: plugin_root.to_path_buf(),
            data_dir: data_dir(reasonix_home, plugin_id),
            env,
            data_limit_bytes: super::limits::data_quota_bytes(None),
        }
    }

    /// The manifest's `runtime.sandbox.dataMiB` (or the default).
    pub fn with_data_mib(mut self, data_mib: Option<u32>) -> SandboxPolicy {
        self.data_limit_bytes = super::limits::data_quota_bytes(data_mib);
        self
    }

    /// A fresh WASI context for one instance. Creates the data directory.
    pub(crate) fn wasi_context(&self, log: &GuestLog) -> Result<WasiCtx, WasmError> {
        std::fs::create_dir_all(&self.data_dir).map_err(|e| {
            WasmError::engine(format!(
                "cannot create the data directory {}: {e}",
                self.data_dir.display()
            ))
        })?;
        let mut builder = WasiCtxBuilder::new();
        builder
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .socket_addr_check(|_, _| Box::pin(async { false }))
            .allow_blocking_current_thread(true)
            .stdout(log.writer(LogSource::Stdout))
            .stderr(log.writer(LogSource::Stderr));
        for (name, value) in &self.env {
            builder.env(name, value);
        }
        builder
            .preopened_dir(&self.plugin_root, GUEST_PLUGIN_ROOT, FsPerms::ReadOnly)
            .map_err(|e| {
                WasmError::engine(format!(
                    "cannot open the plugin root {}: {e}",
                    self.plugin_root.display()
                ))
            })?;
        builder
            .preopened_dir(&self.data_dir, GUEST_DATA_DIR, FsPerms::ReadWrite)
            .map_err(|e| {
                WasmError::engine(format!(
                    "cannot open the data directory {}: {e}",
                    self.data_dir.display()
                ))
            })?;
        Ok(builder.build())
    }
}

/// `$REASONIX_HOME/data/<plugin>/`.
pub fn data_dir(reasonix_home: &Path, plugin_id: &str) -> PathBuf {
    reasonix_home.join("data").join(plugin_id)
}

/// Guest text on its way into an error or the log: control characters
/// dropped, bounded, credentials redacted.
pub fn redact_guest_text(text: &str) -> String {
    let mut bounded: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .take(MAX_GUEST_TEXT)
        .collect();
    if bounded.len() < text.len() && text.chars().count() > MAX_GUEST_TEXT {
        bounded.push('…');
    }
    super::redaction::redact(&bounded)
}

/// Which stream a guest log line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSource {
    Stdout,
    Stderr,
    /// The `log` import, with its level.
    Log(&'static str),
}

impl LogSource {
    fn label(self) -> &'static str {
        match self {
            LogSource::Stdout => "stdout",
            LogSource::Stderr => "stderr",
            LogSource::Log(level) => level,
        }
    }
}

/// The captured output of one plugin's component: a bounded tail of
/// redacted lines, shared by every instance of the runtime (it survives an
/// instance rebuilt after a trap).
#[derive(Debug, Clone)]
pub struct GuestLog {
    plugin: Arc<str>,
    inner: Arc<Mutex<LogInner>>,
}

#[derive(Debug, Default)]
struct LogInner {
    lines: VecDeque<String>,
    bytes: usize,
    /// Unterminated output per stream (bounded like a line).
    partial_stdout: String,
    partial_stderr: String,
    dropped_lines: u64,
}

impl GuestLog {
    pub fn new(plugin: &str) -> GuestLog {
        GuestLog {
            plugin: plugin.into(),
            inner: Arc::default(),
        }
    }

    /// Append one complete line (blank lines are not kept).
    pub fn line(&self, source: LogSource, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let line = format!("{}: {}", source.label(), redact_guest_text(text));
        tracing::info!(target: "reasonix::wasm", plugin = %self.plugin, "{line}");
        let mut inner = self.lock();
        inner.push(line);
    }

    /// The kept tail, oldest line first.
    pub fn tail(&self) -> Vec<String> {
        self.lock().lines.iter().cloned().collect()
    }

    /// Lines dropped from the front to keep the tail bounded.
    pub fn dropped_lines(&self) -> u64 {
        self.lock().dropped_lines
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LogInner> {
        // A panic while holding the lock cannot leave the tail inconsistent
        // in a way that matters for a log.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write_bytes(&self, source: LogSource, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let mut complete = Vec::new();
        {
            let mut inner = self.lock();
            let partial = match source {
                LogSource::Stderr => &mut inner.partial_stderr,
                _ => &mut inner.partial_stdout,
            };
            for piece in text.split_inclusive('\n') {
                if let Some(line) = piece.strip_suffix('\n') {
                    partial.push_str(line);
                    complete.push(std::mem::take(partial));
                } else if partial.len() < MAX_GUEST_TEXT {
                    partial.push_str(piece);
                }
            }
        }
        for line in complete {
            self.line(source, line.trim_end_matches('\r'));
        }
    }

    fn writer(&self, source: LogSource) -> LogWriter {
        LogWriter {
            log: self.clone(),
            source,
        }
    }
}

impl LogInner {
    fn push(&mut self, line: String) {
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.bytes > GUEST_LOG_TAIL_BYTES {
            match self.lines.pop_front() {
                Some(old) => {
                    self.bytes -= old.len();
                    self.dropped_lines += 1;
                }
                None => break,
            }
        }
    }
}

/// A guest stdout/stderr that feeds the [`GuestLog`]. It never refuses a
/// write (a guest that prints a lot loses old lines, not its ability to
/// print), so printing cannot make a guest trap.
#[derive(Clone)]
struct LogWriter {
    log: GuestLog,
    source: LogSource,
}

impl IsTerminal for LogWriter {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for LogWriter {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

/// What one `check-write` grants; writes are consumed at once.
const WRITE_BUDGET: usize = 64 * 1024;

#[wasmtime_wasi::async_trait]
impl OutputStream for LogWriter {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.log.write_bytes(self.source, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_BUDGET)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for LogWriter {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for LogWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.log.write_bytes(self.source, buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keeps_a_bounded_tail_of_complete_lines() {
        let log = GuestLog::new("p");
        for i in 0..2000 {
            log.write_bytes(LogSource::Stdout, format!("line {i}\n").as_bytes());
        }
        let tail = log.tail();
        let bytes: usize = tail.iter().map(String::len).sum();
        assert!(bytes <= GUEST_LOG_TAIL_BYTES);
        assert_eq!(tail.last().map(String::as_str), Some("stdout: line 1999"));
        assert!(log.dropped_lines() > 0);
    }

    #[test]
    fn blank_lines_are_not_kept() {
        let log = GuestLog::new("p");
        log.write_bytes(LogSource::Stderr, b"\n  \nreal line\n\n");
        assert_eq!(log.tail(), vec!["stderr: real line".to_owned()]);
    }

    #[test]
    fn partial_lines_join_across_writes() {
        let log = GuestLog::new("p");
        log.write_bytes(LogSource::Stderr, b"hel");
        log.write_bytes(LogSource::Stderr, b"lo\r\nnext");
        assert_eq!(log.tail(), vec!["stderr: hello".to_owned()]);
    }

    #[test]
    fn guest_text_is_bounded_and_plain() {
        let long = "x".repeat(MAX_GUEST_TEXT * 2);
        assert!(redact_guest_text(&long).chars().count() <= MAX_GUEST_TEXT + 1);
        assert_eq!(redact_guest_text("a\u{1b}[2Jb\0"), "a[2Jb");
    }
}
