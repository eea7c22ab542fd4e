//! The one error type of the SDK: what a handler returns and what a host
//! call fails with.

use reasonix_protocol::{ErrorReason, RpcError};

/// An error from a handler or from a call to the host.
///
/// How the peer sees it:
/// - [`Error::Protocol`] goes out as that reason, with the message if one is
///   given, else the reason's frozen message;
/// - [`Error::Host`] keeps the host's structured reason (with its frozen
///   message), anything else becomes `internal`;
/// - every other variant is `internal` with the frozen message: handler
///   text never leaks to the host (it is written to stderr instead). Two
///   exceptions where the text is the answer: a tool's [`Error::Failed`]
///   becomes `isError: true` with the text as content, and a UI action's
///   error becomes `accepted: false` with the text as message.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A protocol error the peer should see with this reason.
    #[error("{}", message.as_deref().unwrap_or(reason.message()))]
    Protocol {
        reason: ErrorReason,
        message: Option<String>,
    },
    /// A handler failed for its own reasons.
    #[error("{0}")]
    Failed(String),
    /// A host call before the host sent `extension/initialized`.
    #[error("the host is not ready: extension/initialized has not arrived yet")]
    NotReady,
    /// The user dismissed a `host/ui/request` without answering.
    #[error("the user cancelled the request")]
    Cancelled,
    /// The host answered a call with an error.
    #[error("the host refused the call: {0}")]
    Host(RpcError),
    /// The connection to the host ended while a call was in flight.
    #[error("the connection to the host is closed")]
    Disconnected,
}

impl Error {
    /// A protocol error with the reason's frozen message.
    pub fn reason(reason: ErrorReason) -> Self {
        Error::Protocol {
            reason,
            message: None,
        }
    }

    /// A protocol error with a message of its own.
    pub fn protocol(reason: ErrorReason, message: impl Into<String>) -> Self {
        Error::Protocol {
            reason,
            message: Some(message.into()),
        }
    }

    /// A handler failure with a description (logged, never sent, except as a
    /// tool's error content or a UI action's message).
    pub fn failed(message: impl std::fmt::Display) -> Self {
        Error::Failed(message.to_string())
    }

    /// `invalid_params` naming what was wrong.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Error::protocol(ErrorReason::InvalidParams, message)
    }

    /// `unknown_method`: the method (or the callback it needs) is not served.
    pub fn unknown_method() -> Self {
        Error::reason(ErrorReason::UnknownMethod)
    }

    /// The protocol reason this error is answered with.
    pub fn wire_reason(&self) -> ErrorReason {
        match self {
            Error::Protocol { reason, .. } => *reason,
            Error::Host(rpc) => rpc.structured_reason().unwrap_or(ErrorReason::Internal),
            _ => ErrorReason::Internal,
        }
    }

    /// The JSON-RPC error object sent to the host for this error.
    pub fn to_rpc(&self) -> RpcError {
        match self {
            Error::Protocol {
                reason,
                message: Some(message),
            } => RpcError::with_message(*reason, message.clone()),
            other => RpcError::from_reason(other.wire_reason()),
        }
    }

    /// True when the text may be shown to the host as is (the author chose
    /// it for the peer).
    pub(crate) fn is_for_peer(&self) -> bool {
        matches!(self, Error::Protocol { .. })
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Failed(format!("JSON: {e}"))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Failed(format!("I/O: {e}"))
    }
}

impl From<reasonix_protocol::DecodeError> for Error {
    fn from(e: reasonix_protocol::DecodeError) -> Self {
        Error::invalid_params(e.to_string())
    }
}

impl From<reasonix_protocol::PayloadError> for Error {
    fn from(e: reasonix_protocol::PayloadError) -> Self {
        Error::invalid_params(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_text_never_reaches_the_wire() {
        let rpc = Error::failed("secret path /home/me").to_rpc();
        assert_eq!(rpc.code, -32603);
        assert_eq!(rpc.message, ErrorReason::Internal.message());
        assert_eq!(rpc.structured_reason(), Some(ErrorReason::Internal));
    }

    #[test]
    fn protocol_errors_keep_reason_and_message() {
        let rpc = Error::invalid_params("payload.text: missing").to_rpc();
        assert_eq!(rpc.code, -32602);
        assert_eq!(rpc.message, "payload.text: missing");
        let frozen = Error::reason(ErrorReason::ProviderFailed).to_rpc();
        assert_eq!(frozen.message, ErrorReason::ProviderFailed.message());
        assert_eq!(
            frozen.structured_reason(),
            Some(ErrorReason::ProviderFailed)
        );
    }

    #[test]
    fn host_errors_keep_only_a_structured_reason() {
        let expired = Error::Host(RpcError::with_message(
            ErrorReason::ContentRefExpired,
            "gone: /secret",
        ));
        let rpc = expired.to_rpc();
        assert_eq!(
            rpc.structured_reason(),
            Some(ErrorReason::ContentRefExpired)
        );
        assert_eq!(rpc.message, ErrorReason::ContentRefExpired.message());
        let opaque = Error::Host(RpcError::server_busy());
        assert_eq!(opaque.wire_reason(), ErrorReason::Internal);
    }
}
