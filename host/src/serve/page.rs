//! The plugins page: static HTML, CSS and JS embedded in the binary (no
//! build step, no CDN). It holds nothing secret and is served without the
//! token (see `auth`); everything it shows comes from the API.
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

const INDEX: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// Only this server's own scripts, styles and API; no framing, no forms
/// posting elsewhere, no plugins.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn with_type(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    response
}

/// `GET /`
pub async fn index() -> Response {
    with_type(INDEX, "text/html; charset=utf-8")
}

/// `GET /assets/{file}`
pub async fn asset(Path(file): Path<String>) -> Response {
    match file.as_str() {
        "app.js" => with_type(APP_JS, "text/javascript; charset=utf-8"),
        "app.css" => with_type(APP_CSS, "text/css; charset=utf-8"),
        _ => ApiError::new(StatusCode::NOT_FOUND, "request.not_found", "no such asset")
            .into_response(),
    }
}
