//! Refusals: `{"code": …, "error": <english>, "params": {"detail": …}}`
//! with the codes and statuses of PLUGIN_PACKAGES §a.13, and the bounded,
//! typed decoding of request bodies.
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::install::{ErrorCode, InstallError};

/// Request bodies are JSON objects of a few short fields.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A refusal with its HTTP status.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub error: String,
    pub params: Map<String, Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, error: impl Into<String>) -> ApiError {
        let error = error.into();
        let mut params = Map::new();
        params.insert("detail".into(), Value::String(error.clone()));
        ApiError {
            status,
            code,
            error,
            params,
        }
    }

    /// Set `params.detail` (the english `error` stays a summary).
    pub fn detail(mut self, detail: impl Into<String>) -> ApiError {
        self.params
            .insert("detail".into(), Value::String(detail.into()));
        self
    }

    pub fn param(mut self, key: &str, value: impl Into<Value>) -> ApiError {
        self.params.insert(key.into(), value.into());
        self
    }

    /// A backend failure under `code`, keeping its own code and next step.
    pub fn backend(
        status: StatusCode,
        code: &'static str,
        summary: &str,
        e: &InstallError,
    ) -> Self {
        ApiError::new(status, code, format!("{summary}: {}", e.message))
            .detail(e.message.clone())
            .param("errorCode", e.code.as_str())
            .param("next", e.next.clone())
    }

    pub fn bad_name(name: &str) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "plugin.bad_name",
            "that is not a plugin name",
        )
        .detail(format!(
            "{name:?} does not match ^[a-zA-Z0-9][a-zA-Z0-9._-]{{0,63}}$"
        ))
    }

    pub fn not_installed(name: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "plugin.not_installed",
            "that plugin is not installed",
        )
        .detail(format!("plugin {name:?} is not installed"))
    }

    pub fn state_unreadable(e: &InstallError) -> ApiError {
        ApiError::backend(
            StatusCode::INTERNAL_SERVER_ERROR,
            "plugin.state_unreadable",
            "the plugin state cannot be read",
            e,
        )
    }

    pub fn missing_field(field: &str) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "request.missing_field",
            format!("missing {field}"),
        )
        .param("field", field)
    }

    pub fn bad_body(detail: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "request.bad_body",
            "the request body could not be read",
        )
        .detail(detail)
    }

    pub fn internal(detail: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed to carry out the request",
        )
        .detail(detail)
    }
}

/// `plugin.state_unreadable` for an unreadable registry, else `fallback`.
pub fn registry_or(e: &InstallError, fallback: ApiError) -> ApiError {
    if e.code == ErrorCode::RegistryUnreadable {
        ApiError::state_unreadable(e)
    } else {
        fallback
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code, "error": self.error, "params": self.params});
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"reasonix serve\""),
            );
        }
        response
    }
}

/// Read a JSON body of at most [`BODY_LIMIT`] bytes into `T` (whose
/// fields are all optional; required ones are checked by the route so that
/// a missing one is `request.missing_field`). Unknown fields are refused:
/// a client sending a field this server lacks is not saying what it thinks.
pub async fn json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
) -> Result<T, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence != "application/json" {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "request.bad_content_type",
            "the request body must be application/json",
        )
        .detail(format!("Content-Type is {content_type:?}")));
    }
    let bytes = read_limited(body).await?;
    decode(&bytes)
}

/// The body's bytes, refused past [`BODY_LIMIT`] (counted as they
/// arrive, whatever Content-Length claims).
pub async fn read_limited(body: Body) -> Result<Vec<u8>, ApiError> {
    use futures::StreamExt;
    let mut stream = body.into_data_stream();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk
            .map_err(|e| ApiError::bad_body(format!("the body could not be received: {e}")))?;
        if out.len() + chunk.len() > BODY_LIMIT {
            return Err(too_large_error());
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// Bodies larger than the limit.
pub fn too_large_error() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request.too_large",
        format!("the request body is larger than {BODY_LIMIT} bytes"),
    )
    .param("limit", BODY_LIMIT)
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            ApiError::bad_body(inner.to_string())
        } else {
            ApiError::bad_body(format!("{path}: {inner}"))
        }
    })?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Req {
        #[allow(dead_code)]
        name: Option<String>,
    }

    #[test]
    fn decoding_names_the_problem() {
        let e = decode::<Req>(br#"{"nam":"x"}"#).unwrap_err();
        assert_eq!(e.code, "request.bad_body");
        assert!(
            e.params["detail"].as_str().unwrap().contains("nam"),
            "{e:?}"
        );
        let e = decode::<Req>(br#"{"name":1}"#).unwrap_err();
        assert!(
            e.params["detail"].as_str().unwrap().starts_with("name:"),
            "{e:?}"
        );
        assert!(decode::<Req>(b"[").is_err());
        assert!(decode::<Req>(b"{}").is_ok());
    }
}
