//! The frozen error table of generation B and the JSON-RPC error value.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fmt;

/// JSON-RPC code of every domain error that is not one of the four
/// standard-code reasons.
pub const DOMAIN_ERROR_CODE: i64 = -32000;
/// Transport-only: the frame is not JSON.
pub const CODE_PARSE_ERROR: i64 = -32700;
/// Transport-only (and `protocol_error`): the envelope is invalid.
pub const CODE_INVALID_REQUEST: i64 = -32600;
/// `unknown_method`.
pub const CODE_METHOD_NOT_FOUND: i64 = -32601;
/// `invalid_params`.
pub const CODE_INVALID_PARAMS: i64 = -32602;
/// `internal`.
pub const CODE_INTERNAL: i64 = -32603;
/// Transport-only: too many requests in flight (upstream SDK).
pub const CODE_SERVER_BUSY: i64 = -32099;

/// Message of the transport-only parse error.
pub const MESSAGE_PARSE_ERROR: &str = "parse error";
/// Message of the transport-only invalid-request error.
pub const MESSAGE_INVALID_REQUEST: &str = "invalid request";
/// Message of the transport-only server-busy error.
pub const MESSAGE_SERVER_BUSY: &str = "server busy";

/// The closed set of structured error reasons of generation B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorReason {
    ActivationFailed,
    CapabilityNotDeclared,
    CleanupFailed,
    ContentRefExpired,
    DependencyCycle,
    DependencyUnsatisfied,
    FrameTooLarge,
    InterceptTimeout,
    Internal,
    InvalidParams,
    ProtocolError,
    ProviderFailed,
    ProviderInterrupted,
    SchemaMismatch,
    ShutdownTimeout,
    StaleGeneration,
    StreamCancelled,
    StreamGap,
    UnknownMethod,
    UnsupportedVersion,
}

impl ErrorReason {
    /// Every reason, in the schema's (alphabetical) order.
    pub const ALL: [ErrorReason; 20] = [
        Self::ActivationFailed,
        Self::CapabilityNotDeclared,
        Self::CleanupFailed,
        Self::ContentRefExpired,
        Self::DependencyCycle,
        Self::DependencyUnsatisfied,
        Self::FrameTooLarge,
        Self::InterceptTimeout,
        Self::Internal,
        Self::InvalidParams,
        Self::ProtocolError,
        Self::ProviderFailed,
        Self::ProviderInterrupted,
        Self::SchemaMismatch,
        Self::ShutdownTimeout,
        Self::StaleGeneration,
        Self::StreamCancelled,
        Self::StreamGap,
        Self::UnknownMethod,
        Self::UnsupportedVersion,
    ];

