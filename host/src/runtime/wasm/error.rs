//! How a wasm runtime operation fails.
//!
//! Every failure carries the protocol reason the dispatcher reports
//! (`intercept_timeout`, `activation_failed`, …) and a message that is
//! already credential-redacted and bounded, since guest text may end up in
//! it.

use reasonix_protocol::ErrorReason;

use super::sandbox::redact_guest_text;

/// What went wrong, as far as the caller needs to tell the cases apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmErrorKind {
    /// The host could not set up the engine, a store or a sandbox.
    Setup,
    /// The component file could not be read, compiled or instantiated.
    Load,
    /// The component speaks another protocol major (or a minor this host
    /// cannot adapt).
    UnsupportedVersion,
    /// The handshake (`initialize`) failed or the declaration exceeds the
    /// manifest ceiling.
    Handshake,
    /// The call ran past its budget (epoch deadline).
    Timeout,
    /// The guest tried to grow memory past its limit.
    MemoryLimit,
    /// The guest overflowed its call stack.
    StackOverflow,
    /// Any other trap (unreachable, out-of-bounds access, a trapping import).
    Trap,
    /// The guest answered with an `extension-error`.
    Rejected,
    /// The guest answered something the contract does not allow.
    Protocol,
}

impl WasmErrorKind {
    /// A trap leaves the instance unusable; it is rebuilt before the next call.
    pub fn poisons_instance(self) -> bool {
        matches!(
            self,
            WasmErrorKind::Timeout
                | WasmErrorKind::MemoryLimit
                | WasmErrorKind::StackOverflow
                | WasmErrorKind::Trap
        )
    }
}

/// A failed wasm runtime operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WasmError {
    pub kind: WasmErrorKind,
    /// The protocol reason reported for it.
    pub reason: ErrorReason,
    /// Redacted, bounded text.
    pub message: String,
}

impl WasmError {
    pub fn new(kind: WasmErrorKind, reason: ErrorReason, message: impl AsRef<str>) -> WasmError {
        WasmError {
            kind,
            reason,
            message: redact_guest_text(message.as_ref()),
        }
    }

    pub(crate) fn engine(message: impl AsRef<str>) -> WasmError {
        WasmError::new(WasmErrorKind::Setup, ErrorReason::Internal, message)
    }

    pub(crate) fn load(message: impl AsRef<str>) -> WasmError {
        WasmError::new(WasmErrorKind::Load, ErrorReason::ActivationFailed, message)
    }

    pub(crate) fn protocol(message: impl AsRef<str>) -> WasmError {
        WasmError::new(WasmErrorKind::Protocol, ErrorReason::ProtocolError, message)
    }

    pub(crate) fn handshake(reason: ErrorReason, message: impl AsRef<str>) -> WasmError {
        WasmError::new(WasmErrorKind::Handshake, reason, message)
    }

    pub(crate) fn unsupported_version(message: impl AsRef<str>) -> WasmError {
        WasmError::new(
            WasmErrorKind::UnsupportedVersion,
            ErrorReason::UnsupportedVersion,
            message,
        )
    }

    /// The guest's own `extension-error`; a missing message takes the
    /// reason's frozen text.
    pub(crate) fn rejected(reason: ErrorReason, message: Option<String>) -> WasmError {
        let message = message.unwrap_or_else(|| reason.message().to_owned());
        WasmError::new(WasmErrorKind::Rejected, reason, message)
    }
}
