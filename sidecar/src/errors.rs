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
/// applies.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    #[error("{method} timed out after {after:?}")]
    Timeout {
        method: &'static str,
        after: Duration,
    },
    #[error("sidecar connection is down: {0}")]
    Interrupted(Failure),
    #[error("sidecar connection is closed")]
    Closed,
    #[error("sidecar is not ready")]
    NotReady,
    #[error("{method} failed: {}", redact(&error.to_string()))]
    Remote {
        method: &'static str,
        error: RpcError,
    },
    #[error("{method} message not sent: {detail}")]
    FrameTooLarge {
        method: &'static str,
        detail: String,
    },
    #[error("invalid {method} result: {}", redact(detail))]
    InvalidResult {
        method: &'static str,
        detail: String,
    },
    #[error("{0}")]
    Content(#[from] ContentError),
    #[error("externalised replacement rejected: {0}")]
    Replacement(ResolveError),
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
            CallError::InvalidResult { .. } => Some(ErrorReason::ProtocolError),
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
