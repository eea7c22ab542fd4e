//! Error and status types of a sidecar connection. Every text that may hold
//! sidecar output is redacted before it is stored here.

use std::fmt;
use std::time::Duration;

use reasonix_protocol::error::{ErrorReason, RpcError};

use crate::content::{ContentError, ResolveError};
use crate::redact::redact;

/// What ended a connection that was not shut down in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// stdout reached EOF or the process exited.
    Exited,
    /// The sidecar sent traffic before `extension/initialized`.
    Poisoned,
    /// An inbound frame exceeded the frame cap.
    FrameTooLarge,
    /// A write to the sidecar's stdin stalled past the bound.
    WriteStalled,
    /// Reading or writing the pipes failed.
    Transport,
    /// The notification queue was full.
    QueueFull,
    /// The handshake failed and the process was killed.
    StartFailed,
}

/// Why a connection is down. Cloned into every pending and later call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    /// Redacted description.
    pub message: String,
}

impl Failure {
    pub(crate) fn new(kind: FailureKind, message: impl AsRef<str>) -> Self {
        Failure {
            kind,
            message: redact(message.as_ref()).into_owned(),
        }
    }

    /// The protocol reason that describes the failure.
    pub fn reason(&self) -> ErrorReason {
        match self.kind {
            FailureKind::Poisoned => ErrorReason::ProtocolError,
            FailureKind::FrameTooLarge => ErrorReason::FrameTooLarge,
            _ => ErrorReason::ProviderInterrupted,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Where a sidecar is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Spawned, handshake not finished.
    Starting,
    /// Handshake accepted; calls are served.
    Ready,
    /// `shutdown()` is running.
    ShuttingDown,
    /// Shut down in order (or never started).
    Stopped,
    /// The connection ended without an orderly shutdown.
    Crashed(Failure),
}

/// A failed call. [`CallError::reason`] gives the protocol reason where one
/// applies; the text ends with it in brackets (`… [intercept_timeout]`), as
/// a [`StartError`]'s does, so a person and a log search see which row of
/// the frozen error table the failure is.
#[derive(Debug, Clone)]
pub enum CallError {
    Timeout {
        method: &'static str,
        after: Duration,
    },
    Interrupted(Failure),
    Closed,
    NotReady,
    Remote {
        method: &'static str,
        error: RpcError,
    },
    FrameTooLarge {
        method: &'static str,
        detail: String,
    },
    InvalidResult {
        method: &'static str,
        detail: String,
    },
    /// The sidecar broke the framing or answered an id the host never sent
    /// while this call waited: its answer cannot be trusted to arrive.
    Protocol {
        method: &'static str,
        detail: String,
    },
    Content(ContentError),
    Replacement(ResolveError),
}

impl CallError {
    /// The text without the trailing `[reason]` (for a message that shows
    /// the reason elsewhere, as a [`StartError`] does).
    pub fn message(&self) -> String {
        let mut out = String::new();
        let _ = fmt::Write::write_fmt(&mut out, format_args!("{}", Bare(self)));
        out
    }
}

struct Bare<'a>(&'a CallError);

impl fmt::Display for Bare<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            CallError::Timeout { method, after } => write!(f, "{method} timed out after {after:?}"),
            CallError::Interrupted(failure) => write!(f, "sidecar connection is down: {failure}"),
            CallError::Closed => f.write_str("sidecar connection is closed"),
            CallError::NotReady => f.write_str("sidecar is not ready"),
            CallError::Remote { method, error } => {
                write!(f, "{method} failed: {}", redact(&error.to_string()))
            }
            CallError::FrameTooLarge { method, detail } => {
                write!(f, "{method} message not sent: {detail}")
            }
            CallError::InvalidResult { method, detail } => {
                write!(f, "invalid {method} result: {}", redact(detail))
            }
            CallError::Protocol { method, detail } => {
                write!(f, "{method} failed: {}", redact(detail))
            }
            CallError::Content(e) => write!(f, "{e}"),
            CallError::Replacement(e) => write!(f, "externalised replacement rejected: {e}"),
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Bare(self))?;
        match self.reason() {
            Some(reason) => write!(f, "{}", reason_suffix(&Some(reason))),
            None => Ok(()),
        }
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Content(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ContentError> for CallError {
    fn from(e: ContentError) -> Self {
        CallError::Content(e)
    }
}

impl CallError {
    /// The protocol reason of this failure, if one applies.
    pub fn reason(&self) -> Option<ErrorReason> {
        match self {
            CallError::Timeout { method, .. } if *method == "extension/intercept" => {
                Some(ErrorReason::InterceptTimeout)
            }
            CallError::Timeout { .. } => None,
            CallError::Interrupted(f) => Some(f.reason()),
            CallError::Closed => Some(ErrorReason::ProviderInterrupted),
            CallError::NotReady => Some(ErrorReason::ProtocolError),
            CallError::Remote { error, .. } => error.structured_reason(),
            CallError::FrameTooLarge { .. } => Some(ErrorReason::FrameTooLarge),
            CallError::InvalidResult { .. } | CallError::Protocol { .. } => {
                Some(ErrorReason::ProtocolError)
            }
            CallError::Content(ContentError::TooLarge { .. }) => Some(ErrorReason::FrameTooLarge),
            CallError::Content(_) => Some(ErrorReason::ContentRefExpired),
            CallError::Replacement(ResolveError::Expired(_)) => {
                Some(ErrorReason::ContentRefExpired)
            }
            CallError::Replacement(_) => Some(ErrorReason::ProtocolError),
        }
    }
}

/// The step of `Sidecar::start` that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartStage {
    /// The launch spec was refused (shell, relative command, bad env).
    Launch,
    /// The process could not be spawned.
    Spawn,
    /// The initialize exchange failed (timeout, crash, poisoning, decode).
    Initialize,
    /// The answer broke a rule (version, undeclared capability).
    Validate,
    /// Sending `extension/initialized` failed.
    Initialized,
}

impl fmt::Display for StartStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StartStage::Launch => "launch",
            StartStage::Spawn => "spawn",
            StartStage::Initialize => "initialize",
            StartStage::Validate => "validate",
            StartStage::Initialized => "initialized",
        })
    }
}

/// A sidecar that did not start. The process (group) is already killed and
/// reaped when this is returned.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "sidecar {plugin} failed at {stage} after {elapsed:?}{}: {detail}{}",
    reason_suffix(reason),
    tail_suffix(stderr_tail)
)]
pub struct StartError {
    pub plugin: String,
    pub stage: StartStage,
    pub elapsed: Duration,
    /// The protocol reason, where one applies (`protocol_error`,
    /// `unsupported_version`, `capability_not_declared`, `frame_too_large`…).
    pub reason: Option<ErrorReason>,
    /// Redacted description.
    pub detail: String,
    /// Redacted last 16 KiB of the sidecar's stderr.
    pub stderr_tail: String,
}

/// The protocol reason code, so a person (and a log search) sees which row
/// of the frozen error table the failure is.
fn reason_suffix(reason: &Option<ErrorReason>) -> String {
    reason
        .map(|r| format!(" [{}]", r.as_str()))
        .unwrap_or_default()
}

fn tail_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("\nsidecar stderr:\n{tail}")
    }
}
