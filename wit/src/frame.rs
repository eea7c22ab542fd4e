//! The JSON-RPC 2.0 envelope in the strict dialect of spec §2, and the
//! NDJSON line rules around it.
//!
//! Params and results stay raw JSON (`Box<RawValue>`) so large payloads pass
//! through without building a `Value` tree; decode them per method with
//! [`crate::decode`].

use crate::error::RpcError;
use crate::limits::FRAME_BYTES;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use std::fmt;

/// A request id: an integer or `null` (strings and floats are rejected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Id {
    Number(i64),
    Null,
}

impl Id {
    /// Parses the raw JSON text of an `id` member by the dialect's rule:
    /// `null`, or digits with an optional `-` and no leading zeros, fitting
    /// in an i64.
    pub fn from_json_text(text: &str) -> Option<Id> {
        if text == "null" {
            return Some(Id::Null);
        }
        let digits = text.strip_prefix('-').unwrap_or(text);
        let well_formed = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        if !well_formed {
            return None;
        }
        text.parse::<i64>().ok().map(Id::Number)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::Null => f.write_str("null"),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Number(n) => serializer.serialize_i64(*n),
            Id::Null => serializer.serialize_unit(),
        }
    }
}

/// A request: has an id and expects exactly one response.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: Id,
    pub method: String,
    /// Always a JSON object; an absent `params` is stored as `{}`.
    pub params: Box<RawValue>,
}

/// A notification: no id, no response.
#[derive(Debug, Clone)]
pub struct Notification {
    pub method: String,
    /// Always a JSON object; an absent `params` is stored as `{}`.
    pub params: Box<RawValue>,
}

/// What a response carries: exactly one of `result` or `error`.
#[derive(Debug, Clone)]
pub enum Outcome {
    Result(Box<RawValue>),
    Error(RpcError),
}

/// A response to an earlier request.
#[derive(Debug, Clone)]
pub struct Response {
    pub id: Id,
    pub outcome: Outcome,
}

/// One decoded frame.
#[derive(Debug, Clone)]
pub enum Frame {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

/// Why an inbound frame was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectionKind {
    /// Not JSON at all: answered with `-32700 "parse error"`, id `null`.
    Parse,
    /// JSON, but not a valid envelope: answered with `-32600 "invalid request"`.
    InvalidRequest,
}

/// An inbound frame that violates the dialect. It knows its JSON-RPC answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {detail}", match kind { RejectionKind::Parse => "parse error", RejectionKind::InvalidRequest => "invalid request" })]
pub struct FrameRejection {
    pub kind: RejectionKind,
    /// The id to answer with: the original id if it was valid, else `null`.
    pub id: Id,
    /// What exactly was wrong (for logs; never sent on the wire).
    pub detail: String,
}

impl FrameRejection {
    fn parse(detail: impl Into<String>) -> Self {
        Self {
            kind: RejectionKind::Parse,
            id: Id::Null,
            detail: detail.into(),
        }
    }

    fn invalid(id: Id, detail: impl Into<String>) -> Self {
        Self {
            kind: RejectionKind::InvalidRequest,
            id,
            detail: detail.into(),
        }
    }

    /// The error object of the answer (transport-only codes carry no data).
    pub fn error(&self) -> RpcError {
        match self.kind {
            RejectionKind::Parse => RpcError::parse_error(),
            RejectionKind::InvalidRequest => RpcError::invalid_request(),
        }
    }

    /// The full answer frame.
    pub fn response(&self) -> Response {
        Response {
            id: self.id,
            outcome: Outcome::Error(self.error()),
        }
    }
}

/// Members of an envelope as raw JSON; `Some` also for an explicit `null`,
/// so that "present but null" is distinguishable from "absent".
#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The strict error-object shape: integer `code`, string `message`, any `data`.
#[derive(Deserialize)]
struct RawErrorObject {
    code: i64,
    message: String,
    #[serde(default, deserialize_with = "present_owned")]
    data: Option<Box<RawValue>>,
}

