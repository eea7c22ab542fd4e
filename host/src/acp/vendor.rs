//! Reasonix's vendor extensions of ACP (documented in `docs/acp.md`): the
//! method and notification names, the client capability that turns on
//! structured UI, and the decoding of everything a client sends us outside
//! the ACP schema (the vendor method's params, the capability flag, a form's
//! answer).
//!
//! Plain serde, no ACP types: the fuzz target compiles this file on its own.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Client → agent request: reload the extension runtime of one session.
pub const RELOAD_EXTENSIONS: &str = "_reasonix.io/session/reloadExtensions";
/// Agent → client notification: a queued reload ran (applied or failed).
pub const RELOAD_APPLIED: &str = "_reasonix.io/session/reloadApplied";
/// Agent → client notification: an extension published or updated a UI
/// surface (only to clients that advertise [`SURFACE_CAPABILITY`]).
pub const EXTENSION_SURFACE: &str = "_reasonix.io/extensionSurface";
/// Agent → client request: an extension asks the user a form (only to
/// clients that advertise [`SURFACE_CAPABILITY`]).
pub const SURFACE_REQUEST: &str = "_reasonix.io/extensionSurface/request";
/// The key a client sets in `clientCapabilities._meta` to receive surfaces
/// as [`EXTENSION_SURFACE`] notifications instead of text.
pub const SURFACE_CAPABILITY: &str = "reasonix.extensionSurface";

/// The longest session id this agent accepts.
pub const MAX_SESSION_ID: usize = 128;

/// Parameters a client sent that we refuse: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsError {
    /// A JSON path into the params (`sessionId`, `values.name`), or `.`.
    pub path: String,
    pub message: String,
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ParamsError {}

fn decode<T: for<'de> Deserialize<'de>>(value: &Value) -> Result<T, ParamsError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        ParamsError {
            path: if path.is_empty() { ".".into() } else { path },
            message: e.into_inner().to_string(),
        }
    })
}

/// The params of [`RELOAD_EXTENSIONS`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionParams {
    pub session_id: String,
    /// Accepted and ignored, as everywhere in ACP.
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
}

/// Decode and check the params of [`RELOAD_EXTENSIONS`].
pub fn decode_session_params(params: &Value) -> Result<SessionParams, ParamsError> {
    let params: SessionParams = decode(params)?;
    check_session_id(&params.session_id).map_err(|message| ParamsError {
        path: "sessionId".into(),
        message,
    })?;
    Ok(params)
}

/// A session id this agent could have handed out: 1 to
/// [`MAX_SESSION_ID`] of `[A-Za-z0-9._-]`, not starting with a dot. Ids
/// name files under `$REASONIX_HOME/sessions/`, so nothing else is let in.
pub fn check_session_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the session id is empty".into());
    }
    if id.len() > MAX_SESSION_ID {
        return Err(format!(
            "the session id is {} bytes long (at most {MAX_SESSION_ID})",
            id.len()
        ));
    }
    if id.starts_with('.') {
        return Err("a session id does not start with a dot".into());
    }
    if let Some(bad) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "a session id holds only letters, digits, `.`, `_` and `-` (found {bad:?})"
        ));
    }
    Ok(())
}

/// Whether `clientCapabilities._meta` advertises [`SURFACE_CAPABILITY`]:
/// `true` or an object (room for options later) turn it on; absent, `null`
/// and `false` leave it off. Anything else is refused with why, and the
/// caller treats it as off.
pub fn surface_capability(meta: Option<&Map<String, Value>>) -> Result<bool, ParamsError> {
    match meta.and_then(|m| m.get(SURFACE_CAPABILITY)) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(false),
        Some(Value::Bool(true)) | Some(Value::Object(_)) => Ok(true),
        Some(other) => Err(ParamsError {
            path: format!("clientCapabilities._meta.{SURFACE_CAPABILITY}"),
            message: format!("expected true, false or an object, got {other}"),
        }),
    }
}

/// The answer a client gives to [`SURFACE_REQUEST`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FormAnswer {
    #[serde(default)]
    cancelled: bool,
    #[serde(default)]
    values: Option<BTreeMap<String, Value>>,
    #[serde(default, rename = "_meta")]
    #[allow(dead_code)] // accepted and ignored
    meta: Option<Value>,
}

/// One field of the form being answered: its key and whether it is required.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldRule<'a> {
    pub key: &'a str,
    pub required: bool,
}

