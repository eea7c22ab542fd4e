//! Extension Protocol v2 (`reasonix.extension.v2`).
//!
//! The contract is written in WIT (`wit/since_v2.0.0/`); this crate holds the
//! JSON-RPC wire form of the same contract, as upstream Reasonix speaks it to
//! native sidecars: the strict frame dialect ([`frame`]), the frozen error
//! table ([`error`]), the limits ([`limits`]), the 17 methods ([`methods`])
//! with their params/result types ([`types`]), the 17 hook points and the
//! replacement slots ([`points`]), the per-point payload DTOs and the
//! re-validation of replacements ([`payloads`]), the shells a runtime
//! command never names ([`shells`]), and content-reference helpers
//! ([`content`]).

pub mod content;
pub mod error;
pub mod frame;
pub mod limits;
pub mod methods;
pub mod payloads;
pub mod points;
pub mod shells;
mod strict;
pub mod types;
pub mod validate;

pub use error::{ErrorReason, ProtocolErrorData, RpcError};
pub use frame::{
    EncodeError, Frame, FrameRejection, Id, InboundFrameTooLarge, Notification, Outcome,
    RejectionKind, Request, Response, check_frame_size, check_inbound_frame_size, decode_frame,
    encode_error, encode_frame, encode_notification, encode_request, encode_response,
    encode_result, trim_line,
};
pub use limits::*;
pub use methods::{Direction, Method, MethodClass, Params};
pub use payloads::{PayloadError, PointPayload, decode_payload, validate_replacement};
pub use points::{HookPoint, Slot};
pub use validate::{
    DecodeError, Validate, ValidationError, decode_json, decode_params, decode_result,
};