    /// The wire name (`snake_case`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ActivationFailed => "activation_failed",
            Self::CapabilityNotDeclared => "capability_not_declared",
            Self::CleanupFailed => "cleanup_failed",
            Self::ContentRefExpired => "content_ref_expired",
            Self::DependencyCycle => "dependency_cycle",
            Self::DependencyUnsatisfied => "dependency_unsatisfied",
            Self::FrameTooLarge => "frame_too_large",
            Self::InterceptTimeout => "intercept_timeout",
            Self::Internal => "internal",
            Self::InvalidParams => "invalid_params",
            Self::ProtocolError => "protocol_error",
            Self::ProviderFailed => "provider_failed",
            Self::ProviderInterrupted => "provider_interrupted",
            Self::SchemaMismatch => "schema_mismatch",
            Self::ShutdownTimeout => "shutdown_timeout",
            Self::StaleGeneration => "stale_generation",
            Self::StreamCancelled => "stream_cancelled",
            Self::StreamGap => "stream_gap",
            Self::UnknownMethod => "unknown_method",
            Self::UnsupportedVersion => "unsupported_version",
        }
    }

    /// Looks a wire name up in the table; `None` for any other string.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// The JSON-RPC code this reason travels with.
    pub fn code(self) -> i64 {
        match self {
            Self::ProtocolError => CODE_INVALID_REQUEST,
            Self::UnknownMethod => CODE_METHOD_NOT_FOUND,
            Self::InvalidParams => CODE_INVALID_PARAMS,
            Self::Internal => CODE_INTERNAL,
            _ => DOMAIN_ERROR_CODE,
        }
    }

    /// Whether the operation may be retried.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::CleanupFailed
                | Self::ContentRefExpired
                | Self::InterceptTimeout
                | Self::Internal
                | Self::ProviderFailed
                | Self::ProviderInterrupted
                | Self::ShutdownTimeout
                | Self::StreamGap
        )
    }

    /// The frozen generic message of the schema's `errors` table.
    pub fn message(self) -> &'static str {
        match self {
            Self::ActivationFailed => {
                "Component activation failed; the new generation was not published."
            }
            Self::CapabilityNotDeclared => {
                "The extension used a capability its manifest did not declare."
            }
            Self::CleanupFailed => "Component cleanup failed while disposing scoped effects.",
            Self::ContentRefExpired => "The referenced content has expired.",
            Self::DependencyCycle => "The dependency graph contains a required cycle.",
            Self::DependencyUnsatisfied => {
                "A required dependency is missing or not version-compatible."
            }
            Self::FrameTooLarge => "The frame exceeds the frozen protocol size limit.",
            Self::InterceptTimeout => {
                "The extension did not answer an intercept within its timeout."
            }
            Self::Internal => "An internal extension protocol error occurred.",
            Self::InvalidParams => "The params do not match the registered method schema.",
            Self::ProtocolError => "The extension protocol frame or envelope is invalid.",
            Self::ProviderFailed => "The extension provider stream failed.",
            Self::ProviderInterrupted => "The extension provider stream was interrupted.",
            Self::SchemaMismatch => "A capability schema hash does not match the expected pin.",
            Self::ShutdownTimeout => {
                "The extension did not shut down within the requested timeout."
            }
            Self::StaleGeneration => "The message belongs to a superseded runtime generation.",
            Self::StreamCancelled => "The provider stream was cancelled.",
            Self::StreamGap => "A provider stream chunk is missing from the ordered sequence.",
            Self::UnknownMethod => "The method is not registered in Extension Protocol v2.",
            Self::UnsupportedVersion => "The peer's extension protocol version is not supported.",
        }
    }

    /// The `data` member this reason carries.
    pub fn data(self) -> ProtocolErrorData {
        ProtocolErrorData {
            reason: self,
            retryable: self.retryable(),
        }
    }
}

impl fmt::Display for ErrorReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `data` object of a structured (domain) error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolErrorData {
    pub reason: ErrorReason,
    pub retryable: bool,
}

impl ProtocolErrorData {
    /// True when `retryable` is the table's value for `reason`.
    pub fn is_consistent(&self) -> bool {
        self.retryable == self.reason.retryable()
    }
}

/// A JSON-RPC error object, as sent or received.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<RawValue>>,
}

impl PartialEq for RpcError {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl RpcError {
    /// A structured error with the frozen message of `reason`.
    pub fn from_reason(reason: ErrorReason) -> Self {
        Self::with_message(reason, reason.message())
    }

    /// A structured error with a handler-supplied message.
    pub fn with_message(reason: ErrorReason, message: impl Into<String>) -> Self {
        let data = serde_json::value::to_raw_value(&reason.data())
            .expect("ProtocolErrorData always serialises");
        Self {
            code: reason.code(),
            message: message.into(),
            data: Some(data),
        }
    }

    /// Transport-only `-32700 "parse error"` (no data).
    pub fn parse_error() -> Self {
        Self::bare(CODE_PARSE_ERROR, MESSAGE_PARSE_ERROR)
    }

    /// Transport-only `-32600 "invalid request"` (no data).
    pub fn invalid_request() -> Self {
        Self::bare(CODE_INVALID_REQUEST, MESSAGE_INVALID_REQUEST)
    }

    /// Transport-only `-32099 "server busy"` (no data).
    pub fn server_busy() -> Self {
        Self::bare(CODE_SERVER_BUSY, MESSAGE_SERVER_BUSY)
    }

