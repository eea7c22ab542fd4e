//! The one way every command prints, so each rule holds for all of them:
//!
//! - a closed stdout (`reasonix plugin list | head -1`) never panics: the
//!   rest of the output is discarded, the command finishes its work (nothing
//!   is left half-done) and exits with its own status; another write failure
//!   (a full disk behind `>`) is reported once and turns success into exit 1;
//! - human text has its control characters removed (package and extension
//!   text cannot clear the screen or move the cursor), JSON is written
//!   exactly;
//! - a failure is `error: … [code]` / `next: …` on stderr and, with `--json`,
//!   `{"ok":false,"errorCode":…,"error":…}` on stdout ([`fail`]).
use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

/// Exit status of a failed operation.
pub const EXIT_FAILED: u8 = 1;
/// Exit status of a usage error.
pub const EXIT_USAGE: u8 = 2;

static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Write bytes to stdout as they are.
fn write_stdout(bytes: &[u8]) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        STDOUT_GONE.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            STDOUT_FAILED.store(true, Ordering::Relaxed);
            write_stderr(format!("error: cannot write to stdout: {e}\n").as_bytes());
        }
    }
}

/// Write bytes to stderr; a closed stderr is ignored (there is nowhere left
/// to say so).
fn write_stderr(bytes: &[u8]) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(bytes).and_then(|()| err.flush());
}

/// `text` without control characters other than newline and tab: escape
/// sequences, carriage returns and the like from package or extension text
/// cannot reach the terminal. Borrowed when there was nothing to remove.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if text
        .chars()
        .all(|c| !c.is_control() || c == '\n' || c == '\t')
    {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(
            text.chars()
                .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
                .collect(),
        )
    }
}

/// `text` on one line: newlines and tabs become spaces, other control
/// characters go (for one field of a line, e.g. a package's description).
pub fn one_line(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// Human text on stdout.
pub fn text(text: &str) {
    write_stdout(terminal_safe(text).as_bytes());
}

/// Human text on stderr.
pub fn note(text: &str) {
    write_stderr(terminal_safe(text).as_bytes());
}

/// One line of machine output on stdout, exactly as given (JSON, a path).
pub fn raw_line(text: &str) {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    write_stdout(line.as_bytes());
}

/// `value` as indented JSON on stdout.
pub fn json_pretty<T: Serialize + ?Sized>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => raw_line(&text),
        Err(e) => note(&format!("error: cannot encode the JSON output: {e}\n")),
    }
}

/// Whether stdout was found closed (the reader went away): a command that
/// would go on producing output (a chat reading more input) stops.
pub fn stdout_closed() -> bool {
    STDOUT_GONE.load(Ordering::Relaxed)
}

/// Whether stdout is a terminal (a person is reading, not a script).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// The exit status, after output problems: a command that succeeded but
/// could not write its output (other than to a closed pipe) failed.
pub fn finish(code: ExitCode) -> ExitCode {
    if STDOUT_FAILED.load(Ordering::Relaxed) && code == ExitCode::SUCCESS {
        ExitCode::from(EXIT_FAILED)
    } else {
        code
    }
}

/// Print to stdout as human text (control characters removed).
macro_rules! outln {
    () => { $crate::cli::output::text("\n") };
    ($($arg:tt)*) => { $crate::cli::output::text(&format!("{}\n", format_args!($($arg)*))) };
}

/// Print to stderr as human text (control characters removed).
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::output::note(&format!("{}\n", format_args!($($arg)*))) };
}
pub(crate) use {errln, outln};

/// Why a command failed: a stable `errorCode`, the message, what to do next
/// and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: String,
    pub message: String,
    pub next: Option<String>,
    pub exit: u8,
    /// The JSON `status`: `failed`, or `blocked` where upstream says so
    /// (removing a plugin that is not installed).
    pub status: &'static str,
}

impl Failure {
    /// An operation that failed (exit 1).
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            code: code.into(),
            message: message.into(),
            next: None,
            exit: EXIT_FAILED,
            status: "failed",
        }
    }

    /// A command line that cannot be run as given (exit 2, code `usage`).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            exit: EXIT_USAGE,
            ..Failure::new("usage", message)
        }
    }

    pub fn with_next(mut self, next: impl Into<String>) -> Failure {
        self.next = Some(next.into());
        self
    }

    pub fn with_status(mut self, status: &'static str) -> Failure {
        self.status = status;
        self
    }
}

impl From<&crate::install::InstallError> for Failure {
    fn from(e: &crate::install::InstallError) -> Failure {
        Failure::new(e.code.as_str(), e.message.clone()).with_next(e.next.clone())
    }
}

/// The JSON failure object of every `--json` command.
pub fn failure_json(op: &str, failure: &Failure) -> serde_json::Value {
    let mut value = serde_json::json!({
        "ok": false,
        "status": failure.status,
        "op": op,
        "errorCode": failure.code,
        "error": failure.message,
    });
    if let Some(next) = &failure.next {
        value["next"] = next.clone().into();
    }
    value
}

/// Report a failure: `error: … [code]` and `next: …` on stderr and, with
/// `json`, the failure object on stdout. Returns the failure's exit status.
pub fn fail(op: &str, failure: &Failure, json: bool) -> ExitCode {
    // The code ends the first line, before any detail lines (a stderr tail).
    let (first, rest) = failure
        .message
        .split_once('\n')
        .map_or((failure.message.as_str(), None), |(a, b)| (a, Some(b)));
    errln!("error: {first} [{}]", failure.code);
    if let Some(rest) = rest {
        errln!("{rest}");
    }
    if let Some(next) = &failure.next {
        errln!("next: {next}");
    }
    if json {
        raw_line(&crate::install::gojson::marshal(&failure_json(op, failure)));
    }
    ExitCode::from(failure.exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(
            terminal_safe("a\u{1b}[2Jb\r\nc\td\u{9b}e\0"),
            "a[2Jb\nc\tde"
        );
        assert!(matches!(terminal_safe("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(one_line("two\nlines\u{1b}[H"), "two lines[H");
    }

    #[test]
    fn the_failure_object_has_the_one_shape() {
        let f = Failure::new("plugin.not_installed", "plugin \"x\" is not installed")
            .with_next("run `reasonix plugin list`");
        let v = failure_json("show", &f);
        assert_eq!(v["ok"], false);
        assert_eq!(v["errorCode"], "plugin.not_installed");
        assert_eq!(v["error"], "plugin \"x\" is not installed");
        assert_eq!(v["next"], "run `reasonix plugin list`");
        assert_eq!(Failure::usage("bad").exit, EXIT_USAGE);
    }
}