fn present_owned<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("{} is JSON")
}

fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// Removes the trailing `\r`/`\n` and surrounding ASCII whitespace of one
/// line; `None` when nothing is left (empty lines are ignored).
pub fn trim_line(line: &[u8]) -> Option<&[u8]> {
    let trimmed = line.trim_ascii();
    (!trimmed.is_empty()).then_some(trimmed)
}

/// Decodes one line (already split at `\n`; surrounding whitespace and a
/// trailing `\r` are tolerated) into a frame, by the strict dialect.
pub fn decode_frame(line: &[u8]) -> Result<Frame, FrameRejection> {
    let line = line.trim_ascii();
    let text = std::str::from_utf8(line)
        .map_err(|e| FrameRejection::parse(format!("frame is not UTF-8: {e}")))?;
    // One pass for a well-formed object (the usual frame); anything that
    // fails it is parsed again in two steps, to tell "not JSON" from "not
    // an envelope".
    let envelope = match serde_json::from_str::<RawEnvelope<'_>>(text) {
        Ok(envelope) if text.starts_with('{') => envelope,
        _ => envelope_slowly(text)?,
    };

    // The id is judged first so that every later rejection can echo it.
    let id = match envelope.id {
        None => None,
        Some(raw) => match Id::from_json_text(raw.get()) {
            Some(id) => Some(id),
            None => {
                return Err(FrameRejection::invalid(
                    Id::Null,
                    format!("id {} is not an integer or null", raw.get()),
                ));
            }
        },
    };
    let answer_id = id.unwrap_or(Id::Null);
    let invalid = |detail: String| FrameRejection::invalid(answer_id, detail);

    match envelope.jsonrpc {
        None => return Err(invalid("missing member \"jsonrpc\"".into())),
        Some(raw) => {
            if serde_json::from_str::<String>(raw.get()).ok().as_deref() != Some("2.0") {
                return Err(invalid(format!(
                    "jsonrpc must be \"2.0\", got {}",
                    raw.get()
                )));
            }
        }
    }

    if let Some(raw_method) = envelope.method {
        let method: String = serde_json::from_str(raw_method.get())
            .map_err(|_| invalid(format!("method {} is not a string", raw_method.get())))?;
        if method.is_empty() {
            return Err(invalid("method is empty".into()));
        }
        if envelope.result.is_some() || envelope.error.is_some() {
            return Err(invalid(format!(
                "request {method:?} carries a result or error"
            )));
        }
        let params = match envelope.params {
            None => empty_object(),
            Some(raw) if is_object(raw) => raw.to_owned(),
            Some(raw) => {
                return Err(invalid(format!(
                    "params of {method:?} must be an object, got {}",
                    raw.get()
                )));
            }
        };
        return Ok(match id {
            Some(id) => Frame::Request(Request { id, method, params }),
            None => Frame::Notification(Notification { method, params }),
        });
    }

    let Some(id) = id else {
        return Err(invalid("frame has neither method nor id".into()));
    };
    if envelope.params.is_some() {
        return Err(invalid("response carries params".into()));
    }
    let outcome = match (envelope.result, envelope.error) {
        (Some(result), None) => Outcome::Result(result.to_owned()),
        (None, Some(error)) => {
            let error: RawErrorObject = serde_json::from_str(error.get()).map_err(|e| {
                invalid(format!(
                    "error object needs integer code and string message: {e}"
                ))
            })?;
            Outcome::Error(RpcError {
                code: error.code,
                message: error.message,
                data: error.data,
            })
        }
        (Some(_), Some(_)) => return Err(invalid("response has both result and error".into())),
        (None, None) => return Err(invalid("response has neither result nor error".into())),
    };
    Ok(Frame::Response(Response { id, outcome }))
}