    fn bare(code: i64, message: &str) -> Self {
        Self {
            code,
            message: message.to_owned(),
            data: None,
        }
    }

    /// The receiver rule: the structured reason is accepted only if `data`
    /// decodes to a reason in the table whose `retryable` matches the table.
    /// Anything else (no data, unknown reason, mismatch, extra members) makes
    /// the error opaque (`None`).
    pub fn structured_reason(&self) -> Option<ErrorReason> {
        let data: ProtocolErrorData = serde_json::from_str(self.data.as_ref()?.get()).ok()?;
        data.is_consistent().then_some(data.reason)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.structured_reason() {
            Some(reason) => write!(f, "{} ({}, code {})", self.message, reason, self.code),
            None => write!(f, "{} (code {})", self.message, self.code),
        }
    }
}

impl std::error::Error for RpcError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_twenty_distinct_reasons_that_round_trip() {
        let mut names: Vec<_> = ErrorReason::ALL.iter().map(|r| r.as_str()).collect();
        names.dedup();
        assert_eq!(names.len(), 20);
        for reason in ErrorReason::ALL {
            assert_eq!(ErrorReason::from_name(reason.as_str()), Some(reason));
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{}\"", reason.as_str()));
        }
        assert_eq!(ErrorReason::from_name("browser_unavailable"), None);
    }

    #[test]
    fn standard_codes_and_retryability() {
        assert_eq!(ErrorReason::ProtocolError.code(), -32600);
        assert_eq!(ErrorReason::UnknownMethod.code(), -32601);
        assert_eq!(ErrorReason::InvalidParams.code(), -32602);
        assert_eq!(ErrorReason::Internal.code(), -32603);
        assert_eq!(ErrorReason::StreamGap.code(), -32000);
        assert!(ErrorReason::Internal.retryable());
        assert!(!ErrorReason::FrameTooLarge.retryable());
        let retryable = ErrorReason::ALL.iter().filter(|r| r.retryable()).count();
        assert_eq!(retryable, 8);
    }

    #[test]
    fn structured_error_serialises_with_data() {
        let err = RpcError::from_reason(ErrorReason::ContentRefExpired);
        let json = serde_json::to_string(&err).unwrap();
        assert_eq!(
            json,
            r#"{"code":-32000,"message":"The referenced content has expired.","data":{"reason":"content_ref_expired","retryable":true}}"#
        );
        assert_eq!(
            err.structured_reason(),
            Some(ErrorReason::ContentRefExpired)
        );
    }

    #[test]
    fn transport_errors_have_no_data() {
        for (err, code, msg) in [
            (RpcError::parse_error(), -32700, "parse error"),
            (RpcError::invalid_request(), -32600, "invalid request"),
            (RpcError::server_busy(), -32099, "server busy"),
        ] {
            assert_eq!(err.code, code);
            assert_eq!(err.message, msg);
            assert!(err.data.is_none());
            assert_eq!(err.structured_reason(), None);
            assert!(!serde_json::to_string(&err).unwrap().contains("data"));
        }
    }

    #[test]
    fn receiver_rule_makes_inconsistent_errors_opaque() {
        let decode = |text: &str| serde_json::from_str::<RpcError>(text).unwrap();
        let ok = decode(
            r#"{"code":-32000,"message":"x","data":{"reason":"stream_gap","retryable":true}}"#,
        );
        assert_eq!(ok.structured_reason(), Some(ErrorReason::StreamGap));
        for opaque in [
            r#"{"code":-32000,"message":"x","data":{"reason":"stream_gap","retryable":false}}"#,
            r#"{"code":-32000,"message":"x","data":{"reason":"browser_timeout","retryable":true}}"#,
            r#"{"code":-32000,"message":"x","data":{"reason":"stream_gap"}}"#,
            r#"{"code":-32000,"message":"x","data":"stream_gap"}"#,
            r#"{"code":-32000,"message":"x"}"#,
        ] {
            assert_eq!(decode(opaque).structured_reason(), None, "{opaque}");
        }
    }
}
