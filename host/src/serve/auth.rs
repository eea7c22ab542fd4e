//! Who may talk to the server.
//!
//! This server can install code that runs with the user's full trust, so:
//!
//! - **Host**: on a loopback listener a request must name the listener
//!   (`127.0.0.1:<port>`, `[::1]:<port>` or `localhost:<port>`). A page on
//!   a domain rebound to 127.0.0.1 (DNS rebinding) is refused here.
//! - **Origin**: an API request from a browser must come from this server's
//!   own origin (`http://<Host>`); any other `Origin` (or `null`), and any
//!   request the browser marks `Sec-Fetch-Site: cross-site`, is refused. A
//!   web page the user happens to visit cannot drive the API.
//! - **Token**: every API request carries `Authorization: Bearer <token>`,
//!   a 256-bit token made per launch, printed by `reasonix serve` and written
//!   to `$REASONIX_HOME/serve.token` (mode 0600). It is never accepted from a
//!   cookie or a query string: a cookie would ride along on requests a
//!   foreign page triggers, a query string lands in logs and history.
//!
//! The page itself (`GET /` and `/assets/…`) is static and holds nothing
//! secret, so it is served without the token; it reads the token from the
//! URL fragment (`/#token=…`), which browsers never send to a server nor
//! put in a Referer, keeps it in `sessionStorage` for this tab only, and
//! removes it from the address bar.
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use crate::home::ReasonixHome;

/// File name of the token inside the home.
pub const TOKEN_FILE: &str = "serve.token";

/// A fresh 256-bit token, hex-encoded.
pub fn generate_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(hex::encode(bytes))
}

/// Write the token to `<home>/serve.token`: mode 0600, through a synced
/// temporary sibling and a rename, so a reader never sees half a token.
pub fn write_token_file(home: &ReasonixHome, token: &str) -> std::io::Result<PathBuf> {
    let dir = home.root();
    std::fs::create_dir_all(dir)?;
    let path = dir.join(TOKEN_FILE);
    let mut tmp = tempfile::Builder::new()
        .prefix(".serve.token.tmp-")
        .tempfile_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    tmp.write_all(token.as_bytes())?;
    tmp.write_all(b"\n")?;
    tmp.as_file().sync_all()?;
    tmp.persist(&path).map_err(|e| e.error)?;
    crate::install::snapshot::sync_dir(dir);
    Ok(path)
}

/// Remove the token file at shutdown, unless another server has written
/// its own token there since.
pub fn remove_token_file(home: &ReasonixHome, token: &str) {
    let path = home.root().join(TOKEN_FILE);
    if std::fs::read_to_string(&path).is_ok_and(|t| t.trim() == token) {
        let _ = std::fs::remove_file(&path);
    }
}

/// Compare without an early exit on the first differing byte.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Which `Host` values name this server.
#[derive(Debug, Clone)]
pub enum HostRule {
    /// A loopback listener: only these `host:port` spellings.
    Exact(Vec<String>),
    /// A non-loopback listener (the user chose it and was warned): any
    /// host, but `Origin` must still be `http://<Host>`.
    Any,
}

impl HostRule {
    pub fn for_listener(addr: std::net::SocketAddr) -> HostRule {
        let port = addr.port();
        if !addr.ip().is_loopback() {
            return HostRule::Any;
        }
        let mut hosts = vec![format!("localhost:{port}")];
        hosts.push(match addr.ip() {
            std::net::IpAddr::V4(ip) => format!("{ip}:{port}"),
            std::net::IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        });
        HostRule::Exact(hosts)
    }
}

/// The checks every request passes.
#[derive(Debug)]
pub struct Gate {
    token: String,
    hosts: HostRule,
}

impl Gate {
    pub fn new(token: String, hosts: HostRule) -> Gate {
        Gate { token, hosts }
    }

    fn host<'a>(&self, headers: &'a HeaderMap) -> Result<&'a str, ApiError> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        let known = match &self.hosts {
            HostRule::Any => !host.is_empty(),
            HostRule::Exact(list) => list.iter().any(|h| h.eq_ignore_ascii_case(host)),
        };
        if known {
            Ok(host)
        } else {
            Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "request.bad_host",
                "this server answers only to its own address",
            )
            .detail(format!("Host {host:?} does not name this server")))
        }
    }

    fn origin(&self, headers: &HeaderMap, host: &str) -> Result<(), ApiError> {
        let foreign = |what: String| {
            ApiError::new(
                StatusCode::FORBIDDEN,
                "request.foreign_origin",
                "requests from other web pages are refused",
            )
            .detail(what)
        };
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !origin.eq_ignore_ascii_case(&format!("http://{host}")) {
                return Err(foreign(format!("Origin {origin:?} is not http://{host}")));
            }
        }
        let site = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if site.eq_ignore_ascii_case("cross-site") {
            return Err(foreign("the browser marked the request cross-site".into()));
        }
        Ok(())
    }

    fn token(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            });
        match presented {
            Some(t) if same_secret(t.as_bytes(), self.token.as_bytes()) => Ok(()),
            other => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "auth.unauthorized",
                "a valid bearer token is required",
            )
            .detail(if other.is_some() {
                "the bearer token does not match this server's; it changes at every launch (see $REASONIX_HOME/serve.token)".to_string()
            } else {
                "send Authorization: Bearer <token>, as printed by `reasonix serve` and stored in $REASONIX_HOME/serve.token".to_string()
            })),
        }
    }
}

/// The static page: served without the token.
fn is_page(request: &Request) -> bool {
    let path = request.uri().path();
    matches!(request.method().as_str(), "GET" | "HEAD")
        && (path == "/" || path.starts_with("/assets/"))
}

/// Middleware: Host, then Origin and token for everything but the page,
/// then the security headers on every answer.
pub async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let checked = gate.host(request.headers()).and_then(|host| {
        if is_page(&request) {
            Ok(())
        } else {
            gate.origin(request.headers(), host)
                .and_then(|()| gate.token(request.headers()))
        }
    });
    let mut response = match checked {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    };
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
        ("cache-control", "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_256_bit_and_differ() {
        let a = generate_token().unwrap();
        let b = generate_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"ab"));
    }

    #[test]
    fn loopback_hosts() {
        let HostRule::Exact(v4) = HostRule::for_listener("127.0.0.1:80".parse().unwrap()) else {
            panic!("loopback is exact")
        };
        assert_eq!(v4, ["localhost:80", "127.0.0.1:80"]);
        let HostRule::Exact(v6) = HostRule::for_listener("[::1]:8".parse().unwrap()) else {
            panic!("loopback is exact")
        };
        assert_eq!(v6, ["localhost:8", "[::1]:8"]);
        assert!(matches!(
            HostRule::for_listener("0.0.0.0:1".parse().unwrap()),
            HostRule::Any
        ));
    }

    #[test]
    fn token_file_is_private_and_removed_only_when_ours() {
        let dir = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(dir.path().join("home"));
        let path = write_token_file(&home, "t1").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "t1\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        remove_token_file(&home, "other");
        assert!(path.exists());
        remove_token_file(&home, "t1");
        assert!(!path.exists());
    }
}