fn envelope_slowly(text: &str) -> Result<RawEnvelope<'_>, FrameRejection> {
    let value: &RawValue = serde_json::from_str(text)
        .map_err(|e| FrameRejection::parse(format!("frame is not JSON: {e}")))?;
    if !is_object(value) {
        return Err(FrameRejection::invalid(
            Id::Null,
            "frame is not a JSON object",
        ));
    }
    serde_json::from_str(value.get())
        .map_err(|e| FrameRejection::invalid(Id::Null, format!("malformed envelope: {e}")))
}

/// An outbound frame could not be produced; only this message fails.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error("could not serialise the frame: {0}")]
    Json(#[from] serde_json::Error),
    #[error("outbound frame is {size} bytes; limit is {limit}")]
    FrameTooLarge { size: usize, limit: usize },
}

#[derive(Serialize)]
struct OutboundEnvelope<'a, P: Serialize + ?Sized, R: Serialize + ?Sized> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Id>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
}

impl<'a, P: Serialize + ?Sized, R: Serialize + ?Sized> OutboundEnvelope<'a, P, R> {
    fn new() -> Self {
        Self {
            jsonrpc: "2.0",
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        }
    }

    /// Compact JSON plus `\n`, checked against the frame cap (newline
    /// included). serde_json does not HTML-escape, matching upstream.
    fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// [`Self::encode`] appended to `out`; returns the frame's length. On
    /// failure `out` is left as it was.
    fn encode_into(&self, out: &mut Vec<u8>) -> Result<usize, EncodeError> {
        let start = out.len();
        let encoded = serde_json::to_writer(&mut *out, self)
            .map_err(EncodeError::from)
            .and_then(|()| {
                out.push(b'\n');
                check_frame_size(out.len() - start)
            });
        match encoded {
            Ok(()) => Ok(out.len() - start),
            Err(error) => {
                out.truncate(start);
                Err(error)
            }
        }
    }
}

/// An inbound line over the cap: fatal to the connection (upstream sends no
/// error frame, it just ends `Serve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("inbound frame is {size} bytes; limit is {limit}")]
pub struct InboundFrameTooLarge {
    /// Bytes read so far, counting the trailing newline if there was one.
    pub size: usize,
    pub limit: usize,
}

/// Checks an inbound line of `size` bytes (trailing `\n` included, as
/// upstream's reader counts it) against the cap.
pub fn check_inbound_frame_size(size: usize) -> Result<(), InboundFrameTooLarge> {
    if size > FRAME_BYTES {
        return Err(InboundFrameTooLarge {
            size,
            limit: FRAME_BYTES,
        });
    }
    Ok(())
}

/// Fails when an outbound frame of `size` bytes (newline included) exceeds
/// the cap.
pub fn check_frame_size(size: usize) -> Result<(), EncodeError> {
    if size > FRAME_BYTES {
        return Err(EncodeError::FrameTooLarge {
            size,
            limit: FRAME_BYTES,
        });
    }
    Ok(())
}

/// Encodes a request line.
pub fn encode_request<P: Serialize + ?Sized>(
    id: Id,
    method: &str,
    params: &P,
) -> Result<Vec<u8>, EncodeError> {
    let mut env = OutboundEnvelope::<P, ()>::new();
    env.id = Some(id);
    env.method = Some(method);
    env.params = Some(params);
    env.encode()
}

/// [`encode_request`] appended to `out`, a buffer the caller reuses (a large
/// payload is then copied once, into memory already mapped); returns the
/// frame's length. On failure `out` is left as it was.
pub fn encode_request_into<P: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: Id,
    method: &str,
    params: &P,
) -> Result<usize, EncodeError> {
    let mut env = OutboundEnvelope::<P, ()>::new();
    env.id = Some(id);
    env.method = Some(method);
    env.params = Some(params);
    env.encode_into(out)
}

/// Encodes a notification line.
pub fn encode_notification<P: Serialize + ?Sized>(
    method: &str,
    params: &P,
) -> Result<Vec<u8>, EncodeError> {
    let mut env = OutboundEnvelope::<P, ()>::new();
    env.method = Some(method);
    env.params = Some(params);
    env.encode()
}