/// Decode a client's answer to a form: `Ok(None)` when the user cancelled,
/// else the values, which must name fields of the form and cover every
/// required one.
pub fn decode_form_answer(
    answer: &Value,
    fields: &[FieldRule<'_>],
) -> Result<Option<BTreeMap<String, Value>>, ParamsError> {
    let answer: FormAnswer = decode(answer)?;
    if answer.cancelled {
        return Ok(None);
    }
    let Some(values) = answer.values else {
        return Err(ParamsError {
            path: "values".into(),
            message: "missing: answer the fields, or {\"cancelled\": true} to decline".into(),
        });
    };
    if let Some(unknown) = values.keys().find(|k| !fields.iter().any(|f| f.key == *k)) {
        return Err(ParamsError {
            path: format!("values.{unknown}"),
            message: "the form has no such field".into(),
        });
    }
    if let Some(missing) = fields
        .iter()
        .find(|f| f.required && !values.contains_key(f.key))
    {
        return Err(ParamsError {
            path: format!("values.{}", missing.key),
            message: "this field is required".into(),
        });
    }
    Ok(Some(values))
}

/// How a reload went, as [`RELOAD_EXTENSIONS`] answers and
/// [`RELOAD_APPLIED`] tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReloadState {
    /// Swapped in now: the next turn uses `generation`.
    Applied,
    /// A turn is running: exactly one reload runs when it ends.
    Queued,
    /// The new build failed; `generation` (the old one) keeps serving.
    Failed,
}

/// A plugin left out of the new generation, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DegradedPlugin {
    pub plugin: String,
    pub why: String,
}

/// The result of [`RELOAD_EXTENSIONS`], and (with `sessionId`) the params
/// of [`RELOAD_APPLIED`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadAnswer {
    pub outcome: ReloadState,
    /// The generation serving from now on.
    pub generation: u64,
    /// `applied`: the generation it replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_generation: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<DegradedPlugin>,
    /// `failed`: why the new generation was not built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The same, in one line for people.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn session_params_name_the_bad_field() {
        let ok =
            decode_session_params(&json!({"sessionId": "rs-1a2b", "_meta": {"x": 1}})).unwrap();
        assert_eq!(ok.session_id, "rs-1a2b");
        let cases = [
            (json!({}), "."),
            (json!({"sessionId": 7}), "sessionId"),
            (json!({"sessionId": "a", "extra": 1}), "extra"),
            (json!({"sessionId": "../etc/passwd"}), "sessionId"),
            (json!({"sessionId": ".hidden"}), "sessionId"),
            (json!({"sessionId": ""}), "sessionId"),
            (
                json!({"sessionId": "x".repeat(MAX_SESSION_ID + 1)}),
                "sessionId",
            ),
            (json!(null), "."),
            (json!([1]), "[0]"),
        ];
        for (params, path) in cases {
            let error = decode_session_params(&params).unwrap_err();
            assert_eq!(error.path, path, "{params}: {error}");
        }
        assert!(check_session_id(&"x".repeat(MAX_SESSION_ID)).is_ok());
    }

    #[test]
    fn the_surface_capability_is_true_or_an_object() {
        let meta = |v: Value| json!({ SURFACE_CAPABILITY: v }).as_object().cloned();
        assert_eq!(surface_capability(None), Ok(false));
        assert_eq!(surface_capability(meta(json!(true)).as_ref()), Ok(true));
        assert_eq!(surface_capability(meta(json!({"v": 1})).as_ref()), Ok(true));
        assert_eq!(surface_capability(meta(json!(false)).as_ref()), Ok(false));
        assert_eq!(surface_capability(meta(Value::Null).as_ref()), Ok(false));
        let error = surface_capability(meta(json!("yes")).as_ref()).unwrap_err();
        assert!(error.path.ends_with(SURFACE_CAPABILITY), "{error}");
        let other = json!({"zed.dev": true}).as_object().cloned();
        assert_eq!(surface_capability(other.as_ref()), Ok(false));
    }

    #[test]
    fn form_answers_must_fit_the_form() {
        let fields = [
            FieldRule {
                key: "name",
                required: true,
            },
            FieldRule {
                key: "note",
                required: false,
            },
        ];
        assert_eq!(
            decode_form_answer(&json!({"cancelled": true}), &fields),
            Ok(None)
        );
        let values = decode_form_answer(&json!({"values": {"name": "Ada"}}), &fields)
            .unwrap()
            .unwrap();
        assert_eq!(values["name"], "Ada");
        let cases = [
            (json!({}), "values"),
            (json!({"values": {"note": "x"}}), "values.name"),
            (json!({"values": {"name": "A", "age": 3}}), "values.age"),
            (json!({"values": [1]}), "values"),
            (json!({"cancelled": "no"}), "cancelled"),
            (json!({"answer": 1}), "answer"),
        ];
        for (answer, path) in cases {
            let error = decode_form_answer(&answer, &fields).unwrap_err();
            assert_eq!(error.path, path, "{answer}: {error}");
        }
    }

    #[test]
    fn reload_answers_serialise_only_what_applies() {
        let answer = ReloadAnswer {
            outcome: ReloadState::Queued,
            generation: 1,
            previous_generation: None,
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
            degraded: Vec::new(),
            why: None,
            message: "reload queued".into(),
        };
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"outcome": "queued", "generation": 1, "message": "reload queued"})
        );
    }
}