/// Encodes a success response line.
pub fn encode_result<R: Serialize + ?Sized>(id: Id, result: &R) -> Result<Vec<u8>, EncodeError> {
    let mut env = OutboundEnvelope::<(), R>::new();
    env.id = Some(id);
    env.result = Some(result);
    env.encode()
}

/// Encodes an error response line.
pub fn encode_error(id: Id, error: &RpcError) -> Result<Vec<u8>, EncodeError> {
    let mut env = OutboundEnvelope::<(), ()>::new();
    env.id = Some(id);
    env.error = Some(error);
    env.encode()
}

/// Encodes any decoded frame back to a line.
pub fn encode_frame(frame: &Frame) -> Result<Vec<u8>, EncodeError> {
    match frame {
        Frame::Request(r) => encode_request(r.id, &r.method, &*r.params),
        Frame::Notification(n) => encode_notification(&n.method, &*n.params),
        Frame::Response(r) => encode_response(r),
    }
}

/// Encodes a response frame.
pub fn encode_response(response: &Response) -> Result<Vec<u8>, EncodeError> {
    match &response.outcome {
        Outcome::Result(result) => encode_result(response.id, &**result),
        Outcome::Error(error) => encode_error(response.id, error),
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(d)?;
        Id::from_json_text(raw.get())
            .ok_or_else(|| de::Error::custom(format!("id {} is not an integer or null", raw.get())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_encode_into_a_reused_buffer_and_a_refused_one_leaves_it_intact() {
        let params = serde_json::json!({"payload": "x"});
        let mut out = b"earlier\n".to_vec();
        let n = encode_request_into(&mut out, Id::Number(7), "m", &params).unwrap();
        let alone = encode_request(Id::Number(7), "m", &params).unwrap();
        assert_eq!(n, alone.len());
        assert_eq!(&out[8..], alone.as_slice());
        let huge = serde_json::json!({"payload": "x".repeat(crate::limits::FRAME_BYTES)});
        let err = encode_request_into(&mut out, Id::Number(8), "m", &huge).unwrap_err();
        assert!(matches!(err, EncodeError::FrameTooLarge { .. }), "{err}");
        assert_eq!(out.len(), 8 + n, "a refused frame leaves nothing behind");
    }

    fn reject(line: &str) -> FrameRejection {
        match decode_frame(line.as_bytes()) {
            Ok(frame) => panic!("accepted {line}: {frame:?}"),
            Err(r) => r,
        }
    }

    fn invalid_with(line: &str, id: Id) {
        let r = reject(line);
        assert_eq!(r.kind, RejectionKind::InvalidRequest, "{line}: {r}");
        assert_eq!(r.id, id, "{line}");
    }

    #[test]
    fn integer_ids_are_accepted_including_negative_and_null() {
        for (text, id) in [
            ("1", Id::Number(1)),
            ("0", Id::Number(0)),
            ("-7", Id::Number(-7)),
            ("9223372036854775807", Id::Number(i64::MAX)),
            ("null", Id::Null),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
            match decode_frame(line.as_bytes()).unwrap() {
                Frame::Request(r) => {
                    assert_eq!(r.id, id);
                    assert_eq!(r.params.get(), "{}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn float_and_string_ids_are_rejected_with_null_id() {
        for text in [
            "1.0",
            "1e0",
            "-1.5",
            "\"1\"",
            "true",
            "{}",
            "[1]",
            "9223372036854775808",
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
            invalid_with(&line, Id::Null);
        }
    }

    #[test]
    fn leading_zero_ids_are_not_json_so_a_parse_error() {
        for text in ["01", "-01", "00"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
            let r = reject(&line);
            assert_eq!(r.kind, RejectionKind::Parse, "{line}");
            assert_eq!(r.id, Id::Null);
        }
        // The id rule itself also refuses them (raw text from other sources).
        for text in ["01", "-01", "00", "1.0", "", "-"] {
            assert_eq!(Id::from_json_text(text), None, "{text}");
        }
    }

    #[test]
    fn params_must_be_an_object_when_present() {
        invalid_with(
            r#"{"jsonrpc":"2.0","id":3,"method":"m","params":[1]}"#,
            Id::Number(3),
        );
        invalid_with(
            r#"{"jsonrpc":"2.0","id":3,"method":"m","params":null}"#,
            Id::Number(3),
        );
        invalid_with(r#"{"jsonrpc":"2.0","method":"m","params":"x"}"#, Id::Null);
        match decode_frame(br#"{"jsonrpc":"2.0","method":"n","params":{"a":1}}"#).unwrap() {
            Frame::Notification(n) => {
                assert_eq!(n.method, "n");
                assert_eq!(n.params.get(), r#"{"a":1}"#);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn response_needs_exactly_one_of_result_and_error() {
        invalid_with(
            r#"{"jsonrpc":"2.0","id":4,"result":1,"error":{"code":1,"message":"m"}}"#,
            Id::Number(4),
        );
        invalid_with(r#"{"jsonrpc":"2.0","id":4}"#, Id::Number(4));
        invalid_with(
            r#"{"jsonrpc":"2.0","id":4,"result":{},"params":{}}"#,
            Id::Number(4),
        );
        invalid_with(r#"{"jsonrpc":"2.0","result":{}}"#, Id::Null);
        match decode_frame(br#"{"jsonrpc":"2.0","id":4,"result":null}"#).unwrap() {
            Frame::Response(Response {
                id: Id::Number(4),
                outcome: Outcome::Result(r),
            }) => assert_eq!(r.get(), "null"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn error_objects_need_code_and_message() {
        invalid_with(
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":1}}"#,
            Id::Number(5),
        );
        invalid_with(
            r#"{"jsonrpc":"2.0","id":5,"error":{"message":"m"}}"#,
            Id::Number(5),
        );
        invalid_with(
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":1.5,"message":"m"}}"#,
            Id::Number(5),
        );
        invalid_with(r#"{"jsonrpc":"2.0","id":5,"error":"boom"}"#, Id::Number(5));
        let line = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"m","data":{"reason":"stream_gap","retryable":true},"extra":1}}"#;
        match decode_frame(line.as_bytes()).unwrap() {
            Frame::Response(Response {
                id: Id::Null,
                outcome: Outcome::Error(e),
            }) => {
                assert_eq!(e.code, -32000);
                assert_eq!(e.structured_reason(), Some(crate::ErrorReason::StreamGap));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn request_with_result_or_error_is_rejected() {
        invalid_with(
            r#"{"jsonrpc":"2.0","id":6,"method":"m","result":1}"#,
            Id::Number(6),
        );
        invalid_with(
            r#"{"jsonrpc":"2.0","id":6,"method":"m","error":{"code":1,"message":"x"}}"#,
            Id::Number(6),
        );
        invalid_with(r#"{"jsonrpc":"2.0","id":6,"method":""}"#, Id::Number(6));
        invalid_with(r#"{"jsonrpc":"2.0","id":6,"method":7}"#, Id::Number(6));
    }

    #[test]
    fn jsonrpc_member_must_be_exactly_2_0() {
        invalid_with(r#"{"id":1,"method":"m"}"#, Id::Number(1));
        invalid_with(r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, Id::Number(1));
        invalid_with(r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#, Id::Number(1));
        invalid_with(r#"{"jsonrpc":null,"id":1,"method":"m"}"#, Id::Number(1));
    }

    #[test]
    fn duplicate_envelope_members_are_an_invalid_request() {
        // Stricter than Go's last-wins decoding: an ambiguous envelope is
        // refused rather than guessed at.
        invalid_with(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#, Id::Null);
        invalid_with(
            r#"{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}"#,
            Id::Null,
        );
    }

    #[test]
    fn unknown_top_level_members_are_tolerated() {
        let frame =
            decode_frame(br#"{"jsonrpc":"2.0","id":1,"method":"m","x-trace":{"a":[1]}}"#).unwrap();
        assert!(matches!(frame, Frame::Request(_)));
    }

    #[test]
    fn non_json_is_a_parse_error_with_null_id() {
        for line in ["{", "not json", "{\"jsonrpc\":\"2.0\"} trailing", "\u{1}"] {
            let r = reject(line);
            assert_eq!(r.kind, RejectionKind::Parse, "{line}");
            assert_eq!(r.id, Id::Null);
            assert_eq!(r.error(), RpcError::parse_error());
        }
        let r = decode_frame(b"\xff\xfe").unwrap_err();
        assert_eq!(r.kind, RejectionKind::Parse);
        // JSON that is not an object is an envelope error, not a parse error.
        invalid_with("[1,2]", Id::Null);
        invalid_with("42", Id::Null);
    }

    #[test]
    fn rejection_answers_are_encoded_without_data() {
        let r = reject(r#"{"jsonrpc":"2.0","id":9,"method":"m","params":[]}"#);
        let line = encode_response(&r.response()).unwrap();
        assert_eq!(
            std::str::from_utf8(&line).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32600,\"message\":\"invalid request\"}}\n"
        );
        let line = encode_response(&reject("nope").response()).unwrap();
        assert_eq!(
            std::str::from_utf8(&line).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}\n"
        );
    }

    #[test]
    fn crlf_whitespace_and_blank_lines() {
        assert_eq!(trim_line(b"\r\n"), None);
        assert_eq!(trim_line(b"   \t\n"), None);
        assert_eq!(trim_line(b""), None);
        assert_eq!(trim_line(b"  {}\r\n"), Some(&b"{}"[..]));
        let frame = decode_frame(b"  {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\r\n").unwrap();
        assert!(matches!(frame, Frame::Notification(_)));
    }

    #[test]
    fn encoder_writes_compact_json_without_html_escaping() {
        let params = serde_json::json!({"text": "<a href=\"x\">&</a>", "n": 1});
        let line = encode_request(Id::Number(1), "extension/intercept", &params).unwrap();
        let text = std::str::from_utf8(&line).unwrap();
        assert!(text.ends_with("}\n"));
        assert!(text.contains("<a href=\\\"x\\\">&</a>"), "{text}");
        assert!(!text.contains(": "));
        let again = decode_frame(&line).unwrap();
        assert_eq!(encode_frame(&again).unwrap(), line);
        let n = encode_notification("extension/initialized", &serde_json::json!({})).unwrap();
        assert_eq!(
            n,
            b"{\"jsonrpc\":\"2.0\",\"method\":\"extension/initialized\",\"params\":{}}\n"
        );
    }

    /// Builds a notification whose encoded line is `total` bytes long.
    fn padded_notification(total: usize) -> Result<Vec<u8>, EncodeError> {
        let overhead = encode_notification("m", &serde_json::json!({"p": ""}))?.len();
        let pad = "x".repeat(total - overhead);
        encode_notification("m", &serde_json::json!({ "p": pad }))
    }

    #[test]
    fn frame_cap_counts_the_newline_exactly() {
        let line = padded_notification(FRAME_BYTES).unwrap();
        assert_eq!(line.len(), FRAME_BYTES);
        assert!(decode_frame(&line).is_ok());
        match padded_notification(FRAME_BYTES + 1) {
            Err(EncodeError::FrameTooLarge { size, limit }) => {
                assert_eq!(size, FRAME_BYTES + 1);
                assert_eq!(limit, FRAME_BYTES);
            }
            other => panic!("{other:?}"),
        }
        assert!(check_frame_size(FRAME_BYTES).is_ok());
        assert!(check_inbound_frame_size(FRAME_BYTES).is_ok());
        let err = check_inbound_frame_size(8_388_685).unwrap_err();
        assert_eq!(
            err.to_string(),
            "inbound frame is 8388685 bytes; limit is 8388608"
        );
        assert!(check_frame_size(FRAME_BYTES + 1).is_err());
    }
}
